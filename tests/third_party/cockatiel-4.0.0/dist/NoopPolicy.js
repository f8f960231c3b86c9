import { neverAbortedSignal } from './common/abort.js';
import { ExecuteWrapper, returnOrThrow } from './common/Executor.js';
/**
 * A no-op policy, useful for unit tests and stubs.
 */
export class NoopPolicy {
    executor = new ExecuteWrapper();
    onSuccess = this.executor.onSuccess;
    onFailure = this.executor.onFailure;
    async execute(fn, signal = neverAbortedSignal) {
        return returnOrThrow(await this.executor.invoke(fn, { signal }));
    }
}

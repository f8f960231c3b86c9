import { onAbort } from './Event.js';
export const neverAbortedSignal = new AbortController().signal;
const cancelledSrc = new AbortController();
cancelledSrc.abort();
export const abortedSignal = cancelledSrc.signal;
const noop = () => { };
/**
 * Creates a new AbortController that is aborted when the parent signal aborts.
 * @private
 */
export const deriveAbortController = (signal) => {
    const ctrl = new AbortController();
    let dispose = noop;
    if (!signal) {
        return { ctrl, dispose };
    }
    if (signal.aborted) {
        ctrl.abort(signal.reason);
    }
    else {
        const abortEvt = onAbort(signal);
        abortEvt.event((reason) => ctrl.abort(reason));
        dispose = abortEvt.dispose;
    }
    return { ctrl, dispose };
};

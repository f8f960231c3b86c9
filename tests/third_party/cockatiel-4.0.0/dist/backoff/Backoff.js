export * from './ConstantBackoff.js';
export * from './DelegateBackoff.js';
export * from './ExponentialBackoff.js';
export * from './ExponentialBackoffGenerators.js';
export * from './IterableBackoff.js';

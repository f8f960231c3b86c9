export * from './ConsecutiveBreaker.js';
export * from './CountBreaker.js';
export * from './SamplingBreaker.js';

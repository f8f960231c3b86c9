export class BulkheadRejectedError extends Error {
    isBulkheadRejectedError = true;
    constructor(executionSlots, queueSlots) {
        super(`Bulkhead capacity exceeded (0/${executionSlots} execution slots, 0/${queueSlots} available)`);
    }
}

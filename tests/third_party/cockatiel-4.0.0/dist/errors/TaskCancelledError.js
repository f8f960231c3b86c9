export class TaskCancelledError extends Error {
    message;
    isTaskCancelledError = true;
    /**
     * Error thrown when a task is cancelled.
     */
    constructor(message = 'Operation cancelled') {
        super(message);
        this.message = message;
    }
}

#pragma once

#include "cb/result.h"

namespace cb::flaky {

// SIGINT and SIGTERM turned into an event a program can wait for, for a process whose job is to
// keep a server running (the flaky-server program, cb-lab's background server).
//
// install() blocks the two signals, so every thread started after it inherits the block, and
// opens a signalfd; wait() reads the signal from it. A program calls install() before it starts
// its threads and before it tells anyone it is ready (the "listening on" line, a readiness
// byte): a supervisor that stops it the instant it reads that line then finds the signal
// pending, not the default action that kills the process by the signal. No handler runs, so
// none can be deferred: ThreadSanitizer holds a handler back until its thread next passes an
// interceptor, which a thread in a blocking call may never do.
class StopSignals {
 public:
  // Errors: the signals cannot be blocked, or the signalfd cannot be opened. Once per process,
  // before it starts any thread.
  [[nodiscard]] static Result<StopSignals> install();
  // Blocks until SIGINT or SIGTERM has arrived (at any time since install()).
  [[nodiscard]] Result<void> wait() const;

 private:
  explicit StopSignals(int read_fd) : read_fd_(read_fd) {}
  int read_fd_ = -1;
};

}  // namespace cb::flaky

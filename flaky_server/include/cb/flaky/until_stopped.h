#pragma once

#include "cb/result.h"

namespace cb::flaky {

// SIGINT and SIGTERM turned into an event a program can wait for, for a process whose job is to
// keep a server running (the flaky-server program, cb-lab's background server).
//
// The handlers are installed by install(), which a program calls before it tells anyone it is
// ready (the "listening on" line, a readiness byte): a supervisor that stops the program the
// instant it reads that line must find the handlers there, or the default action kills the
// process by the signal instead of letting it stop cleanly and exit 0.
//
// A handler writes to a pipe and wait() polls it in short slices: a thread the program did not
// start (ThreadSanitizer has one) may not block the signals, so sigwait could miss them, and
// ThreadSanitizer runs a handler only when the thread next passes one of its interceptors, which
// a single blocking read never would.
class StopSignals {
 public:
  // Errors: the pipe or the handlers cannot be set up. Once per process.
  [[nodiscard]] static Result<StopSignals> install();
  // Blocks until SIGINT or SIGTERM has arrived (at any time since install()).
  [[nodiscard]] Result<void> wait() const;

 private:
  explicit StopSignals(int read_fd) : read_fd_(read_fd) {}
  int read_fd_ = -1;
};

}  // namespace cb::flaky

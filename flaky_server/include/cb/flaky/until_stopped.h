#pragma once

#include "cb/result.h"

namespace cb::flaky {

// Blocks until SIGINT or SIGTERM, for a process whose job is to keep a server running (the
// flaky-server program, cb-lab's background server). A handler writes to a pipe and this waits
// on it in short polls: a thread the program did not start (ThreadSanitizer has one) may not
// block the signals, so sigwait could miss them, and ThreadSanitizer runs a handler only when the
// thread next passes one of its interceptors, which a single blocking read never would.
[[nodiscard]] Result<void> wait_for_stop_signal();

}  // namespace cb::flaky

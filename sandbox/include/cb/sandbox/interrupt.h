#pragma once
// A grader stopped by SIGINT, SIGTERM or SIGHUP (Ctrl-C, a CI job cancelled, a closed terminal)
// ends every program it started and removes every box it holds before it exits, as it would
// had it finished: nothing of a submission is left running or on disk.

#include <functional>

namespace cb::sandbox {

// Call first in main, before any thread starts: the three signals are blocked in this thread
// (and so in every thread started after it) and a thread of their own waits for them. On one,
// `program: interrupted: ...` on standard error, the programs are ended, the boxes removed, and
// the process exits with 128 + the signal. The sandbox's children start with no signal blocked.
void stop_cleanly_on_signals(const char* program);

// What the stopping thread does last, once the programs are ended and the boxes removed, before
// the exit: a batch writes the gradebook of what it finished. Set before the work it speaks for;
// empty: nothing.
void set_last_words(std::function<void()> words);

// What that thread does, for a caller that has its own way of hearing a stop.
void end_everything() noexcept;

// Once a stop has begun, any other thread that gets here waits for the process to end: the
// program it was running was killed by the stop, not by its own doing, and nothing may be graded,
// written or exited with on that. The sandbox calls it where a run ends and a box is let go;
// main calls it before it returns, so its exit code never beats the stop's.
void wait_if_stopping() noexcept;

}  // namespace cb::sandbox

#pragma once
// The programs running now in this grader (--batch runs several at once): registered between
// the clone and the first moment a reaper could see them, so that an orphan left by one program
// is never taken for another program still running.

#include <sys/types.h>

#include <mutex>

namespace cb::sandbox::children {

[[nodiscard]] std::unique_lock<std::mutex> lock();
void add(pid_t pid);  // with the lock held
// Every program running now, with its process group and whatever it left with this grader (a
// child subreaper), killed and reaped: the grader is stopping.
void end_all() noexcept;

}  // namespace cb::sandbox::children

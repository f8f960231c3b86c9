#pragma once
// The programs running now in this grader (--batch runs several at once): registered between
// the clone and the first moment a reaper could see them, so that an orphan left by one program
// is never taken for another program still running.

#include <sys/types.h>

#include <mutex>

namespace cb::sandbox::children {

[[nodiscard]] std::unique_lock<std::mutex> lock();
void add(pid_t pid);  // with the lock held

}  // namespace cb::sandbox::children

#pragma once
// A uid of the box's own while the box lives, when the grader is root. Leased through a lock
// file per uid under /run (root's alone), so two graders on one machine (two terminals, tests
// in parallel) never hand the same uid to two boxes at once. A uid is only ever used by its
// leaseholder, so whatever still runs as it when it is leased is a leftover of a grader that
// died, and is killed.

#include <sys/types.h>

#include <memory>

#include "cb/result.h"

namespace cb::sandbox {

class UidLease {
 public:
  [[nodiscard]] static Result<std::unique_ptr<UidLease>> take(uid_t first, unsigned count);
  ~UidLease();
  UidLease(const UidLease&) = delete;
  UidLease& operator=(const UidLease&) = delete;
  [[nodiscard]] uid_t uid() const noexcept { return uid_; }

 private:
  UidLease(uid_t uid, int fd) : uid_(uid), fd_(fd) {}
  uid_t uid_;
  int fd_;
};

// Kills every process running as `uid` (not root), and waits until none is left (at most two
// seconds: a uid that forks faster than it dies). False if some were still there.
bool kill_uid(uid_t uid);

}  // namespace cb::sandbox

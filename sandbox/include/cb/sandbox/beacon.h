#pragma once
// How the project's own programs know they run inside a grading box, whatever the program in the
// box did to its environment, its folder or its name for them: the box's system-call filter answers
// one impossible call (close() of a descriptor number no process has) with an error the kernel
// never gives for it. A filter cannot be removed by the process it holds, nor by its children.
//
// The harness (cb-lab, cb-grade) asks at start and refuses to run in a box: a program graded there
// could otherwise hand the grader's questions to the project's own engine, from wherever in its
// view a copy is installed. A grading that lets a student hand in the harness itself
// (refuse_prebuilt none: Policy::harness_may_answer) builds its boxes without the beacon.

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cb::sandbox {

inline constexpr int kBeaconFd = -0x5cb1;         // negative: the kernel says EBADF outside a box
inline constexpr int kBeaconErrno = EKEYREVOKED;  // what no close() ever fails with

[[nodiscard]] inline bool inside_a_box() noexcept {
  const int saved = errno;
  const long rc = ::syscall(SYS_close, kBeaconFd);
  const bool boxed = rc == -1 && errno == kBeaconErrno;
  errno = saved;
  return boxed;
}

// The line the harness prints, and exits non-zero after, when it finds itself in a box.
inline constexpr const char* kRefusedInBox =
    "refuses to run inside a grading box: the conformance part grades the student's own breaker, not the "
    "harness's";

}  // namespace cb::sandbox

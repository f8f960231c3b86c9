// What the sandbox costs a program start: `exit 0` started and waited for, 100 times, in each
// kind of containment, in a box over an empty folder. Prints the median and the 90th percentile
// in milliseconds (bench/run-sandbox-bench; docs/PERFORMANCE.md).
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cb/sandbox/sandbox.h"

namespace {

using Clock = std::chrono::steady_clock;

int measure(cb::sandbox::Mode mode, const char* name, int runs) {
  char dir[] = "/tmp/cb-bench-sub.XXXXXX";
  if (::mkdtemp(dir) == nullptr) return 1;
  cb::sandbox::Policy policy;
  policy.mode = mode;
  cb::sandbox::Sandbox sandbox(policy);
  auto box = sandbox.box(dir, "");
  if (!box) {
    std::fprintf(stderr, "%s: %s\n", name, box.error().message.c_str());
    return 1;
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    cb::sandbox::Program p;
    p.command = "exit 0";
    const auto t0 = Clock::now();
    auto child = sandbox.start(**box, p);
    if (!child) {
      std::fprintf(stderr, "%s: %s\n", name, child.error().message.c_str());
      return 1;
    }
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child->pid, 0));
    while (!cb::sandbox::reap_if_exited(*child)) {
      pollfd pfd{pidfd, POLLIN, 0};
      ::poll(&pfd, 1, 100);
    }
    (void)cb::sandbox::end_child(*child);
    ::close(pidfd);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-11s start + exit of `exit 0`: median %.2f ms, p90 %.2f ms (%d runs; %s)\n", name, ms[ms.size() / 2],
              ms[ms.size() * 9 / 10], runs, sandbox.containment(**box).describe().substr(0, 60).c_str());
  box->reset();
  ::rmdir(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 100;
  int rc = 0;
  rc |= measure(cb::sandbox::Mode::Strict, "namespaces", runs);
  rc |= measure(cb::sandbox::Mode::Fallback, "fallback", runs);
  rc |= measure(cb::sandbox::Mode::None, "none", runs);
  return rc;
}

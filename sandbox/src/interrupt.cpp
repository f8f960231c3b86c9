#include "cb/sandbox/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "cb/sandbox/box.h"
#include "children.h"

namespace cb::sandbox {

void end_everything() noexcept {
  // The programs first (their namespaces, process groups, and what they left with the grader
  // as their subreaper), then the boxes, whose teardown ends what is left of their uid or group.
  children::end_all();
  live_boxes::tear_down_all();
}

void stop_cleanly_on_signals(const char* program) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, program] {
    int sig = 0;
    while (::sigwait(&set, &sig) != 0) {
    }
    std::fprintf(stderr, "%s: interrupted (%s): ending the graded programs and removing their boxes\n", program,
                 ::strsignal(sig));
    end_everything();
    std::fflush(nullptr);
    ::_exit(128 + sig);
  }).detach();
}

}  // namespace cb::sandbox

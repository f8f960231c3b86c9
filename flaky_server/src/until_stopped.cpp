#include "cb/flaky/until_stopped.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cb::flaky {
namespace {

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

Error os_error(const char* what) { return Error{std::string(what) + ": " + std::strerror(errno)}; }

}  // namespace

Result<StopSignals> StopSignals::install() {
  // Blocked in this thread from here on, and so in every thread it starts after (the server's
  // workers): the signals stay pending for the process, with no handler to run, until wait()
  // reads them from a signalfd. A handler would have to run on whichever thread the kernel
  // picked, and ThreadSanitizer defers a handler until that thread next passes one of its
  // interceptors, which a thread in a blocking call may never do. (A blocked signal is queued
  // even where the parent left it ignored.)
  const sigset_t stop = stop_set();
  if (::pthread_sigmask(SIG_BLOCK, &stop, nullptr) != 0) return os_error("cannot block the stop signals");
  const int fd = ::signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return os_error("cannot open a signalfd for the stop signals");
  return StopSignals{fd};
}

Result<void> StopSignals::wait() const {
  for (;;) {
    // Short slices, so a ThreadSanitizer build keeps passing through its interceptors.
    pollfd p{read_fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, 100);
    if (n > 0) {
      signalfd_siginfo info{};
      if (::read(read_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) return {};
    }
    if (n < 0 && errno != EINTR) return os_error("cannot wait for a stop signal");
  }
}

}  // namespace cb::flaky

#include "cb/flaky/until_stopped.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cb::flaky {
namespace {

int g_stop_pipe = -1;

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  const char byte = static_cast<char>(sig);
  (void)!::write(g_stop_pipe, &byte, 1);
  errno = saved;
}

Error os_error(const char* what) { return Error{std::string(what) + ": " + std::strerror(errno)}; }

}  // namespace

Result<StopSignals> StopSignals::install() {
  int fds[2];
  // Non-blocking write end: a handler must never block, even if a flood of signals filled the
  // pipe (one byte is all wait() needs).
  if (::pipe2(fds, O_CLOEXEC) != 0) return os_error("cannot create a pipe for signals");
  if (::fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) return os_error("cannot set up the signal pipe");
  g_stop_pipe = fds[1];
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (::sigaction(SIGINT, &sa, nullptr) != 0 || ::sigaction(SIGTERM, &sa, nullptr) != 0)
    return os_error("cannot install the stop-signal handlers");
  // A parent may have started us with the signals blocked (a blocked signal stays blocked
  // across exec); unblock them here, in the thread that installs the handlers.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::pthread_sigmask(SIG_UNBLOCK, &stop, nullptr);
  return StopSignals{fds[0]};
}

Result<void> StopSignals::wait() const {
  for (;;) {
    pollfd p{read_fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, 100);
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return os_error("cannot wait for a stop signal");
  }
}

}  // namespace cb::flaky

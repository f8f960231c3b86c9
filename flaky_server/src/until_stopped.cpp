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
  const char byte = static_cast<char>(sig);
  (void)!::write(g_stop_pipe, &byte, 1);
}

}  // namespace

Result<void> wait_for_stop_signal() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error{std::string("cannot create a pipe for signals: ") + std::strerror(errno)};
  g_stop_pipe = fds[1];
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) return {};
  }
}

}  // namespace cb::flaky

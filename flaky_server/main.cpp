// flaky-server: the lab's unreliable downstream, and its witness.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cb/decimal_time.h"
#include "cb/flaky/server.h"

namespace {

// The write end of a pipe the signal handler writes the signal number to. A handler rather than
// sigwait with blocked signals: a thread the program did not start (a sanitizer's, a library's)
// may not have the signals blocked, and the kernel can deliver to it.
int g_signal_pipe = -1;

extern "C" void on_stop_signal(int sig) {
  const char byte = static_cast<char>(sig);
  (void)!::write(g_signal_pipe, &byte, 1);
}

enum class ExitCode : int { Ok = 0, Failed = 1, Usage = 2 };

int fail(const std::string& message) {
  std::cerr << "flaky-server: " << message << '\n';
  return static_cast<int>(ExitCode::Usage);
}

}  // namespace

int main(int argc, char** argv) {
  cb::flaky::ServerOptions o;
  std::string toggle = "4s";
  std::string hang = "60s";
  std::string slow = "3500ms";
  CLI::App app{"flaky-server: the circuit-breaker lab's unreliable downstream, with a record of every request",
               "flaky-server"};
  app.add_option("--host", o.host, "Address to listen on (loopback unless --allow-remote)")->capture_default_str();
  app.add_option("--port", o.port, "Port (0: any free port; the 'listening on' line says which)")
      ->capture_default_str();
  app.add_flag("--allow-remote", o.allow_remote, "Allow a --host that is not loopback");
  app.add_option("--toggle-period", toggle, "/toggle switches between healthy and 500 this often")
      ->capture_default_str();
  app.add_option("--slow-default", slow, "/slow without ?ms= answers after this long")->capture_default_str();
  app.add_option("--hang-limit", hang, "/hang closes a connection nobody gave up on after this long")
      ->capture_default_str();
  app.add_option("--record-size", o.record_capacity, "Requests the record keeps (older ones are dropped)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Worker threads (each open connection holds one)")->capture_default_str();
  app.add_flag("--log", o.access_log, "Access log on stderr, one line per request");
  app.footer(
      "Endpoints: /fast /always500 /bad /count  /slow?ms=N /hang /toggle /status/NNN /reset /garbage\n"
      "Admin (not counted): GET /admin/record?since=S&limit=L, POST /admin/reset, GET /admin/health");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::Usage);
  }
  for (auto [flag, text, field] : {std::tuple{"--toggle-period", &toggle, &o.toggle_period},
                                   std::tuple{"--hang-limit", &hang, &o.hang_limit},
                                   std::tuple{"--slow-default", &slow, &o.slow_default}}) {
    auto d = cb::parse_duration(*text);
    if (!d) return fail(std::string(flag) + ": " + d.error().message);
    *field = *d;
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fail("cannot create a pipe for signals");
  g_signal_pipe = pipe_fds[1];
  struct sigaction stop_action {};
  stop_action.sa_handler = on_stop_signal;
  sigemptyset(&stop_action.sa_mask);
  stop_action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &stop_action, nullptr);
  ::sigaction(SIGTERM, &stop_action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  auto server = cb::flaky::FlakyServer::start(o);
  if (!server) return fail(server.error().message);
  std::printf("listening on %s\n", (*server)->url().c_str());
  std::fflush(stdout);

  // Waits in short polls rather than one blocking read: ThreadSanitizer runs a signal's handler
  // only when the thread next passes through one of its interceptors, and a read that never
  // returns would never get there. In a normal build the handler's write wakes the poll at once.
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) break;
  }
  (*server)->stop();
  return static_cast<int>(ExitCode::Ok);
}

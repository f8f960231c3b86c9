#include "cb/lab/server_control.h"

#include "cb/flaky/until_stopped.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

namespace cb::lab {
namespace {

using namespace std::chrono_literals;

}  // namespace

Probe probe(const ServerUrl& server, std::chrono::milliseconds timeout) {
  const HttpAnswer a = http_request(server, "GET", "/admin/health", timeout);
  switch (a.observation.origin) {
    case classify::Origin::ConnectRefused: return {Probe::Kind::NothingListens, a.detail};
    case classify::Origin::Timeout: return {Probe::Kind::NoAnswer, a.detail};
    case classify::Origin::Response: {
      const auto j = nlohmann::json::parse(a.body, nullptr, false);
      if (a.observation.status == 200 && j.is_object() && j.value("status", "") == "ok") return {Probe::Kind::Flaky, {}};
      return {Probe::Kind::NotFlaky, "GET /admin/health answered " + std::to_string(a.observation.status)};
    }
    case classify::Origin::ConnectionReset:
    case classify::Origin::MalformedResponse: return {Probe::Kind::NotFlaky, a.detail};
  }
  return {Probe::Kind::NoAnswer, a.detail};
}

Probe wait_until_ready(const ServerUrl& server, std::chrono::milliseconds total) {
  const auto until = std::chrono::steady_clock::now() + total;
  for (;;) {
    Probe p = probe(server);
    if (p.kind == Probe::Kind::Flaky || std::chrono::steady_clock::now() >= until) return p;
    std::this_thread::sleep_for(20ms);  // a bounded wait for readiness, not a pace
  }
}

Result<std::unique_ptr<flaky::FlakyServer>> start_here(const ServerUrl& server) {
  flaky::ServerOptions o;
  o.host = server.host;
  o.port = server.port;
  return flaky::FlakyServer::start(o);
}

Result<int> start_in_background(const ServerUrl& server, const std::string& log_path) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  // Whatever this process has buffered for its own output must not be written twice.
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    // The daemon: a session of its own (a Ctrl-C in the terminal does not reach it), no
    // terminal, its log in a file.
    ::close(ready[0]);
    ::setsid();
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) log = ::open("/dev/null", O_WRONLY | O_CLOEXEC);  // never the person's terminal
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::signal(SIGPIPE, SIG_IGN);
    // Before the readiness byte: cb-lab may stop this server the moment it reads it.
    auto stop = flaky::StopSignals::install();
    flaky::ServerOptions o;
    o.host = server.host;
    o.port = server.port;
    o.access_log = true;
    auto started = flaky::FlakyServer::start(o);
    const char status = started && stop ? 'y' : 'n';
    if (status != 'y') {
      const std::string why = (stop ? started.error().message : stop.error().message) + "\n";
      (void)!::write(ready[1], &status, 1);
      (void)!::write(ready[1], why.data(), why.size());
      ::_exit(2);
    }
    (void)!::write(ready[1], &status, 1);
    ::close(ready[1]);
    (void)stop->wait();
    (*started)->stop();
    ::_exit(0);
  }
  ::close(ready[1]);
  char status = 'n';
  std::string why;
  pollfd p{ready[0], POLLIN, 0};
  if (::poll(&p, 1, 5000) > 0 && ::read(ready[0], &status, 1) == 1 && status != 'y') {
    char buf[512];
    const ssize_t n = ::read(ready[0], buf, sizeof buf);
    if (n > 0) why.assign(buf, static_cast<std::size_t>(n) - 1);
  }
  ::close(ready[0]);
  if (status != 'y') {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Error{why.empty() ? "the background flaky server did not start" : why};
  }
  return static_cast<int>(pid);
}

}  // namespace cb::lab

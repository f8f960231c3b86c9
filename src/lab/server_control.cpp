#include "cb/lab/server_control.h"

#include "cb/flaky/until_stopped.h"
#include "cb/flaky/endpoints.h"
#include "cb/process_title.h"

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
  const HttpAnswer a = http_request(server, "GET", std::string(flaky::path::kAdminHealth), timeout);
  switch (a.observation.origin) {
    case classify::Origin::ConnectRefused: return {Probe::Kind::NothingListens, a.detail};
    case classify::Origin::Timeout: return {Probe::Kind::NoAnswer, a.detail};
    case classify::Origin::Response: {
      const auto j = nlohmann::json::parse(a.body, nullptr, false);
      if (a.observation.status == 200 && j.is_object() && j.value("status", "") == "ok")
        return {Probe::Kind::Flaky, {}};
      return {Probe::Kind::NotFlaky,
              "GET " + std::string(flaky::path::kAdminHealth) + " answered " + std::to_string(a.observation.status)};
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

Result<std::unique_ptr<flaky::FlakyServer>> start_here(const flaky::ServerOptions& options) {
  return flaky::FlakyServer::start(options);
}

Result<BackgroundServer> start_in_background(const flaky::ServerOptions& options, const std::string& log_path) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  // Whatever this process has buffered for its own output must not be written twice.
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    // The daemon: a session of its own (a Ctrl-C in the terminal does not reach it), no
    // terminal, its log in a file.
    // A daemon keeps no descriptor it was handed: one it inherited by mistake (the write end
    // of a pipe whose reader waits for EOF, like `cb-lab step 1 | tee`) would stay open for as
    // long as the server runs.
    ::close_range(3, static_cast<unsigned>(ready[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(ready[1]) + 1, ~0U, 0);
    ::setsid();
    int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) log = ::open("/dev/null", O_WRONLY | O_CLOEXEC);  // never the person's terminal
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::signal(SIGPIPE, SIG_IGN);
    // Before the readiness line: cb-lab may stop this server the moment it reads it.
    auto stop = flaky::StopSignals::install();
    flaky::ServerOptions o = options;
    o.access_log = true;
    auto started = flaky::FlakyServer::start(o);
    if (started) set_process_title("flaky-server " + o.host + ":" + std::to_string((*started)->port()) + " (cb-lab's)");
    // "y PORT\n" when serving, else "n WHY\n".
    const std::string line = started && stop ? "y " + std::to_string((*started)->port()) + "\n"
                                             : "n " + (stop ? started.error().message : stop.error().message) + "\n";
    (void)!::write(ready[1], line.data(), line.size());
    if (line[0] != 'y') ::_exit(2);
    ::close(ready[1]);
    (void)stop->wait();
    (*started)->stop();
    ::_exit(0);
  }
  ::close(ready[1]);
  std::string line;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{ready[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[512];
    const ssize_t n = ::read(ready[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  ::close(ready[0]);
  if (line.size() < 3 || line[0] != 'y') {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    const auto end = line.find('\n');
    return Error{line.size() > 2 && end != std::string::npos ? line.substr(2, end - 2)
                                                             : "the background flaky server did not start"};
  }
  return BackgroundServer{static_cast<int>(pid), std::atoi(line.c_str() + 2)};
}

Result<ServerInUse> use_server(const ServerWish& wish) {
  ServerInUse use;
  const auto start_at = [&](const ServerUrl& at) -> Result<void> {
    flaky::ServerOptions o = wish.options;
    o.host = at.host;
    o.port = at.port;
    if (wish.background) {
      auto bg = start_in_background(o, wish.log_path);
      if (!bg) return bg.error();
      use.background_pid = bg->pid;
      use.url = ServerUrl{at.host, bg->port};
    } else {
      auto here = start_here(o);
      if (!here) return here.error();
      use.url = ServerUrl{at.host, (*here)->port()};
      use.own = std::move(here).value();
    }
    use.probe = wait_until_ready(use.url);
    return {};
  };
  const char* started =
      wish.background ? "the bundled server, started in the background" : "the bundled server, started for this run";
  if (wish.named) {
    use.url = *wish.named;
    use.probe = probe(use.url);
    if (use.probe.kind != Probe::Kind::NothingListens) {
      use.how = "as named";
      return use;
    }
    if (!flaky::is_loopback(use.url.host))
      return Error{"nothing listens at " + use.url.text() + ", and cb-lab starts a server only on this machine"};
    if (auto s = start_at(use.url); !s)
      return Error{"nothing listens at " + use.url.text() +
                   ", and the bundled server cannot start there: " + s.error().message};
    use.how = std::string(started) + " where named";
    return use;
  }
  // Our own. The preferred address when it is free; a free port when it is taken (or is not on
  // this machine): a server already there belongs to someone, with a record that is theirs.
  // Whether it is free is learnt by binding it, never by asking what listens there: a grader's
  // server keeps even a refused request in its record, and would charge it to the program it is
  // grading.
  ServerUrl at = wish.preferred;
  if (!flaky::is_loopback(at.host)) at = ServerUrl{"127.0.0.1", at.port};
  if (start_at(at)) {
    use.how = started;
    return use;
  }
  const int taken = at.port;
  at.port = 0;
  if (auto s = start_at(at); !s)
    return Error{"the bundled server cannot start on " + at.host + ": " + s.error().message};
  use.how = std::string(started) + ", on a free port: " + std::to_string(taken) + " is in use";
  return use;
}

}  // namespace cb::lab

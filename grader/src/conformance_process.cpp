// A program on the conformance line protocol, driven over pipes (see conformance_traces.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cb/grade/conformance_traces.h"

namespace cb::grade::conformance {
namespace {

using Clock = std::chrono::steady_clock;

// One line from `fd` within `until`, or nullopt (timed out, closed, or longer than 4 KiB).
std::optional<std::string> read_line(int fd, std::string& buffer, Clock::time_point until) {
  for (;;) {
    if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (buffer.size() > 4096) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) != 1) return std::nullopt;
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<Answer> parse_answer(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto d = j.find("decision");
  const auto s = j.find("state");
  if (d == j.end() || s == j.end() || !d->is_string() || !s->is_string()) return std::nullopt;
  Answer a;
  const std::string decision = d->get<std::string>();
  const std::string state = s->get<std::string>();
  if (decision == "permitted") a.decision = Decision::Permitted;
  else if (decision == "rejected") a.decision = Decision::Rejected;
  else return std::nullopt;
  if (state == "CLOSED") a.state = State::Closed;
  else if (state == "OPEN") a.state = State::Open;
  else if (state == "HALF_OPEN") a.state = State::HalfOpen;
  else return std::nullopt;
  return a;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::string settings_line(const Settings& s) {
  return "{\"window\":" + std::to_string(s.window) + ",\"minimum_calls\":" + std::to_string(s.minimum_calls) +
         ",\"failure_rate_percent\":" + std::to_string(s.failure_rate_percent) + ",\"wait_in_open_ms\":" +
         number(s.wait_in_open_ms) + ",\"permitted_in_half_open\":" + std::to_string(s.permitted_in_half_open) + "}";
}

std::string call_line(const Call& c) {
  return "{\"t_ms\":" + number(c.t_ms) + ",\"result\":" + (c.timed_out ? std::string("\"timeout\"") : std::to_string(c.status)) +
         "}";
}

Program process_program(const std::string& command, std::chrono::milliseconds per_call) {
  return [command, per_call](const Trace& trace) {
    std::vector<Answer> answers;
    // One socket pair as the child's standard input and output: MSG_NOSIGNAL then keeps a child
    // that exits early from killing the grader with SIGPIPE, without touching its signal setup.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return answers;
    // Built before the fork: the child only calls async-signal-safe functions.
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::dup2(sv[1], 0);
      ::dup2(sv[1], 1);
      ::execv("/bin/sh", const_cast<char* const*>(argv));
      ::_exit(127);
    }
    ::close(sv[1]);
    if (pid > 0) {
      std::string buffer;
      auto send = [&](const std::string& line) {
        const std::string out = line + "\n";
        return ::send(sv[0], out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
      };
      if (send(settings_line(trace.settings))) {
        for (const Call& c : trace.calls) {
          if (!send(call_line(c))) break;
          const auto line = read_line(sv[0], buffer, Clock::now() + per_call);
          if (!line) break;
          const auto a = parse_answer(*line);
          if (!a) break;
          answers.push_back(*a);
        }
      }
      ::shutdown(sv[0], SHUT_WR);  // the end of the input
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(sv[0]);
    return answers;
  };
}

}  // namespace cb::grade::conformance

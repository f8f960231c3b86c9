// A program on the conformance line protocol, driven over pipes (see conformance_traces.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cb/grade/conformance_traces.h"
#include "output_tail.h"

namespace cb::grade::conformance {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<Answer> parse_answer(const std::string& line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto d = j.find("decision");
  const auto s = j.find("state");
  if (d == j.end() || s == j.end() || !d->is_string() || !s->is_string()) return std::nullopt;
  Answer a;
  const std::string decision = d->get<std::string>();
  const std::string state = s->get<std::string>();
  if (decision == "permitted")
    a.decision = Decision::Permitted;
  else if (decision == "rejected")
    a.decision = Decision::Rejected;
  else
    return std::nullopt;
  if (state == "CLOSED")
    a.state = State::Closed;
  else if (state == "OPEN")
    a.state = State::Open;
  else if (state == "HALF_OPEN")
    a.state = State::HalfOpen;
  else
    return std::nullopt;
  return a;
}

}  // namespace

std::string ms_text(double t_ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t_ms);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string settings_line(const Settings& s) {
  return "{\"window\":" + std::to_string(s.window) + ",\"minimum_calls\":" + std::to_string(s.minimum_calls) +
         ",\"failure_rate_percent\":" + std::to_string(s.failure_rate_percent) +
         ",\"wait_in_open_ms\":" + ms_text(s.wait_in_open_ms) +
         ",\"permitted_in_half_open\":" + std::to_string(s.permitted_in_half_open) + "}";
}

std::string call_line(const Call& c) {
  return "{\"t_ms\":" + ms_text(c.t_ms) +
         ",\"result\":" + (c.timed_out ? std::string("\"timeout\"") : std::to_string(c.status)) + "}";
}

namespace {

// One run of the program on one trace: its answers on a socket pair (both its standard input
// and output: MSG_NOSIGNAL then keeps a program that exits early from killing the grader with
// SIGPIPE, without touching the grader's signal set-up), its standard error on a pipe, kept
// for the report.
class Session {
 public:
  Session(const ProcessOptions& o, Replies& out, std::chrono::milliseconds limit)
      : o_(o), out_(out), limit_(limit), until_(Clock::now() + limit) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    for (int fd : {io_, err_, pidfd_})
      if (fd >= 0) ::close(fd);
  }

  bool start() {
    int sv[2];
    int err[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return fail("cannot make a socket pair");
    if (::pipe2(err, O_CLOEXEC) != 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      return fail("cannot make a pipe");
    }
    io_ = sv[0];
    err_ = err[0];
    sandbox::Program program;
    program.command = o_.command;
    program.in_fd = sv[1];
    program.out_fd = sv[1];
    program.err_fd = err[1];
    auto child = o_.sandbox->start(*o_.box, program);
    ::close(sv[1]);
    ::close(err[1]);
    if (!child) return fail(child.error().message);
    child_ = *child;
    // Readable once the program exits, so a wait for output also ends at its exit.
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, child_.pid, 0));
    return true;
  }

  bool send(const std::string& line) {
    const std::string out = line + "\n";
    if (::send(io_, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size())) return true;
    return fail("stopped reading its input" + ended());
  }

  // The next line the program prints, within the trace's time limit.
  std::optional<std::string> line() {
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buffer_.size() > 4096) return fail("printed a line longer than 4 KiB"), std::nullopt;
      if (!io_open_) return fail("closed its output" + ended()), std::nullopt;
      const Pumped p = pump();
      if (p == Pumped::Limit)
        return fail("gave no answer within " + limit() + ", the time limit of one trace"), std::nullopt;
      if (p == Pumped::Exited) return fail("exited without answering" + ended()), std::nullopt;
    }
  }

  // The end of the input: the program must print nothing more and exit 0. What it prints
  // meanwhile is read, so it cannot block on a full socket instead of exiting.
  void finish() {
    ::shutdown(io_, SHUT_WR);
    while (!sandbox::reap_if_exited(child_) && pump() != Pumped::Limit) {
    }
    while (pump(/*wait=*/false) == Pumped::Read) {
    }
    if (!buffer_.empty())
      fail("printed more lines than there were calls");
    else if (!child_.reaped)
      fail("did not exit within " + limit() + ", the time limit of one trace");
    else if (child_.exit_code() != 0)
      fail("exited with " + std::to_string(child_.exit_code()) + " at the end of its input");
  }

  void end() {
    if (!sandbox::end_child(child_) && out_.problem.empty()) fail("left a process behind that could not be stopped");
    // What it wrote to standard error before it ended, read to the end now that nothing is left
    // to write more: a trace can end before a single read of it (a program that exits before its
    // first line is sent), and its last words are what the report needs most.
    for (int reads = 0; err_ >= 0 && reads < 1024 && pump(/*wait=*/false) == Pumped::Read; ++reads) {
    }
    out_.stderr_tail = tail_.take();
  }

 private:
  bool fail(const std::string& problem) {
    if (out_.problem.empty()) out_.problem = problem;
    return false;
  }

  std::string limit() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", std::chrono::duration<double>(limit_).count());
    return buf;
  }

  // ", exited with 1", once the program is known to have exited; a little grace for it to do so.
  std::string ended() {
    wait_exit(std::chrono::milliseconds{200});
    return sandbox::reap_if_exited(child_) ? " (it exited with " + std::to_string(child_.exit_code()) + ")" : "";
  }

  void wait_exit(std::chrono::milliseconds grace) {
    const auto stop = std::min(until_, Clock::now() + grace);
    while (!sandbox::reap_if_exited(child_) && Clock::now() < stop) {
      pollfd p{pidfd_, POLLIN, 0};
      ::poll(&p, 1, pidfd_ >= 0 ? 10 : 1);
    }
  }

  enum class Pumped { Read, Exited, Limit, Nothing };

  // Reads what there is on either stream, or waits (until the time limit) for something to
  // read or for the program's exit. Without waiting: Nothing when there is nothing to read.
  Pumped pump(bool wait = true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until_ - Clock::now()).count();
    if (wait && left <= 0) return Pumped::Limit;
    // Without a pidfd (a kernel before 5.3) the exit is noticed by polling every 10 ms.
    const int timeout = !wait         ? 0
                        : pidfd_ >= 0 ? static_cast<int>(left)
                                      : static_cast<int>(std::min<long long>(left, 10));
    pollfd p[3] = {{io_open_ ? io_ : -1, POLLIN, 0}, {err_, POLLIN, 0}, {wait ? pidfd_ : -1, POLLIN, 0}};
    const int ready = ::poll(p, 3, timeout);
    if (ready < 0) return errno == EINTR ? Pumped::Read : Pumped::Limit;
    if (ready == 0) return !wait ? Pumped::Nothing : sandbox::reap_if_exited(child_) ? Pumped::Exited : Pumped::Read;
    char buf[4096];
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::read(io_, buf, sizeof buf);
      if (n > 0)
        buffer_.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        io_open_ = false;
    }
    if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::read(err_, buf, sizeof buf);
      if (n > 0)
        tail_.add(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) {
        ::close(err_);
        err_ = -1;
      }
    }
    // Only the exit was ready: everything it wrote before it is already read.
    return (p[0].revents | p[1].revents) != 0 ? Pumped::Read : Pumped::Exited;
  }

  const ProcessOptions& o_;
  Replies& out_;
  std::chrono::milliseconds limit_;
  Clock::time_point until_;
  sandbox::Child child_;
  int io_ = -1;
  int err_ = -1;
  int pidfd_ = -1;
  bool io_open_ = true;
  std::string buffer_;
  OutputTail tail_;
};

std::string quoted(std::string line) {
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + line + "'";
}

}  // namespace

Program process_program(const ProcessOptions& options) {
  // Set once any trace has finished: from then on the program has had its first start.
  auto warmed = std::make_shared<std::atomic<bool>>(false);
  return [options, warmed](const Trace& trace) {
    Replies replies;
    Session session(options, replies, warmed->load() ? options.trace_limit : options.trace_limit + options.warm_up);
    if (!session.start()) return replies;
    bool whole = session.send(settings_line(trace.settings));
    for (std::size_t i = 0; whole && i < trace.calls.size(); ++i) {
      whole = session.send(call_line(trace.calls[i]));
      const auto line = whole ? session.line() : std::nullopt;
      const auto a = line ? parse_answer(*line) : std::nullopt;
      if (line && !a) {
        replies.problem =
            "answered " + quoted(*line) +
            ", which is not {\"decision\": \"permitted\" or \"rejected\", \"state\": \"CLOSED\", \"OPEN\" or "
            "\"HALF_OPEN\"}";
      }
      whole = a.has_value();
      if (a) replies.answers.push_back(*a);
    }
    if (whole) session.finish();
    session.end();
    warmed->store(true);
    return replies;
  };
}

}  // namespace cb::grade::conformance

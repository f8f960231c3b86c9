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
#include <cstring>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include "cb/grade/conformance_process.h"
#include "cb/grade/output_tail.h"
#include "cb/sandbox/cgroup.h"

namespace cb::grade::conformance {
namespace {

using Clock = std::chrono::steady_clock;

struct Parsed {
  Answer answer;
  bool many = false;       // "traces": "many": it takes the next trace's settings after the last answer
  bool in_flight = false;  // "in_flight": true: it takes calls that begin and end apart
};

// The answer to a line of `phase`: an End's is only the state (its call was let through when it
// began), any other's a decision and the state.
std::optional<Parsed> parse_answer(const std::string& line, Phase phase) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto d = j.find("decision");
  const auto s = j.find("state");
  if (s == j.end() || !s->is_string()) return std::nullopt;
  Parsed p;
  Answer& a = p.answer;
  const std::string state = s->get<std::string>();
  if (phase != Phase::End) {
    if (d == j.end() || !d->is_string()) return std::nullopt;
    const std::string decision = d->get<std::string>();
    if (decision == "permitted")
      a.decision = Decision::Permitted;
    else if (decision == "rejected")
      a.decision = Decision::Rejected;
    else
      return std::nullopt;
  }
  if (state == "CLOSED")
    a.state = State::Closed;
  else if (state == "OPEN")
    a.state = State::Open;
  else if (state == "HALF_OPEN")
    a.state = State::HalfOpen;
  else
    return std::nullopt;
  const auto many = j.find("traces");
  p.many = many != j.end() && many->is_string() && many->get<std::string>() == "many";
  const auto in_flight = j.find("in_flight");
  p.in_flight = in_flight != j.end() && in_flight->is_boolean() && in_flight->get<bool>();
  return p;
}

}  // namespace

std::string settings_line(const Settings& s) {
  return "{\"window\":" + std::to_string(s.window) + ",\"minimum_calls\":" + std::to_string(s.minimum_calls) +
         ",\"failure_rate_percent\":" + std::to_string(s.failure_rate_percent) +
         ",\"wait_in_open_ms\":" + ms_text(s.wait_in_open_ms) +
         ",\"permitted_in_half_open\":" + std::to_string(s.permitted_in_half_open) + "}";
}

std::string call_line(const Call& c) {
  const std::string t = "{\"t_ms\":" + ms_text(c.t_ms);
  const std::string result =
      ",\"result\":" + (c.timed_out ? std::string("\"timeout\"") : std::to_string(c.status)) + "}";
  switch (c.phase) {
    case Phase::Begin: return t + ",\"begin\":" + std::to_string(c.id) + "}";
    case Phase::End: return t + ",\"end\":" + std::to_string(c.id) + result;
    case Phase::Whole: break;
  }
  return t + result;
}

namespace {

// Processes are started from one thread that lives as long as their pool: the sandbox has the
// kernel kill a program when the thread that started it ends (PR_SET_PDEATHSIG belongs to a
// thread, not to the process), and a process that answers many traces outlives the thread of the
// trace that started it (check_conformance runs traces side by side on threads of their own).
class Launcher {
 public:
  Launcher() : thread_([this] { loop(); }) {}
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;
  ~Launcher() {
    {
      const std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  Result<sandbox::Child, sandbox::StartError> start(sandbox::Sandbox& sb, const sandbox::Box& box,
                                                    const sandbox::Program& program) {
    std::packaged_task<Result<sandbox::Child, sandbox::StartError>()> task([&] { return sb.start(box, program); });
    auto started = task.get_future();
    {
      const std::lock_guard lock(mu_);
      queue_.push_back(std::move(task));
    }
    wake_.notify_one();
    return started.get();
  }

 private:
  void loop() {
    for (;;) {
      std::packaged_task<Result<sandbox::Child, sandbox::StartError>()> task;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<Result<sandbox::Child, sandbox::StartError>()>> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the rest is ready
};

// One process of the program: its answers on a socket pair (both its standard input and
// output: MSG_NOSIGNAL then keeps a program that exits early from killing the grader with
// SIGPIPE, without touching the grader's signal set-up), its standard error on a pipe, kept for
// the report. It answers one trace, or, when it says it can, one after another.
class Session {
 public:
  Session(const ProcessOptions& o, Launcher& launcher) : o_(o), launcher_(launcher) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (child_.pid > 0 && !child_.reaped) (void)sandbox::end_child(child_);
    for (int fd : {io_, err_, pidfd_})
      if (fd >= 0) ::close(fd);
  }

  // A new trace: what goes wrong in it goes to `out`, and it must be over within `limit`.
  // `warm_up`: the part of `limit` given to a first trace, for a program that builds itself.
  void begin(Replies& out, std::chrono::milliseconds limit, std::chrono::milliseconds warm_up = {}) {
    out_ = &out;
    limit_ = limit;
    warm_up_ = warm_up;
    until_ = Clock::now() + limit;
    began_ = Clock::now();
    cpu_from_ = cgroup() != nullptr ? cgroup()->cpu_time() : std::nullopt;
    out.shared = traces_ > 0;
    ++traces_;
  }

  [[nodiscard]] int traces() const noexcept { return traces_; }
  [[nodiscard]] bool many() const noexcept { return many_; }
  void said_many() noexcept { many_ = true; }

  bool start() {
    int sv[2];
    int err[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      return graders("cannot make a socket pair: " + std::string(std::strerror(errno)));
    if (::pipe2(err, O_CLOEXEC) != 0) {
      const int e = errno;
      ::close(sv[0]);
      ::close(sv[1]);
      return graders("cannot make a pipe: " + std::string(std::strerror(e)));
    }
    io_ = sv[0];
    err_ = err[0];
    sandbox::Program program;
    program.command = o_.command;
    program.in_fd = sv[1];
    program.out_fd = sv[1];
    program.err_fd = err[1];
    auto child = launcher_.start(*o_.sandbox, *o_.box, program);
    ::close(sv[1]);
    ::close(err[1]);
    if (!child) {
      // What the box already runs (the program's own processes, up to its limit) is the
      // program's doing: this trace fails on it, as a fork of its own would have.
      if (child.error().box_full) return fail("could not be started: " + child.error().message);
      return graders(child.error().message);
    }
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
      if (p == Pumped::Limit) {
        out_->timed_out = true;
        if (starved()) return std::nullopt;
        return fail("gave no answer within " + limit_said()), std::nullopt;
      }
      if (p == Pumped::Exited) return fail("exited without answering" + ended()), std::nullopt;
    }
  }

  // Between two traces of one process: the last trace must not have left lines unread (an
  // answer too many would be taken for the next trace's first).
  bool between() {
    while (pump(/*wait=*/false) == Pumped::Read) {
    }
    if (!buffer_.empty()) return fail("printed more lines than there were calls");
    out_->stderr_tail = tail_.take();
    return true;
  }

  // The end of the input: the program must print nothing more and exit 0. What it prints
  // meanwhile is read, so it cannot block on a full socket instead of exiting.
  void finish() {
    ::shutdown(io_, SHUT_WR);
    while (!sandbox::reap_if_exited(child_) && pump() != Pumped::Limit) {
    }
    while (pump(/*wait=*/false) == Pumped::Read) {
    }
    if (!buffer_.empty()) {
      fail("printed more lines than there were calls");
    } else if (!child_.reaped) {
      out_->timed_out = true;
      if (!starved()) fail("did not exit within " + limit_said());
    } else if (child_.exit_code() != 0) {
      fail("exited with " + std::to_string(child_.exit_code()) + " at the end of its input");
    }
  }

  void end() {
    if (!sandbox::end_child(child_) && out_->problem.empty()) fail("left a process behind that could not be stopped");
    // What it wrote to standard error before it ended, read to the end now that nothing is left
    // to write more: a trace can end before a single read of it (a program that exits before its
    // first line is sent), and its last words are what the report needs most.
    for (int reads = 0; err_ >= 0 && reads < 1024 && pump(/*wait=*/false) == Pumped::Read; ++reads) {
    }
    out_->stderr_tail = tail_.take();
  }

 private:
  bool fail(const std::string& problem) {
    if (out_->problem.empty()) out_->problem = problem;
    return false;
  }

  // The grader's own failure to start the program: said as a problem, and told to the grading.
  bool graders(const std::string& why) {
    if (o_.grader_failed) o_.grader_failed(why);
    return fail("the grader could not start it: " + why);
  }

  [[nodiscard]] const sandbox::BoxCgroup* cgroup() const { return o_.box != nullptr ? o_.box->cgroup() : nullptr; }

  // A trace out of time while the machine kept the box from the CPU shows nothing of the
  // program (sandbox::starved): said as the trace's problem, and told to the grading as the
  // grader's failure, to be graded again.
  bool starved() {
    const std::string how = sandbox::starved_since(cgroup(), cpu_from_, began_);
    if (how.empty()) return false;
    const std::string why =
        "a trace ran out of its " + limit_said() + " while the machine kept the box from the CPU (" + how + ")";
    if (o_.grader_failed) o_.grader_failed(why);
    fail(why);
    return true;
  }

  // "5 s, the time limit of one trace"; a first trace's says what its time was for.
  std::string limit_said() const {
    const auto s = [](std::chrono::milliseconds d) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g s", std::chrono::duration<double>(d).count());
      return std::string(buf);
    };
    if (warm_up_.count() == 0) return s(limit_) + ", the time limit of one trace";
    return s(limit_) + ", the time limit of a first trace (" + s(limit_ - warm_up_) + ", and " + s(warm_up_) +
           " more for a program that builds itself as it starts: one that builds longer should be built before it "
           "is run, or given more with --warm-up)";
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
  Launcher& launcher_;
  Replies* out_ = nullptr;
  std::chrono::milliseconds limit_{};
  std::chrono::milliseconds warm_up_{};
  Clock::time_point until_;
  Clock::time_point began_;
  std::optional<sandbox::CpuTime> cpu_from_;  // the box's CPU when the trace began (where the kernel counts it)
  sandbox::Child child_;
  int io_ = -1;
  int err_ = -1;
  int pidfd_ = -1;
  bool io_open_ = true;
  bool many_ = false;
  int traces_ = 0;
  std::string buffer_;
  OutputTail tail_;
};

std::string quoted(std::string line) {
  if (line.size() > 80) line = line.substr(0, 77) + "...";
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + line + "'";
}

// Feeds `trace` to `s` and reads its answers into `replies`. True when the whole trace was
// answered as the protocol says, so the process may take another.
//
// A program that takes many traces is sent the rest of a trace at once instead of a call after
// each answer: the answers are the same (the right one never depends on a later call), and a
// round trip per trace instead of per call is what makes 200 traces take a fraction of a
// second (a round trip between two processes costs tens of microseconds here, and a trace has up
// to 120 calls). A trace is a few kilobytes, far under what the socket holds, so neither side
// waits on the other while it is sent; a longer one is sent call by call.
bool answer(Session& s, const Trace& trace, Replies& replies) {
  constexpr std::size_t kAtOnce = 64 * 1024;
  bool whole = s.send(settings_line(trace.settings));
  std::size_t sent = 0;  // calls sent so far
  for (std::size_t i = 0; whole && i < trace.calls.size(); ++i) {
    if (sent == i && s.many()) {
      std::string rest;
      for (std::size_t k = i; k < trace.calls.size() && rest.size() < kAtOnce; ++k)
        rest += call_line(trace.calls[k]) + "\n";
      if (rest.size() < kAtOnce) {
        rest.pop_back();  // send() ends it
        whole = s.send(rest);
        sent = trace.calls.size();
      }
    }
    if (sent == i) {
      whole = whole && s.send(call_line(trace.calls[i]));
      ++sent;
    }
    const auto line = whole ? s.line() : std::nullopt;
    const Phase phase = trace.calls[i].phase;
    const auto a = line ? parse_answer(*line, phase) : std::nullopt;
    if (line && !a) {
      replies.problem = "answered " + quoted(*line) + ", which is not {" +
                        (phase == Phase::End ? "" : "\"decision\": \"permitted\" or \"rejected\", ") +
                        "\"state\": \"CLOSED\", \"OPEN\" or \"HALF_OPEN\"}";
    }
    whole = a.has_value();
    if (!a) break;
    // Only the first answer of a process counts: a program cannot change its mind halfway.
    if (s.traces() == 1 && i == 0 && a->many) s.said_many();
    if (s.traces() == 1 && i == 0 && a->in_flight) replies.in_flight = true;
    replies.answers.push_back(a->answer);
  }
  return whole;
}

// The processes of one grading: the idle ones that take many traces, and how many were started.
struct Pool {
  explicit Pool(ProcessOptions o) : options(std::move(o)) {}
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    // Idle processes are between traces: each is ended as a trace's end would end it.
    for (auto& s : idle) {
      Replies ignored;
      s->begin(ignored, options.trace_limit);
      s->end();
    }
  }

  std::chrono::milliseconds warm_up() const { return warmed.load() ? std::chrono::milliseconds{} : options.warm_up; }
  std::chrono::milliseconds limit() const { return options.trace_limit + warm_up(); }

  std::unique_ptr<Session> take() {
    const std::lock_guard lock(mu);
    if (idle.empty()) return nullptr;
    auto s = std::move(idle.back());
    idle.pop_back();
    return s;
  }

  void give_back(std::unique_ptr<Session> s) {
    const std::lock_guard lock(mu);
    idle.push_back(std::move(s));
  }

  // One trace on `s` (a process taken from the pool, or nullptr: a new one). The process goes
  // back to the pool when it can take another trace, and ends otherwise.
  Replies trace_on(std::unique_ptr<Session> s, const Trace& trace, bool keep) {
    Replies replies;
    const bool fresh = s == nullptr;
    if (fresh) s = std::make_unique<Session>(options, launcher);
    s->begin(replies, limit(), warm_up());
    if (fresh) {
      ++started;
      if (!s->start()) {
        s->end();
        return replies;
      }
    }
    const bool whole = answer(*s, trace, replies);
    if (whole && keep && s->many() && s->traces() < options.traces_per_process && s->between()) {
      replies.open = true;
      give_back(std::move(s));
    } else {
      if (whole) s->finish();
      s->end();
    }
    warmed.store(true);
    return replies;
  }

  const ProcessOptions options;
  Launcher launcher;  // before the processes: it outlives them
  std::mutex mu;
  std::vector<std::unique_ptr<Session>> idle;
  // Set once any trace has finished: from then on the program has had its first start.
  std::atomic<bool> warmed{false};
  std::atomic<int> started{0};
};

}  // namespace

Programs process_programs(const ProcessOptions& options) {
  auto pool = std::make_shared<Pool>(options);
  Programs p;
  p.run = [pool](const Trace& trace) { return pool->trace_on(pool->take(), trace, /*keep=*/true); };
  p.alone = [pool](const Trace& trace) { return pool->trace_on(nullptr, trace, /*keep=*/false); };
  p.processes = [pool] { return pool->started.load(); };
  return p;
}

}  // namespace cb::grade::conformance

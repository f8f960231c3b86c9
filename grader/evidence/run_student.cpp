#include "cb/grade/run_student.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <atomic>
#include <memory>
#include <optional>
#include <cerrno>
#include <cstring>

#include "cb/atomic_file.h"
#include "cb/random_bytes.h"
#include "cb/flaky/server.h"
#include "cb/grade/files.h"
#include "cb/grade/lab_spec.h"
#include "cb/sandbox/cgroup.h"
#include "cb/sandbox/peer.h"
#include "cb/grade/output_tail.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {
namespace {

using Clock = std::chrono::steady_clock;

// How often a box without a tmpfs of its size is counted while its program runs: a program that
// writes 1 GB/s is past the limit by at most this much writing when it is stopped.
constexpr std::chrono::milliseconds kBoxCountEvery{100};
// At the time limit a program is asked for its threads' stacks (SIGQUIT: a JVM and a Go program
// print them) and killed this long after: one that printed nothing still says where it was.
constexpr std::chrono::milliseconds kStacksGrace{1000};

// Connections a graded program may hold open to its server at once.
constexpr int kMaxProgramConnections = 256;

// A secret the grader alone knows, for the fresh server's admin endpoints.
std::string admin_token() {
  std::string hex;
  for (const char c : random_bytes(16)) {
    const auto b = static_cast<unsigned char>(c);
    hex += "0123456789abcdef"[b >> 4U];
    hex += "0123456789abcdef"[b & 15U];
  }
  return hex;
}

// The record read from the server itself, not over the network: in the full sandbox the
// server's socket is in the program's network, which the grader is not in.
Result<Record> record_in(flaky::FlakyServer& server, std::size_t capacity) {
  return grade::record_of(server.record().read(0, capacity));
}

std::string url_of(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// Who reached the server besides the program: connections refused, and whether the kernel could
// be asked at all.
struct Peers {
  std::atomic<std::size_t> foreign{0};
  std::atomic<bool> unknowable{false};
};

// The server's admission on the machine's network, which other programs share: with a uid of its
// own, the program's connections are told from theirs by who owns the other end, and only its are
// served. A peer the kernel cannot name (it closed before it was accepted) gets no answer it could
// read either way, so it is let in: what it sent is the program's as far as anyone can tell.
std::function<bool(int)> admit_only(uid_t uid, const std::shared_ptr<Peers>& peers) {
  return [uid, peers](int fd) {
    const auto owner = sandbox::peer_uid(fd);
    if (!owner) {
      // The kernel cannot be asked at all: let in, and the record is not called the program's
      // alone. A lookup that failed for this connection only (its peer reset it before it was
      // accepted) is refused: whoever it was, they get no answer.
      if (!sandbox::peer_diagnostics_available()) {
        peers->unknowable.store(true, std::memory_order_relaxed);
        return true;
      }
      peers->foreign.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (!*owner || **owner == uid) return true;
    peers->foreign.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
}

// The server on the machine's network: at the lab's port, or where that is taken, a free one
// (announced in CB_SERVER).
Result<std::unique_ptr<flaky::FlakyServer>> start_on_machine(flaky::ServerOptions options) {
  auto started = flaky::FlakyServer::start(options);
  if (started || options.port == 0) return started;
  options.port = 0;
  return flaky::FlakyServer::start(options);
}

// What is still in the pipe (written just before the exit) belongs to the output too; a poll
// before each read, so a pipe some straggler still holds open cannot block it.
void drain(int fd, OutputTail& tail) {
  char buf[4096];
  for (pollfd p{fd, POLLIN, 0}; ::poll(&p, 1, 0) > 0;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    tail.add(buf, static_cast<std::size_t>(n));
  }
}

// The box's group is shared by all its programs: what a run cost is the difference of two.
sandbox::CgroupCounts counts_of(const sandbox::Box& box) {
  return box.cgroup() != nullptr ? box.cgroup()->counts() : sandbox::CgroupCounts{};
}

// Whether a kill for memory was the box's own limit: the kernel says so (v2's memory.events
// "oom"), or the box held within a sixteenth of its limit at its peak (v1 kernels no longer count
// memory.failcnt). Without a peak to read, the box's limit is taken to be the one.
bool reached_own_limit(const sandbox::CgroupCounts& before, const sandbox::CgroupCounts& now, std::uint64_t limit) {
  if (now.own_limit_reached > before.own_limit_reached || now.memory_peak == 0) return true;
  return limit != sandbox::kUnlimited && now.memory_peak >= limit - limit / 16;
}

// Whether the box's TCP buffers came to its memory limit during the run (v1 counts them apart:
// their peak, within a sixteenth of the limit, as for memory).
bool socket_limit_reached(const sandbox::CgroupCounts& before, const sandbox::CgroupCounts& now, std::uint64_t limit) {
  if (limit == sandbox::kUnlimited) return false;
  const std::uint64_t near = limit - limit / 16;
  return now.socket_peak >= near && before.socket_peak < near;
}

// A counted box (no tmpfs of its size) past its size: what a walk of it finds, and the files its
// processes hold open whose names are gone, which no walk finds.
bool past_box_size(const sandbox::Box& box, const sandbox::Child& child, std::uint64_t limit) {
  const auto used = box.usage();
  return used && (used->over || used->bytes + sandbox::unlinked_bytes_held(child) > limit);
}

// Which limit ended the run, if one did: the kernel's word beats what the program said (an
// out-of-memory kill leaves no message). `before`: the box's group's counts before the run.
sandbox::LimitHit limit_that_ended(const RunOutcome& out, const sandbox::Sandbox& sandbox, const sandbox::Box& box,
                                   const sandbox::Child& child, int status, bool box_over,
                                   const sandbox::CgroupCounts& before) {
  sandbox::LimitHit hit = sandbox::LimitHit::None;
  if (!out.timed_out && out.containment.kind != sandbox::Kind::None)
    hit = sandbox::limit_hit(sandbox.policy().limits, status, child.cpu_used(), out.output_tail);
  if (box_over || (box.bounded() && box.full() && hit == sandbox::LimitHit::None)) hit = sandbox::LimitHit::BoxSize;
  if (box.cgroup() != nullptr && !out.timed_out) {
    const sandbox::CgroupCounts now = box.cgroup()->counts();
    if (now.oom_kills > before.oom_kills)
      hit = reached_own_limit(before, now, sandbox.policy().limits.memory_bytes) ? sandbox::LimitHit::Memory
                                                                                 : sandbox::LimitHit::OutsideMemory;
    else if (now.pids_refused > before.pids_refused && out.exit_code != 0 && hit == sandbox::LimitHit::None)
      hit = sandbox::LimitHit::Processes;
    else if (hit == sandbox::LimitHit::None && socket_limit_reached(before, now, sandbox.policy().limits.memory_bytes))
      hit = sandbox::LimitHit::Memory;
  }
  return hit;
}

}  // namespace

SandboxInfo sandbox_info(const sandbox::Containment& c) {
  SandboxInfo info;
  info.containment = std::string(sandbox::to_string(c.kind));
  info.trusted = c.trusted();
  info.description = c.describe();
  const sandbox::Limits& l = c.limits;
  info.details = {
      {"uid", c.uid},
      {"uid_inside", c.uid_inside},
      {"own_uid", c.own_uid},
      {"user_namespace", c.user_namespace},
      {"own_network", c.own_network},
      {"seccomp", c.seccomp},
      {"landlock_abi", c.landlock_abi},
      {"memory_bound", c.memory_bound()},
      {"no_cgroup_why", c.no_cgroup_why.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.no_cgroup_why)},
      {"why", c.why.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.why)},
      {"limits",
       {{"memory_bytes",
         l.memory_bytes == sandbox::kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(l.memory_bytes)},
        {"processes", l.processes},
        {"open_files", l.open_files},
        {"file_bytes", l.file_bytes},
        {"cpu_seconds", l.cpu.count()},
        {"tmp_bytes", l.tmp_bytes},
        {"box_bytes", l.box_bytes},
        {"box_files", l.box_files}}},
      {"box_bound", c.kind == sandbox::Kind::None ? "none"
                    : c.box_tmpfs                 ? "tmpfs"
                                                  : "counted"}};
  return info;
}

Result<void> clear_lab_files(const DirHandle& dir, const LabSpec& spec) {
  for (std::string_view file : spec.files.all()) {
    const std::string name(file);
    // unlinkat removes a symbolic link itself, never what it points to.
    if (::unlinkat(dir.fd(), name.c_str(), 0) != 0 && errno != ENOENT) {
      if (errno == EISDIR || errno == EPERM) continue;  // a directory of that name is graded as such
      return Error{dir.path() + "/" + name + ": cannot remove before the run: " + std::strerror(errno)};
    }
  }
  return {};
}

ProgramRun program_run(const RunOutcome& ran, std::chrono::milliseconds limit) {
  return ProgramRun{ran.seconds,
                    ran.exit_code,
                    ran.timed_out,
                    std::chrono::duration<double>(limit).count(),
                    ran.limit_hit == sandbox::LimitHit::None ? "" : std::string(sandbox::to_string(ran.limit_hit)),
                    sandbox::describe(ran.containment.limits, ran.limit_hit, ran.containment.cgroup_version > 0)};
}

Result<void> copy_lab_files(const SubmissionDir& from, const DirHandle& to, const LabSpec& spec) {
  for (std::string_view file : spec.files.all()) {
    const std::string name(file);
    const FileRead read = from.read(name);
    if (read.found != FileRead::Found::Ok) continue;
    if (auto w = to.write(name, read.bytes); !w) return w.error();
  }
  return {};
}

namespace {

// The fresh server a lab run calls, one of the grader's own.
flaky::ServerOptions lab_server_options(const RunOptions& o) {
  flaky::ServerOptions server_options;
  server_options.host = o.host;
  server_options.port = o.port;
  server_options.threads = o.server_threads;
  server_options.admin_token = admin_token();
  // A lab program holds a handful of connections and reads its answers: the grader's memory is
  // bounded however many it opens and never reads (256 x (64 KiB out + 64 KiB in), 32 MiB), and so
  // is the kernel's for it: pipelined requests it never reads the answers to wait in buffers of
  // 128 KiB each way (256 x 256 KiB, 64 MiB), not the megabytes a buffer grows to on its own.
  server_options.max_connections = kMaxProgramConnections;
  server_options.max_pending_output = 64 << 10;
  server_options.socket_buffer_bytes = 64 << 10;
  return server_options;
}

}  // namespace

Result<RunOutcome> run_student(const RunOptions& o, sandbox::Sandbox& sandbox, const sandbox::Box& box) {
  auto out_dir = box.out_handle();
  if (!out_dir) return out_dir.error();
  if (auto cleared = clear_lab_files(*out_dir, o.spec ? *o.spec : lab_spec()); !cleared) return cleared.error();
  RunOutcome out;
  out.containment = sandbox.containment(box);

  flaky::ServerOptions server_options = lab_server_options(o);
  std::unique_ptr<flaky::FlakyServer> server;
  auto peers = std::make_shared<Peers>();

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  sandbox::Program program;
  program.command = o.command;
  program.out_fd = pipe_fds[1];
  program.err_fd = pipe_fds[1];
  if (out.containment.kind == sandbox::Kind::Namespaces) {
    // Its own network: the handout's address is always free there, so "any free port" is that one.
    const int port = o.port == 0 ? flaky::kDefaultPort : o.port;
    out.server_url = url_of(o.host, port);
    program.listen =
        sandbox::Program::Listen{o.host, port, [&](int fd) -> Result<void> {
                                   auto options = server_options;
                                   options.listen_fd = fd;
                                   auto started = flaky::FlakyServer::start(options);
                                   if (!started)
                                     return Error{"cannot start the flaky server: " + started.error().message};
                                   server = std::move(started).value();
                                   return {};
                                 }};
  } else {
    if (out.containment.own_uid) server_options.admit = admit_only(out.containment.uid, peers);
    auto started = start_on_machine(server_options);
    if (!started) {
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      return Error{"cannot start the flaky server: " + started.error().message};
    }
    server = std::move(started).value();
    out.server_url = server->url();
    program.connect_port = server->port();
  }
  // PYTHONUNBUFFERED: a Python program killed at the limit keeps what it printed for the report.
  program.env = {"CB_SERVER=" + out.server_url, "CB_DIR=" + sandbox.visible_out(box), "PYTHONUNBUFFERED=1"};

  const sandbox::CgroupCounts counted_before = counts_of(box);
  const auto started = Clock::now();
  auto child = sandbox.start(box, program);
  ::close(pipe_fds[1]);
  if (!child) {
    ::close(pipe_fds[0]);
    return Error{child.error().message};
  }
  const pid_t pid = child->pid;
  const auto deadline = started + o.timeout;
  // A pidfd becomes readable when the child exits, so one poll waits for output, the exit and
  // the time limit together. (Without one, from a kernel before 5.3: short polls.)
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool open_pipe = true;
  char buf[4096];
  OutputTail tail;
  // Without a tmpfs of its size, the box is counted while the program runs, and the program
  // stopped when it is past it.
  const bool count_box = !box.bounded() && out.containment.kind != sandbox::Kind::None;
  auto next_count = Clock::now();
  bool box_over = false;
  const auto stop = [&] {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);  // in a namespace, its process 1: the kernel ends all the rest
  };
  std::optional<Clock::time_point> kill_at;  // asked for its stacks; killed then
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !out.timed_out && !box_over) {
      out.timed_out = true;
      out.starved = sandbox::starved_since(box.cgroup(), counted_before.cpu, started);
      ::kill(-pid, SIGQUIT);
      kill_at = Clock::now() + kStacksGrace;
    }
    if (kill_at && Clock::now() >= *kill_at) {
      kill_at.reset();
      // Its first process may have ended of the SIGQUIT: its group's number is then no longer
      // ours to signal, and end_child stops what is left.
      if (child->reaped) break;
      stop();
    }
    if (count_box && !box_over && !out.timed_out && Clock::now() >= next_count) {
      next_count = Clock::now() + kBoxCountEvery;
      if (past_box_size(box, *child, sandbox.policy().limits.box_bytes)) {
        box_over = true;
        stop();
      }
    }
    pollfd p[2] = {{open_pipe ? pipe_fds[0] : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const long long most = count_box ? kBoxCountEvery.count() : pidfd >= 0 ? 60'000 : 10;
    const int wait_ms = out.timed_out || box_over ? 10 : static_cast<int>(std::clamp<long long>(left, 1, most));
    if (::poll(p, 2, wait_ms) > 0 && (p[0].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
      if (n > 0) tail.add(buf, static_cast<std::size_t>(n));
      if (n == 0) open_pipe = false;
    }
    // Within the grace, what the rest of it prints is read to the end (or to the kill).
    if (sandbox::reap_if_exited(*child) && !(kill_at && open_pipe)) break;
  }
  const int status = child->status;
  out.survivors = !sandbox::end_child(*child);
  if (open_pipe) drain(pipe_fds[0], tail);
  if (pidfd >= 0) ::close(pidfd);
  ::close(pipe_fds[0]);
  out.exit_code = child->exit_code();
  out.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  out.output_tail = tail.take();
  out.limit_hit = limit_that_ended(out, sandbox, box, *child, status, box_over, counted_before);
  out.record = record_in(*server, server_options.record_capacity);
  server->stop();
  out.foreign_connections = peers->foreign.load();
  out.record_private = out.containment.own_network || (out.containment.own_uid && !peers->unknowable.load());
  return out;
}

}  // namespace cb::grade

#include "cb/grade/run_student.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cb/atomic_file.h"
#include "cb/flaky/server.h"
#include "child_process.h"

namespace cb::grade {
namespace {

using Clock = std::chrono::steady_clock;

// A secret the grader alone knows, for the fresh server's admin endpoints.
std::string admin_token() {
  unsigned char raw[16] = {};
  std::size_t got = 0;
  while (got < sizeof raw) {
    const ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
    else if (errno != EINTR) break;
  }
  std::string hex;
  for (unsigned char c : raw) {
    const char* digits = "0123456789abcdef";
    hex += digits[c >> 4U];
    hex += digits[c & 15U];
  }
  return hex;
}

}  // namespace

Result<void> clear_lab_files(const std::string& dir) {
  for (const char* name : {"state.json", "fastfail.txt", "ignore4xx.json", "transitions.log"}) {
    const std::string path = dir + "/" + name;
    // unlink removes a symbolic link itself, never what it points to.
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      if (errno == EISDIR || errno == EPERM) continue;  // a directory of that name is graded as such
      return Error{path + ": cannot remove before the run: " + std::strerror(errno)};
    }
  }
  return {};
}

Result<RunOutcome> run_student(const RunOptions& o) {
  if (auto made = make_directories(o.out_dir); !made) return made.error();
  if (auto cleared = clear_lab_files(o.out_dir); !cleared) return cleared.error();

  flaky::ServerOptions server_options;
  server_options.host = o.host;
  server_options.port = o.port;
  server_options.threads = o.server_threads;
  server_options.admin_token = admin_token();
  auto server = flaky::FlakyServer::start(server_options);
  if (!server && o.port != 0) {  // the lab's port is taken: a free one, announced in CB_SERVER
    server_options.port = 0;
    server = flaky::FlakyServer::start(server_options);
  }
  if (!server) return Error{"cannot start the flaky server: " + server.error().message};

  RunOutcome out;
  out.server_url = (*server)->url();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};

  // The write end without O_CLOEXEC is made by dup2 in the child; the original stays close-on-exec.
  // CB_DIR absolute: the command runs in `cwd`, where a relative path (--batch with a relative
  // ROOT gives one) would name another directory than the one graded.
  std::error_code ec;
  const auto out_dir = std::filesystem::absolute(o.out_dir, ec);
  ChildPlan plan(o.command, {"CB_SERVER=" + out.server_url, "CB_DIR=" + (ec ? o.out_dir : out_dir.string())}, o.cwd);
  plan.out_fd = pipe_fds[1];
  plan.err_fd = pipe_fds[1];

  const auto started = Clock::now();
  auto child = start_child(plan, o.pid_namespace);
  ::close(pipe_fds[1]);
  if (!child) {
    ::close(pipe_fds[0]);
    return child.error();
  }
  const pid_t pid = child->pid;

  const auto deadline = started + o.timeout;
  // A pidfd becomes readable when the child exits, so one poll waits for output, the exit and
  // the time limit together. (Without one, from a kernel before 5.3: short polls.)
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool open_pipe = true;
  char buf[4096];
  OutputTail tail;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !out.timed_out) {
      out.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);  // in a namespace, its process 1: the kernel ends all the rest
    }
    pollfd p[2] = {{open_pipe ? pipe_fds[0] : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const int wait_ms = out.timed_out ? 10 : static_cast<int>(std::clamp<long long>(left, 1, pidfd >= 0 ? 60'000 : 10));
    if (::poll(p, 2, wait_ms) > 0 && (p[0].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
      if (n > 0) tail.add(buf, static_cast<std::size_t>(n));
      if (n == 0) open_pipe = false;
    }
    if (reap_if_exited(*child)) break;
  }
  out.contained = child->contained;
  out.survivors = !end_child(*child);
  // What is still in the pipe (written just before the exit) belongs to the output too; a poll
  // before each read, so a pipe some straggler still holds open cannot block it.
  for (pollfd p{pipe_fds[0], POLLIN, 0}; open_pipe && ::poll(&p, 1, 0) > 0;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    tail.add(buf, static_cast<std::size_t>(n));
  }
  if (pidfd >= 0) ::close(pidfd);
  ::close(pipe_fds[0]);
  out.exit_code = child->exit_code();
  out.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  out.output_tail = tail.take();
  out.record = fetch_record(out.server_url, std::chrono::seconds{5}, server_options.admin_token);
  (*server)->stop();
  return out;
}

}  // namespace cb::grade

#include "cb/grade/run_student.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "cb/atomic_file.h"
#include "cb/flaky/server.h"

extern char** environ;

namespace cb::grade {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTail = 8 * 1024;

void keep_tail(std::string& tail, const char* data, std::size_t n) {
  tail.append(data, n);
  if (tail.size() > 4 * kTail) tail.erase(0, tail.size() - kTail);
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

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("CB_SERVER=", 0) != 0 && kv.rfind("CB_DIR=", 0) != 0) env_strings.push_back(kv);
  }
  env_strings.push_back("CB_SERVER=" + out.server_url);
  env_strings.push_back("CB_DIR=" + o.out_dir);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  const auto started = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    // A process group of its own, so the time limit can end everything the command started.
    ::setpgid(0, 0);
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    char sh[] = "/bin/sh";
    char dash_c[] = "-c";
    std::string command = o.command;
    char* argv[] = {sh, dash_c, command.data(), nullptr};
    ::execve("/bin/sh", argv, envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here: whichever runs first, the group exists before any kill
  ::close(pipe_fds[1]);

  const auto deadline = started + o.timeout;
  // A pidfd becomes readable when the child exits, so one poll waits for output, the exit and
  // the time limit together. (Without one, from a kernel before 5.3: short polls.)
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  bool open_pipe = true;
  int status = 0;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && !out.timed_out) {
      out.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    pollfd p[2] = {{open_pipe ? pipe_fds[0] : -1, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const int wait_ms = out.timed_out ? 10 : static_cast<int>(std::clamp<long long>(left, 1, pidfd >= 0 ? 60'000 : 10));
    if (::poll(p, 2, wait_ms) > 0 && (p[0].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
      if (n > 0) keep_tail(out.output_tail, buf, static_cast<std::size_t>(n));
      if (n == 0) open_pipe = false;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
  }
  // Whatever the command left running in its group is not graded and not left behind.
  ::kill(-pid, SIGKILL);
  // What is still in the pipe (written just before the exit) belongs to the output too; a poll
  // before each read, so a pipe some straggler still holds open cannot block it.
  for (pollfd p{pipe_fds[0], POLLIN, 0}; open_pipe && ::poll(&p, 1, 0) > 0;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    keep_tail(out.output_tail, buf, static_cast<std::size_t>(n));
  }
  if (pidfd >= 0) ::close(pidfd);
  ::close(pipe_fds[0]);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (out.output_tail.size() > kTail) out.output_tail.erase(0, out.output_tail.size() - kTail);
  out.record = fetch_record(out.server_url);
  (*server)->stop();
  return out;
}

}  // namespace cb::grade

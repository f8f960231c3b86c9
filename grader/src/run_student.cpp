#include "cb/grade/run_student.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <mutex>
#include <set>
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

// Everything the child needs, built before the fork: between fork and exec the child of a
// process with threads (--batch grades on several) may only make async-signal-safe calls, so
// it must not allocate.
struct ChildPlan {
  std::string command;
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  char sh[8] = "/bin/sh";
  char dash_c[3] = "-c";
  char* argv[4] = {nullptr, nullptr, nullptr, nullptr};
  const char* cwd = nullptr;
  int out_fd = -1;
};

[[noreturn]] void become_command(ChildPlan& plan) {
  // A process group of its own, so the time limit can end everything the command started.
  ::setpgid(0, 0);
  ::dup2(plan.out_fd, 1);
  ::dup2(plan.out_fd, 2);
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) ::_exit(126);
  ::execve("/bin/sh", plan.argv, plan.envp.data());
  ::_exit(127);
}

// The command runs as process 1 of a PID namespace of its own where the kernel allows it (as
// root, as in CI and Gradescope): when it exits or is killed, the kernel kills every process
// left in the namespace, including those that called setsid() or double-forked, and the wait
// for it returns only once they are all gone. Elsewhere it is an ordinary child, and the grader,
// a child subreaper, hunts down what it leaves (kill_orphans).
pid_t spawn(ChildPlan& plan, bool use_namespace, bool& contained) {
  const long pid = use_namespace ? ::syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr, nullptr, nullptr, nullptr) : -1;
  if (pid == 0) become_command(plan);
  if (pid > 0) {
    contained = true;
    return static_cast<pid_t>(pid);
  }
  contained = false;
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t child = ::fork();
  if (child == 0) become_command(plan);
  return child;
}

// The processes whose parent is this one, read from /proc.
std::vector<pid_t> children_of_self() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* d = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(d->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(d->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    // pid (comm) state ppid ...: comm may hold spaces and parentheses, so parse after the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == self) out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

// The runs in progress in this process (--batch runs several): their commands are children of
// ours, and not orphans to kill.
std::mutex g_runs_mu;
std::set<pid_t> g_running;

// Without a PID namespace: what the command left behind was reparented to us (we are a child
// subreaper); kill it, and what it starts meanwhile, until nothing is left. Bounded: a process
// that forks faster than it is killed is given up on after two seconds, and the report says so.
bool kill_orphans() {
  const auto until = Clock::now() + std::chrono::seconds{2};
  while (Clock::now() < until) {
    std::vector<pid_t> orphans;
    {
      std::lock_guard lock(g_runs_mu);
      for (pid_t p : children_of_self())
        if (g_running.count(p) == 0) orphans.push_back(p);
    }
    if (orphans.empty()) return true;
    for (pid_t p : orphans) ::kill(p, SIGKILL);
    for (pid_t p : orphans) ::waitpid(p, nullptr, 0);
  }
  return false;
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

  ChildPlan plan;
  plan.command = o.command;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    if (kv.rfind("CB_SERVER=", 0) != 0 && kv.rfind("CB_DIR=", 0) != 0) plan.env_strings.push_back(kv);
  }
  plan.env_strings.push_back("CB_SERVER=" + out.server_url);
  plan.env_strings.push_back("CB_DIR=" + o.out_dir);
  for (auto& e : plan.env_strings) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.argv[0] = plan.sh;
  plan.argv[1] = plan.dash_c;
  plan.argv[2] = plan.command.data();
  plan.cwd = o.cwd.empty() ? nullptr : o.cwd.c_str();
  // The write end without O_CLOEXEC is made by dup2 in the child; the original stays close-on-exec.
  plan.out_fd = pipe_fds[1];

  const auto started = Clock::now();
  bool contained = false;
  pid_t pid = -1;
  {
    std::lock_guard lock(g_runs_mu);  // registered before any reaper can take it for an orphan
    pid = spawn(plan, o.pid_namespace, contained);
    if (pid > 0) g_running.insert(pid);
  }
  if (pid < 0) return Error{std::string("cannot start the command: ") + std::strerror(errno)};
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
      ::kill(pid, SIGKILL);  // in a namespace, its process 1: the kernel ends all the rest
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
  {
    std::lock_guard lock(g_runs_mu);
    g_running.erase(pid);
  }
  // Whatever the command left running is not graded and not left behind: in a namespace the
  // kernel has already ended it; otherwise its group, and every orphan reparented to us.
  ::kill(-pid, SIGKILL);
  if (!contained) out.survivors = !kill_orphans();
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
  out.contained = contained;
  if (out.output_tail.size() > kTail) out.output_tail.erase(0, out.output_tail.size() - kTail);
  out.record = fetch_record(out.server_url, std::chrono::seconds{5}, server_options.admin_token);
  (*server)->stop();
  return out;
}

}  // namespace cb::grade

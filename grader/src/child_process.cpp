#include "child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

extern char** environ;

namespace cb::grade {
namespace {

using Clock = std::chrono::steady_clock;

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

// The children running now in this process (--batch runs several): children of ours, and not
// orphans to kill.
std::mutex g_children_mu;
std::set<pid_t> g_running;

// Without a PID namespace: what the command left behind was reparented to us (we are a child
// subreaper); kill it, and what it starts meanwhile, until nothing is left. Bounded: a process
// that forks faster than it is killed is given up on after two seconds, and the caller says so.
bool kill_orphans() {
  const auto until = Clock::now() + std::chrono::seconds{2};
  while (Clock::now() < until) {
    std::vector<pid_t> orphans;
    {
      std::lock_guard lock(g_children_mu);
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

ChildPlan::ChildPlan(std::string command, const std::vector<std::string>& set_env, std::string cwd)
    : command_(std::move(command)), cwd_(std::move(cwd)) {
  auto replaced = [&](const std::string& kv) {
    for (const std::string& s : set_env) {
      const auto eq = s.find('=');
      if (eq != std::string::npos && kv.compare(0, eq + 1, s, 0, eq + 1) == 0) return true;
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e)
    if (!replaced(*e)) env_strings_.emplace_back(*e);
  env_strings_.insert(env_strings_.end(), set_env.begin(), set_env.end());
  for (auto& e : env_strings_) envp_.push_back(e.data());
  envp_.push_back(nullptr);
  argv_[0] = sh_;
  argv_[1] = dash_c_;
  argv_[2] = command_.data();
}

void ChildPlan::become() noexcept {
  // A process group of its own, so the time limit can end everything the command started.
  ::setpgid(0, 0);
  ::dup2(in_fd >= 0 ? in_fd : devnull_, 0);
  ::dup2(out_fd >= 0 ? out_fd : devnull_, 1);
  ::dup2(err_fd >= 0 ? err_fd : devnull_, 2);
  if (!cwd_.empty() && ::chdir(cwd_.c_str()) != 0) ::_exit(126);
  ::execve("/bin/sh", argv_, envp_.data());
  ::_exit(127);
}

int Child::exit_code() const noexcept { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// The command runs as process 1 of a PID namespace of its own where the kernel allows it (as
// root, as in CI and Gradescope): when it exits or is killed, the kernel kills every process
// left in the namespace, including those that called setsid() or double-forked, and the wait
// for it returns only once they are all gone. Elsewhere it is an ordinary child, and the grader,
// a child subreaper, hunts down what it leaves (kill_orphans).
Result<Child> start_child(ChildPlan& plan, bool use_namespace) {
  Child child;
  // /dev/null is opened here, not in the child: between fork and exec the child of a process
  // with threads should touch as little as it can (TSan saw the child's open() race with a server
  // thread's epoll_create1 over the same descriptor number, and the child died of the report).
  plan.devnull_ = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  struct CloseDevNull {
    ChildPlan& plan;
    ~CloseDevNull() {
      if (plan.devnull_ >= 0) ::close(plan.devnull_);
      plan.devnull_ = -1;
    }
  } close_devnull{plan};
  std::lock_guard lock(g_children_mu);  // registered before any reaper can take it for an orphan
  const long pid = use_namespace ? ::syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, nullptr, nullptr, nullptr, nullptr) : -1;
  if (pid == 0) plan.become();
  if (pid > 0) {
    child.pid = static_cast<pid_t>(pid);
    child.contained = true;
  } else {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    child.pid = ::fork();
    if (child.pid == 0) plan.become();
    if (child.pid < 0) return Error{std::string("cannot start the command: ") + std::strerror(errno)};
  }
  ::setpgid(child.pid, child.pid);  // also from here: whichever runs first, the group exists before any kill
  g_running.insert(child.pid);
  return child;
}

bool reap_if_exited(Child& child) {
  if (!child.reaped && ::waitpid(child.pid, &child.status, WNOHANG) == child.pid) child.reaped = true;
  return child.reaped;
}

bool end_child(Child& child) {
  if (child.pid <= 0) return true;
  if (!child.reaped) {
    ::kill(-child.pid, SIGKILL);
    ::kill(child.pid, SIGKILL);  // in a namespace, its process 1: the kernel ends all the rest
    while (::waitpid(child.pid, &child.status, 0) < 0 && errno == EINTR) {
    }
    child.reaped = true;
  }
  {
    std::lock_guard lock(g_children_mu);
    g_running.erase(child.pid);
  }
  // Whatever the command left running is not graded and not left behind: in a namespace the
  // kernel has already ended it; otherwise its group, and every orphan reparented to us.
  ::kill(-child.pid, SIGKILL);
  const bool clean = child.contained || kill_orphans();
  child.pid = -1;
  return clean;
}

}  // namespace cb::grade

#include "cb/sandbox/child.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <set>

#include "cb/sandbox/interrupt.h"
#include "children.h"

namespace cb::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_mu;
std::set<pid_t> g_running;

// The processes whose parent is this one, from the lists the kernel keeps of each thread's
// children (/proc/self/task/TID/children): a handful of reads, where a scan of every process's
// /proc/PID/stat takes milliseconds, in which a program that forks and exits in a loop (each
// successor reparented here) stays ahead of the killing. The scan where the lists are missing
// (a kernel without CONFIG_PROC_CHILDREN).
std::vector<pid_t> children_of_self() {
  std::vector<pid_t> out;
  DIR* tasks = ::opendir("/proc/self/task");
  bool listed = false;
  if (tasks != nullptr) {
    while (const dirent* t = ::readdir(tasks)) {
      if (t->d_name[0] < '1' || t->d_name[0] > '9') continue;
      std::ifstream children(std::string("/proc/self/task/") + t->d_name + "/children");
      if (!children) continue;
      listed = true;
      for (long pid = 0; children >> pid;) out.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(tasks);
  }
  if (listed) return out;
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

// The children of `pid`, from the kernel's lists of each of its threads' children.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* tasks = ::opendir(task.c_str());
  if (tasks == nullptr) return out;
  while (const dirent* t = ::readdir(tasks)) {
    if (t->d_name[0] < '1' || t->d_name[0] > '9') continue;
    std::ifstream children(task + "/" + t->d_name + "/children");
    for (long child = 0; children >> child;) out.push_back(static_cast<pid_t>(child));
  }
  ::closedir(tasks);
  return out;
}

// A process's state letter from /proc/PID/stat ('R', 'S', 'T' stopped, 'Z' ...); 0 once it is gone.
char state_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return 0;
  return line[close + 2];
}

// Without a PID namespace: what the command left behind was reparented to us (we are a child
// subreaper), with everything it started since, however deep and in whatever session; end all
// of it. Every process of those trees is stopped first, round after round, until a round finds
// every one of them stopped (a stopped process starts nothing), and only then are they all
// killed at once: killing a parent while its children run only hands them to us, free to fork
// into the slots the dead leave (a fork bomb of sessions of their own outran a killing by
// parents alone). The trees of commands still running (another student's) are not touched.
// Bounded: given up on after five seconds of this thread's own CPU, and the caller says so. Not
// of the wall: on a machine too busy to give the grader CPU, five seconds of the wall were a few
// rounds, and a bomb that five seconds of rounds stop was charged as one that could not be
// stopped. A minute of the wall is the backstop.
std::chrono::nanoseconds thread_cpu() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds{t.tv_sec} + std::chrono::nanoseconds{t.tv_nsec};
}

bool kill_orphans() {
  const auto cpu_until = thread_cpu() + std::chrono::seconds{5};
  const auto until = Clock::now() + std::chrono::minutes{1};
  while (thread_cpu() < cpu_until && Clock::now() < until) {
    std::vector<pid_t> roots;
    {
      std::lock_guard lock(g_mu);
      for (pid_t p : children_of_self())
        if (g_running.count(p) == 0) roots.push_back(p);
    }
    if (roots.empty()) return true;
    std::vector<pid_t> tree = roots;
    for (std::size_t i = 0; i < tree.size() && tree.size() < 100'000; ++i)
      for (pid_t c : children_of(tree[i])) tree.push_back(c);
    bool all_held = true;
    for (pid_t p : tree) {
      const char state = state_of(p);
      if (state == 0 || state == 'T' || state == 't' || state == 'Z' || state == 'X') continue;
      ::kill(p, SIGSTOP);
      all_held = false;
    }
    if (!all_held) continue;
    for (pid_t p : tree) ::kill(p, SIGKILL);
    for (pid_t p : roots) ::waitpid(p, nullptr, 0);
  }
  return false;
}

}  // namespace

namespace children {
std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(g_mu); }
void add(pid_t pid) { g_running.insert(pid); }
void end_all() noexcept {
  std::vector<pid_t> running;
  {
    std::lock_guard lock(g_mu);
    running.assign(g_running.begin(), g_running.end());
    g_running.clear();
  }
  for (pid_t p : running) {
    ::kill(-p, SIGKILL);
    ::kill(p, SIGKILL);
  }
  for (pid_t p : running) ::waitpid(p, nullptr, 0);
  (void)kill_orphans();
}
}  // namespace children

int Child::exit_code() const noexcept { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

std::chrono::microseconds Child::cpu_used() const noexcept {
  const auto us = [](const timeval& t) {
    return std::chrono::seconds{t.tv_sec} + std::chrono::microseconds{t.tv_usec};
  };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

namespace {

// Its process group goes while the program is a zombie: until it is reaped its pid, and so the
// group's number, cannot be given to another process, so the signal reaches only what is ours.
// (This machine's pid_max is 32768; a test run wraps it, and a group number killed after the
// reap could by then be a new, unrelated group's.)
void reap(Child& child, int flags) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT | flags) != 0) {
    if (errno == ECHILD) child.reaped = true;  // not ours to wait for any more: nothing to end
    return;
  }
  if (info.si_pid != child.pid) return;  // WNOHANG, and still running
  ::kill(-child.pid, SIGKILL);
  while (::wait4(child.pid, &child.status, 0, &child.usage) < 0 && errno == EINTR) {
  }
  child.reaped = true;
}

}  // namespace

bool reap_if_exited(Child& child) {
  if (!child.reaped) reap(child, WNOHANG);
  return child.reaped;
}

std::uint64_t unlinked_bytes_held(const Child& child) {
  if (child.pid <= 0 || child.reaped) return 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::uint64_t bytes = 0;
  std::vector<pid_t> tree{child.pid};
  for (std::size_t i = 0; i < tree.size() && tree.size() < 100'000; ++i) {
    for (pid_t c : children_of(tree[i])) tree.push_back(c);
    const std::string fds = "/proc/" + std::to_string(tree[i]) + "/fd";
    DIR* d = ::opendir(fds.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      struct stat st {};
      // stat through the descriptor's link: the file itself, never opened.
      if (::fstatat(::dirfd(d), e->d_name, &st, 0) != 0) continue;
      if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
      bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
    }
    ::closedir(d);
  }
  return bytes;
}

bool end_child(Child& child) {
  if (child.pid <= 0) return true;
  if (!child.reaped) {
    ::kill(child.pid, SIGKILL);  // in a namespace, its process 1: the kernel ends all the rest
    while (!child.reaped) reap(child, 0);
  }
  {
    std::lock_guard lock(g_mu);
    g_running.erase(child.pid);
  }
  wait_if_stopping();  // killed by a stop of the grader: not a run to grade
  // Whatever the command left running is not graded and not left behind: in a namespace the
  // kernel has already ended it; otherwise its session's group went at the reap, and what left
  // the group was reparented to us.
  const bool clean = child.contained() || kill_orphans();
  child.pid = -1;
  return clean;
}

}  // namespace cb::sandbox

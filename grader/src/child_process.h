#pragma once
// A command the grader runs (the student's program, for --run or a conformance trace), contained
// so that nothing it starts outlives the grade: in a PID namespace of its own where the kernel
// allows it, else in a process group with the grader as child subreaper.

#include <sys/types.h>

#include <cstddef>
#include <utility>

#include <string>
#include <vector>

#include "cb/result.h"

namespace cb::grade {

struct Child;

// Everything the child needs, built before the fork: between fork and exec the child of a
// process with threads (--batch grades on several) may only make async-signal-safe calls, so
// it must not allocate.
class ChildPlan {
 public:
  // `command` runs under /bin/sh -c with this process's environment, except that each
  // "NAME=value" of `set_env` replaces any NAME there; in `cwd` unless it is empty.
  ChildPlan(std::string command, const std::vector<std::string>& set_env, std::string cwd);
  ChildPlan(const ChildPlan&) = delete;
  ChildPlan& operator=(const ChildPlan&) = delete;

  int in_fd = -1;   // its standard input; -1: /dev/null
  int out_fd = -1;  // its standard output
  int err_fd = -1;  // its standard error

  [[noreturn]] void become() noexcept;  // in the child, after the fork

 private:
  friend Result<Child> start_child(ChildPlan& plan, bool use_namespace);
  int devnull_ = -1;  // opened by start_child before the fork
  std::string command_;
  std::string cwd_;
  std::vector<std::string> env_strings_;
  std::vector<char*> envp_;
  char sh_[8] = "/bin/sh";
  char dash_c_[3] = "-c";
  char* argv_[4] = {nullptr, nullptr, nullptr, nullptr};
};

struct Child {
  pid_t pid = -1;
  bool contained = false;  // in a PID namespace: everything it started dies with it
  bool reaped = false;
  int status = 0;          // waitpid's, once reaped
  [[nodiscard]] int exit_code() const noexcept;  // its exit status, or 128 + the signal
};

// The last 8 KiB of what a child wrote, kept as it comes without growing past four times that.
class OutputTail {
 public:
  void add(const char* data, std::size_t n) {
    text_.append(data, n);
    if (text_.size() > 4 * kLimit) text_.erase(0, text_.size() - kLimit);
  }
  [[nodiscard]] std::string take() {
    if (text_.size() > kLimit) text_.erase(0, text_.size() - kLimit);
    return std::move(text_);
  }

 private:
  static constexpr std::size_t kLimit = 8 * 1024;
  std::string text_;
};

// Starts the plan, in a PID namespace when `use_namespace` and the kernel allows it (as root).
[[nodiscard]] Result<Child> start_child(ChildPlan& plan, bool use_namespace);

// Reaps the child if it has exited, without waiting; true once it is reaped.
bool reap_if_exited(Child& child);

// Ends the child (if it still runs) and everything it started, and reaps it. False when,
// without a namespace, something it started could not be killed within two seconds (it forks
// faster than it dies).
[[nodiscard]] bool end_child(Child& child);

}  // namespace cb::grade

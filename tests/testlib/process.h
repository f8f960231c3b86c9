#pragma once
// Test-only: a child process with its stdout and stderr captured, for tests that run our
// programs for real (a server on a free port, cb-lab, cb-grade).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cb::testing {

class Process {
 public:
  // Starts `argv[0]` with `argv`; `env` entries ("K=V") are added to the environment.
  explicit Process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
  // The same, for a child that says when it is ready on its fd 3 (`ready_fd` there: one pipe
  // for many children) and then reads what `send` writes on its stdin.
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env, int ready_fd);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // The next line of stdout, or nullopt at EOF or after `timeout` (a bound, not a wait for state).
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = std::chrono::seconds{10});
  // Everything still to come on stdout / stderr until the process closes them.
  std::string read_rest_of_stdout();
  std::string read_all_stderr();
  void signal(int sig) const;
  // Writes `text` to the stdin of a child started with a ready fd, then closes it.
  void send(const std::string& text);
  // Exit status (or 128 + signal); nullopt if it has not exited within `timeout`, when it is killed.
  std::optional<int> wait(std::chrono::milliseconds timeout = std::chrono::seconds{10});
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  int err_ = -1;
  std::string out_buf_;
  bool reaped_ = false;
  int status_ = 0;
};

// Runs a program to the end: exit code, stdout, stderr.
struct Ran {
  int exit_code;
  std::string out;
  std::string err;
};
Ran run(const std::vector<std::string>& argv, const std::string& stdin_text = {},
        const std::vector<std::string>& env = {}, std::chrono::milliseconds timeout = std::chrono::seconds{60});

// Runs each command line to the end, `at_once` at a time; the results in the same order.
std::vector<Ran> run_all(const std::vector<std::vector<std::string>>& argvs, std::size_t at_once,
                         std::chrono::milliseconds timeout = std::chrono::seconds{60});

// Every process of the machine, by pid, with its command line (arguments joined by '\0', as
// /proc gives it). One that ends while it is read is left out: /proc answers ESRCH then, and
// libstdc++'s stream throws it.
std::vector<std::pair<pid_t, std::string>> process_command_lines();

// The same for `root` and the processes it started, however deep: what a test waits for in a
// program it runs, never a like-named process of a test running beside it.
std::vector<std::pair<pid_t, std::string>> process_tree_command_lines(pid_t root);

// Two busy loops (yes > /dev/null) for as long as it lives, for tests that must hold on a busy
// machine; ended by pid (with their process groups) when it goes.
class BusyMachine {
 public:
  BusyMachine();
  ~BusyMachine();
  BusyMachine(const BusyMachine&) = delete;
  BusyMachine& operator=(const BusyMachine&) = delete;

 private:
  std::vector<pid_t> pids_;
};

}  // namespace cb::testing

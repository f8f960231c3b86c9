#pragma once
// A program the grader started: how to wait for it and how to end it, with everything it
// started.

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cb/result.h"
#include "cb/sandbox/policy.h"

namespace cb::sandbox {

// What to run: `/bin/sh -c command`, in the box's copy of the submission.
struct Program {
  std::string command;
  std::vector<std::string> env;  // NAME=value, on top of the sandbox's own environment
  int in_fd = -1;                // its standard input; -1: /dev/null
  int out_fd = -1;               // -1: /dev/null
  int err_fd = -1;
  // A server for the program, in the full sandbox: a socket bound and listening on host:port
  // inside the program's own network (where the program expects its server) is handed to
  // `serve` (which starts serving it) before the program starts, so its first connection is
  // answered.
  struct Listen {
    std::string host;
    int port = 0;
    std::function<Result<void>(int fd)> serve;
  };
  std::optional<Listen> listen;
  // The one TCP port the fallback lets it connect to (Landlock 4 and later): its server's.
  int connect_port = -1;
};

struct Child {
  pid_t pid = -1;
  Kind kind = Kind::None;
  bool reaped = false;
  int status = 0;                                // waitpid's, once reaped
  rusage usage{};                                // what it and the children it waited for used, once reaped
  [[nodiscard]] int exit_code() const noexcept;  // its exit status, or 128 + the signal
  [[nodiscard]] bool contained() const noexcept { return kind == Kind::Namespaces; }
  [[nodiscard]] std::chrono::microseconds cpu_used() const noexcept;
};

// Why a program did not start. `box_full`: the kernel refused the program's exec because the
// box's own uid already runs as many processes as the box may (EAGAIN once the box's identity
// took effect). Only the box's programs can have started those, so what the box holds, not the
// grader, kept this one from starting: a verdict on the program, never a grading to try again.
// Where the box shares the grader's uid (the fallback without a uid of its own) nobody can tell
// whose processes those are, and it is never set.
struct StartError {
  std::string message;
  bool box_full = false;
  StartError(Error e) : message(std::move(e.message)) {}  // NOLINT(google-explicit-constructor)
  StartError(std::string m, bool full) : message(std::move(m)), box_full(full) {}
};

// Reaps the child if it has exited, without waiting; true once it is reaped.
bool reap_if_exited(Child& child);

// Disk held by files the child's processes have open but whose names are gone (opened, then
// unlinked): bytes no walk of the box sees, counted where the box is counted rather than a
// tmpfs of its size (which counts them itself). Each file once, however many descriptors.
[[nodiscard]] std::uint64_t unlinked_bytes_held(const Child& child);

// Ends the child (if it still runs) and everything it started, and reaps it. In the full sandbox
// the kernel ends the rest with its PID namespace; otherwise the grader, a child subreaper, hunts
// down what was reparented to it. False when something could not be killed within five seconds
// (it forks faster than it dies).
[[nodiscard]] bool end_child(Child& child);

}  // namespace cb::sandbox

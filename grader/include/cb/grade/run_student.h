#pragma once
// --run: a fresh flaky server, the student's command against it with a time limit, and the
// server's record of what the command really did.

#include <chrono>
#include <string>

#include "cb/grade/evidence.h"
#include "cb/result.h"

namespace cb::grade {

struct RunOptions {
  std::string command;      // run by /bin/sh -c, in its own process group (and PID namespace, as root)
  std::string cwd;          // where it runs (empty: here)
  std::string out_dir;      // CB_DIR: where it must write the lab's files
  std::string host = "127.0.0.1";
  int port = 8110;          // the server's port; 0, or 8110 being taken, means a free one
  std::chrono::milliseconds timeout = std::chrono::seconds{60};
  // The server's event loops: one serves any number of connections.
  int server_threads = 1;
  // Run the command in a PID namespace of its own when the kernel allows it. Off (or where it is
  // refused): the grader is a child subreaper and kills what the command leaves behind.
  // CB_GRADE_CONTAINMENT=subreaper in cb-grade's environment turns it off (tests use it).
  bool pid_namespace = true;
};

struct RunOutcome {
  std::string server_url;          // what CB_SERVER said
  Result<Record> record = Record{};  // the server's record after the command ended
  int exit_code = 0;               // the command's, or 128 + signal
  bool timed_out = false;          // killed at the time limit; graded as far as it got
  std::string output_tail;         // the last 8 KiB of its stdout and stderr
  double seconds = 0;
  bool contained = false;          // ran in a PID namespace of its own (everything it started died with it)
  bool survivors = false;          // without one: something it started could not be killed
};

// Errors (the grader cannot run): the server cannot start, the output directory cannot be
// made, the command cannot be started.
[[nodiscard]] Result<RunOutcome> run_student(const RunOptions& options);

// The four lab files, removed from `dir` so that a run is graded on what it writes itself.
[[nodiscard]] Result<void> clear_lab_files(const std::string& dir);

}  // namespace cb::grade

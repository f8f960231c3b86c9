#pragma once
// --run: a fresh flaky server, the student's command against it in the box's sandbox with a
// time limit, and the server's record of what the command really did.

#include <chrono>
#include <string>

#include "cb/dir_handle.h"
#include "cb/grade/record.h"
#include "cb/grade/files.h"
#include "cb/grade/report.h"
#include "cb/result.h"
#include "cb/sandbox/sandbox.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {

struct RunOptions {
  std::string command;  // run by /bin/sh -c in the box's copy of the submission
  // The server's address. In the full sandbox the program has a network of its own, where this
  // address is always free (port 0 means the handout's 8110 there); elsewhere the server is on
  // the machine's loopback, and 0, or 8110 being taken, means a free port.
  std::string host = "127.0.0.1";
  int port = flaky::kDefaultPort;
  std::chrono::milliseconds timeout = std::chrono::seconds{60};
  // The server's event loops: one serves any number of connections.
  int server_threads = 1;
  const LabSpec* spec = nullptr;  // the lab whose files are cleared first (null: the one built in)
};

struct RunOutcome {
  std::string server_url;            // what CB_SERVER said
  Result<Record> record = Record{};  // the server's record after the command ended
  int exit_code = 0;                 // the command's, or 128 + signal
  bool timed_out = false;            // killed at the time limit; graded as far as it got
  // Timed out while its box was kept from the CPU (sandbox::starved): how, for the line that
  // says the machine, not the program, ran out of time. Empty otherwise.
  std::string starved;
  std::string output_tail;  // the last 8 KiB of its stdout and stderr
  double seconds = 0;
  bool survivors = false;  // outside the full sandbox: something it started could not be killed
  sandbox::Containment containment;
  sandbox::LimitHit limit_hit = sandbox::LimitHit::None;
  // No other program could put a request into the record: the server listened in the program's
  // own network, or (the fallback) served only connections from the program's own uid.
  bool record_private = false;
  std::size_t foreign_connections = 0;  // the fallback: connections from other uids, refused
};

// Errors (the grader cannot run): the server cannot start, the command cannot be started.
[[nodiscard]] Result<RunOutcome> run_student(const RunOptions& options, sandbox::Sandbox& sandbox,
                                             const sandbox::Box& box);

// How the program of `ran` ended, as the report carries it (`limit`: the time limit it had).
[[nodiscard]] ProgramRun program_run(const RunOutcome& ran, std::chrono::milliseconds limit);

// What the programs of a box ran under, as the report carries it.
[[nodiscard]] SandboxInfo sandbox_info(const sandbox::Containment& containment);

// The four lab files, removed from `dir` so that a run is graded on what it writes itself (a link
// of that name is removed, never what it points to).
[[nodiscard]] Result<void> clear_lab_files(const DirHandle& dir, const LabSpec& spec = lab_spec());

// The lab files a run left in `from` (the box's output directory), copied into `to` (the one
// the student named), so they can be read there. Only what the grader would read is copied:
// regular files of one name, within the size a lab file may have, written atomically.
[[nodiscard]] Result<void> copy_lab_files(const SubmissionDir& from, const DirHandle& to,
                                          const LabSpec& spec = lab_spec());

}  // namespace cb::grade

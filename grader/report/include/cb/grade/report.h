#pragma once
// What the grader found: per step, a list of checks (each with its stable id, defined beside the
// check in grader/checks/stepN_*.cpp), passed, failed, skipped or in error, with expected and actual values kept apart
// from the message that says what to do.

#include <nlohmann/json.hpp>

#include "cb/grade/timeline.h"
#include "cb/grade/trace_set.h"
#include <optional>
#include <string>
#include <vector>

namespace cb::grade {

// error: the evidence failed (the server died or was reset, the record holds two runs, ...), so
// the check says nothing about the submission; the grader, not the student, is at fault.
enum class Status { Pass, Fail, Skip, Error };
[[nodiscard]] const char* to_string(Status s) noexcept;  // "pass", "fail", "skip", "error"

struct Check {
  std::string id;    // "s3.trip": stable across versions, for tools
  std::string name;  // the title a person reads
  Status status = Status::Skip;
  std::string message;      // why it failed or was skipped, and what to do
  nlohmann::json expected;  // null when not a comparison
  nlohmann::json actual;
  bool needs_server = false;  // judged on the server's record
  // Skipped because a check it stands on did not pass: that check's id (not shown; the grader
  // decides by it when that check turns out not to be judged).
  std::string stands_on;
};

struct StepReport {
  int step = 0;
  std::string title;
  Status status = Status::Skip;  // fail if a check failed; else error if one erred; pass if one passed
  double score = 0;
  double max_score = 0;
  double seconds = 0;
  std::vector<Check> checks;
  std::string visibility = "visible";  // the rubric's, for Gradescope
};

// What the evidence (from Report::server) holds, so a report always says what it stood on.
struct EvidenceInfo {
  std::uint64_t epoch = 0;   // the record's epoch (bumped by every reset)
  std::size_t requests = 0;  // entries in the record
  std::size_t runs = 0;      // lab runs found in it (1 for a clean record)
  std::string problem;       // non-empty: the evidence failed, and why (one line)
  // The grader took the record (--run: a server of its own, reset for the run). Otherwise the
  // record was handed to it (--record, or a server the person keeps running), and a record it
  // cannot judge (the lab run twice without a reset, files of another run) is how it was taken:
  // not the grader's fault, and not the submission's.
  bool taken_by_grader = false;
  // --run: no other program could reach the server (its own network, or only its uid served);
  // what was refused at the door on the way.
  bool private_server = false;
  std::size_t foreign_connections = 0;
};

// --run: how the student's program ended.
struct ProgramRun {
  double seconds = 0;      // from start to exit (or to the kill)
  int exit_code = 0;       // its exit status, or 128 + the signal that ended it
  bool timed_out = false;  // killed at the time limit, and graded as far as it got
  double limit_seconds = 0;
  std::string limit_hit;   // the sandbox's limit it ran into ("cpu", "memory", ...), or empty
  std::string limit_text;  // the same for a person: "the CPU-time limit (30 s a process)"
};

// What the graded programs ran under (docs/GRADER.md, "The sandbox").
struct SandboxInfo {
  std::string containment;  // "namespaces", "fallback" or "none"
  bool trusted = true;      // false under --sandbox none: the program could have written its grade
  std::string description;  // one line for a person
  nlohmann::json details;   // the same as data: uid, namespaces, Landlock, limits, why
};

// --conformance: the student's breaker driven call by call with generated traces, compared with
// the grader's model of the lab's rules. Every trace is judged; each one answered otherwise is
// put down to one departure (a rule's id), and each departure is shown on a shrunk trace.
struct ConformanceRow {
  double t_ms = 0;
  std::string result;    // "200", "503", "timeout"
  std::string expected;  // "permitted CLOSED"
  std::string got;       // "permitted OPEN"; empty when it gave no answer
  std::string alone;     // state_carried_over: its answer in a process of its own
  bool differs = false;
};

// A trace shown: its settings, the lines to replay it, its calls up to the one that differs.
struct Counterexample {
  int trace = -1;                    // its number in the seed's sequence, from 0
  std::size_t original_calls = 0;    // its length before shrinking
  nlohmann::json settings;           // as the protocol's first line
  std::vector<std::string> input;    // the program's input, line by line
  std::vector<ConformanceRow> rows;  // up to and with the call that differs
};

// One departure, over every trace: how many it decided, and its shortest counterexample.
struct ConformanceRule {
  std::string rule;     // stable id
  std::string message;  // for a person, as said on its counterexample
  int traces = 0;       // traces put down to it
  Counterexample example;
  bool shrunk_fully = true;
};

namespace conformance {
// When each of a conformance part's times first ran out, by the number of the asking (from 1;
// conformance_deadline.h); -1: never.
struct TimeCuts {
  int part = -1;         // the whole part's time (--conformance-timeout)
  int experiments = -1;  // the share of the extra runs that may go to finding out why
  int shrinking = -1;    // the extra runs' time, shrinking included
  friend bool operator==(const TimeCuts&, const TimeCuts&) = default;
};
}  // namespace conformance

struct ConformancePart {
  TraceSet traces;               // asked for
  int judged = 0;                // run and judged: all, unless one got no answer at all
  int agreed = 0;                // traces answered as the rules do
  Status status = Status::Skip;  // pass, fail, or error (the program could not be started at all)
  double score = 0;
  double max_score = 0;
  double seconds = 0;
  int processes = 0;  // of the program, started to answer them (0: not known)
  // Whether some of its traces had calls in flight: only a program that says it takes them
  // ("in_flight") is sent those, and only they reach the rules listed in `not_probed` otherwise.
  bool in_flight = false;
  std::vector<std::string> not_probed;  // rule ids no trace could reach, for want of calls in flight
  // When it failed: the first trace answered otherwise, shrunk, and what it shows, ...
  Counterexample example;
  std::string rule;         // stable id of what it got wrong ("minimum_calls", ...)
  std::string message;      // the same for a person; or why the part could not run
  std::string stderr_tail;  // the end of the program's standard error on that trace
  int shrink_runs = 0;
  double shrink_seconds = 0;
  bool shrunk_fully = true;  // false: the shrinking budget ran out first
  // ... and every departure over all the traces, most traces first.
  std::vector<ConformanceRule> rules;
  // Where its times ran out, for a regrade to stop at the same points (not shown).
  conformance::TimeCuts cuts;
  std::string visibility = "visible";  // the rubric's, for Gradescope
};

struct Report {
  std::string grader_version;   // provenance.h: what gave this grade
  std::string lab_spec_sha256;  // and against which lab (LabSpec::sha256)
  // The SHA-256 of the evidence kept with the grade (class_reports.h: evidence_sha256), when it
  // was kept: what `cb-grade verify` holds the grade to.
  std::string evidence_sha256;
  std::string dir;
  std::string server;         // where the evidence came from, or empty
  std::string evidence_note;  // why there is no evidence, when there is none
  std::string numbers;        // whose numbers it was graded on: "the handout's numbers", a student's variant
  std::string student;        // the student whose variant it was graded on; empty for the handout's
  EvidenceInfo evidence;
  std::vector<StepReport> steps;
  double score = 0;
  double max_score = 0;
  bool passed = false;           // every selected step passed
  Status status = Status::Skip;  // pass, fail, or error (the grader's fault: exit 2)
  int checks_run = 0;            // passed or failed (not skipped)
  int checks_total = 0;
  double seconds = 0;       // the program's and the checks' own time
  double wall_seconds = 0;  // the whole grading, start to report (0: not measured): Gradescope's execution_time
  std::string stdout_visibility = "visible";  // the rubric's, for Gradescope
  std::string run_output;                     // --run: the tail of the student's output
  std::optional<ProgramRun> program;          // --run: how the program ended
  std::optional<SandboxInfo> sandbox;         // --run, --conformance: what the programs ran under
  std::vector<std::string> notes;             // what the grader noticed outside any one check
  // --run, when the program never called the server: what happened, said first and alone ("Your
  // program exited with 2 before calling the server: sh: 0: cannot open runn.sh"); each step is
  // then one line, since every check would only say the same.
  std::string headline;
  std::optional<ConformancePart> conformance;  // --conformance
  Timeline timeline;                           // the run's events on one axis, for --format html
};

// Adds the conformance part to a report: its points, and its verdict to the report's.
void add_conformance(Report& report, ConformancePart part);

// The report as the JSON format's tree (render(..., Format::Json) prints it).
[[nodiscard]] nlohmann::json to_json(const Report& report);

}  // namespace cb::grade

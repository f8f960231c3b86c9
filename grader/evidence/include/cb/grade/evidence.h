#pragma once
// Everything a verdict stands on, and nothing the grader only asks: the lab's files as read, the
// server's record and how it was taken, how the program ended and what it ran under, and every
// answer its breaker gave the conformance traces. gather() (gather.h) collects it by running a
// submission; `--reports` keeps it (class_reports.h); judge() (judge.h) grades it, as often as
// asked, running nothing. What the grader asks (which steps, which rubric, which lab) is
// GradeOptions (grade.h), never here.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cb/grade/conformance_log.h"
#include "cb/grade/files.h"
#include "cb/grade/record.h"
#include "cb/grade/report.h"
#include "cb/grade/trace_set.h"

namespace cb::grade {

// What the caller saw of the server before grading (cb-lab probes it before step 1).
struct ServerProbe {
  bool flaky = true;   // it answered as a flaky server
  std::string detail;  // what it answered instead, when not
};

// The conformance part's evidence: what was run, on which traces, and what it answered.
struct ConformanceEvidence {
  TraceSet traces;
  conformance::AnswerLog answers;
  // The part failed before every trace was judged: rule "prebuilt" (nothing ran) or "too_slow"
  // (`judged` traces were, then its time ran out), and why, as the first grading said it.
  std::pair<std::string, std::string> refused;
  int judged = -1;  // too_slow: the traces judged before the time ran out (-1: not kept)
  // The first grading's shrinking ran out of time: a trace it never asked is one there was no
  // time for, not one a newer grader wants.
  bool shrink_cut = false;
  // Where the first grading's times ran out, and the part's time (conformance_deadline.h): a
  // regrade stops at the same points. nullopt: kept before these were.
  std::optional<conformance::TimeCuts> cuts;
  std::chrono::milliseconds time_limit{0};
  // How many traces ran at once: the rounds the first grading asked its times at, which a
  // regrade runs again so that a cut falls at the same trace (1: kept before this was).
  int jobs = 1;
  double seconds = 0;  // how long the program took to answer, as first graded
};

struct Evidence {
  // The lab's files as graded; nullopt: the lab part is not graded (--conformance alone).
  std::optional<SubmissionDir> files;
  // The server's record, or why there is none.
  std::optional<Record> record;
  std::string no_record_reason;

  // How the record was taken.
  std::string server;  // where from: "http://127.0.0.1:8110", "saved record FILE"
  // The record's epoch when the run began (cb-lab resets the server and knows it; --run's fresh
  // server starts at 1). A record of another epoch was reset mid-run: the evidence failed.
  std::optional<std::uint64_t> expected_epoch;
  // --run, when no other program could reach the server (docs/GRADER.md, the sandbox): what the
  // record holds is the program's doing, so two runs in it, or more requests than it keeps, are a
  // mistake charged to step 1 (s1.once), not evidence that failed.
  bool record_private = false;
  std::size_t foreign_connections = 0;  // connections from other programs, refused
  // A live server found at its default address may hold another run's record: compare when the
  // files were written with when the record's requests came.
  bool check_file_times = false;
  // Seen to fail during the run (the server stopped answering): nothing that failed can be
  // charged to the submission.
  std::string evidence_failure;
  // cb-lab's, as it grades as it goes (not kept): what it saw of the server before step 1, and
  // the last record entry (seq) of each step 1..N, by which the timeline places requests.
  std::optional<ServerProbe> probe;
  std::vector<std::uint64_t> step_last_seq;

  // Whose numbers: with a course key the student, and the numbers graded on (kit_settings_json).
  std::string student;
  std::string numbers;

  // How the program of a run ended, what it ran under, and the end of its output.
  std::optional<ProgramRun> program;
  std::optional<SandboxInfo> sandbox;
  std::string run_output;

  std::optional<ConformanceEvidence> conformance;  // with --conformance

  // Earlier tries of this grading that the grader failed (it stalled, no box could be made), each
  // why: the report says the submission was graded again, and none of it is charged.
  std::vector<std::string> grader_failures;
};

// The evidence of files and a record alone (or why there is none), with nothing run.
[[nodiscard]] Evidence files_and_record(SubmissionDir files, std::optional<Record> record,
                                        std::string no_record_reason = {});

}  // namespace cb::grade

#pragma once
// gather(): a submission run as far as its grading needs, in a box of its own (a copy of its
// folder, a uid and a cgroup of its own), and what was seen kept as Evidence for judge(). The
// lab's files are read once, right after the lab run and before any other program of the
// submission runs in the same box; the conformance answers are recorded as the program gives
// them. Nothing here decides a verdict.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cb/dir_handle.h"
#include "cb/flaky/endpoints.h"
#include "cb/grade/class_build.h"
#include "cb/grade/evidence.h"
#include "cb/grade/fault.h"
#include "cb/grade/lab_spec.h"
#include "cb/grade/prebuilt.h"
#include "cb/grade/trace_set.h"
#include "cb/result.h"
#include "cb/sandbox/sandbox.h"

namespace cb::grade {

// --conformance: the command driven with generated traces, and its limits.
struct ConformanceRun {
  TraceSet traces;          // in a class, one seed for all
  bool seed_drawn = false;  // nobody chose it (no --seed, no rubric seed): a resumed batch takes its first run's
  std::chrono::milliseconds trace_limit{std::chrono::seconds{5}};
  std::chrono::milliseconds warm_up{std::chrono::seconds{20}};
  std::chrono::milliseconds time_limit{std::chrono::seconds{120}};  // all the traces of one submission
  int jobs = 1;                                                     // traces run at once
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// What is graded, and how it must run.
struct Submission {
  std::string folder = ".";  // the folder handed in: its box is a copy of it
  // Where its lab files are, as reports name them: with a run, where the program writes them in
  // its box (a path in the folder, or outside it).
  std::string files_path;
  // With a run: the folder a student reads the files in (cb-grade --run --dir), cleared before
  // the run and given a copy of what it wrote after. Without: nothing is written anywhere.
  std::optional<DirHandle> copy_files_to;
  std::string student;                  // with a course key: whose numbers
  std::shared_ptr<const LabSpec> spec;  // the lab and numbers (null: the handout's)
  std::optional<std::string> run;       // the lab's command, on a fresh server of its own
  std::string host = "127.0.0.1";       // the fresh server's address (port 0: any free one)
  int port = flaky::kDefaultPort;
  std::chrono::milliseconds timeout{std::chrono::seconds{60}};
  std::optional<ConformanceRun> conformance;
  Prebuilt prebuilt = Prebuilt::HarnessRefused;  // what it may not hand in ready-made
  ClassBuild* class_build = nullptr;             // in a class: what its boxes share (null: nothing)
  // Without a run: what the caller holds already (the files as found, a saved or live server's
  // record and how it was taken), which gather() completes.
  Evidence found;
};

// Failures, never a verdict on the submission, each with whose it is: the grader's (no box, the
// server or the command could not start, the grader stalled while a program ran: a run it did not
// witness) or the program's (a process it started could not be stopped; the folder a student named
// cannot be written).
[[nodiscard]] Result<Evidence, GradingFailure> gather(Submission submission, sandbox::Sandbox* sandbox);

}  // namespace cb::grade

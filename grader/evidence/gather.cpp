#include "cb/grade/gather.h"

#include <cstdio>
#include <memory>
#include <mutex>

#include "cb/grade/conformance_check.h"
#include "cb/grade/conformance_process.h"
#include "cb/grade/run_student.h"
#include "cb/grade/variant.h"
#include "cb/stall_watch.h"

namespace cb::grade {
namespace {

GradingFailure grader_failed(std::string why) { return GradingFailure{Fault::Grader, std::move(why)}; }
GradingFailure program_failed(std::string why) { return GradingFailure{Fault::Program, std::move(why)}; }

// What a program did while the grader was stopped is not evidence: its server did not answer and
// nothing timed it. The part is the grader's failure, to be graded again.
Result<void, GradingFailure> ran_throughout(std::chrono::steady_clock::time_point from, const char* part) {
  const auto stall = StallWatch::process().since(from);
  if (!stall) return {};
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(stall->length).count());
  return grader_failed(std::string("the grader stalled for ") + seconds + " s during " + part +
                       " (it was stopped, or the machine gave it no CPU): what the program did then is not evidence");
}

// The lab run: a fresh server, the command against it, the record and the files it left.
Result<void, GradingFailure> run_lab(const Submission& s, const LabSpec& spec, sandbox::Sandbox& sandbox,
                                     const sandbox::Box& box, Evidence& e) {
  RunOptions run;
  run.spec = &spec;
  run.command = *s.run;
  run.host = s.host;
  run.port = s.port;
  run.timeout = s.timeout;
  const auto began = StallWatch::mark();
  auto ran = run_student(run, sandbox, box);
  if (!ran) return grader_failed(ran.error().message);
  if (ran->survivors)
    return program_failed(
        "a process the program started could not be stopped (it forks faster than it dies); not graded");
  CB_TRY_VOID(ran_throughout(began, "the lab run"));
  if (ran->timed_out && !ran->starved.empty())
    return grader_failed("the lab run reached its time limit while the machine kept its box from the CPU (" +
                         ran->starved + "): the time ran out for want of CPU, not in the program");
  if (ran->limit_hit == sandbox::LimitHit::OutsideMemory)
    return grader_failed("the program was killed for memory by " +
                         sandbox::describe(ran->containment.limits, ran->limit_hit, true) +
                         ": the machine could not give the box what it may use");
  e.server = ran->server_url;
  e.run_output = ran->output_tail;
  e.program = program_run(*ran, s.timeout);
  e.sandbox = sandbox_info(ran->containment);
  e.record_private = ran->record_private;
  e.foreign_connections = ran->foreign_connections;
  e.expected_epoch = 1;  // a fresh server, and nobody but the grader may reset it
  if (ran->record) {
    e.record = std::move(ran->record).value();
  } else {
    e.no_record_reason = ran->record.error().message;
    e.evidence_failure = "the fresh server's record could not be read: " + e.no_record_reason;
  }
  // What it wrote in its box, read from the descriptors the box held before it ran (a link it put
  // there is refused, and graded as no files), taken now: what is graded and kept is what the
  // lab run left, whatever the conformance programs do in the same box later.
  auto out = box.out_handle();
  const SubmissionDir written = out ? SubmissionDir::adopt(std::move(out).value(), s.files_path)
                                    : SubmissionDir::refused(s.files_path, out.error().message);
  e.files = SubmissionDir::snapshot(written, spec.files.names());
  if (s.copy_files_to && box.copied())
    if (auto copied = copy_lab_files(*e.files, *s.copy_files_to, spec); !copied)
      return program_failed(copied.error().message);
  return {};
}

// The conformance traces through the program, every answer recorded; the live verdict is only
// asked for what a replay cannot know (where the time ran out).
ConformanceEvidence run_conformance(const ConformanceRun& c, const std::optional<std::string>& prebuilt, Prebuilt rule,
                                    sandbox::Sandbox& sandbox, const sandbox::Box& box, std::string& grader_failure) {
  ConformanceEvidence out;
  out.traces = c.traces;
  if (prebuilt) {
    out.refused = {"prebuilt", prebuilt_reason(*prebuilt, rule)};
    return out;
  }
  conformance::ProcessOptions po;
  po.command = c.traces.command;
  po.trace_limit = c.trace_limit;
  po.warm_up = c.warm_up;
  po.sandbox = &sandbox;
  po.box = &box;
  auto failed = std::make_shared<std::mutex>();
  po.grader_failed = [failed, &grader_failure](const std::string& why) {
    const std::lock_guard lock(*failed);
    if (grader_failure.empty()) grader_failure = why;
  };
  ConformanceOptions co;
  co.traces = c.traces;
  co.jobs = c.jobs;
  co.progress = c.progress;
  co.time_limit = c.time_limit;
  const ConformancePart live = check_conformance(co, out.answers.recording(conformance::process_programs(po)));
  out.seconds = live.seconds;
  out.shrink_cut = !live.shrunk_fully;
  out.cuts = live.cuts;
  out.jobs = co.jobs;
  out.time_limit = c.time_limit;
  if (live.rule == "too_slow") {
    out.refused = {live.rule, live.message};
    out.judged = live.judged;
  }
  return out;
}

}  // namespace

Result<Evidence, GradingFailure> gather(Submission s, sandbox::Sandbox* sandbox) {
  Evidence e = std::move(s.found);
  const LabSpec& spec = s.spec ? *s.spec : lab_spec();
  e.student = s.student;
  e.numbers = kit_settings_json(spec);
  // judge() reads only what was read here: files found in a live folder are taken as they stand
  // now, each once, and a later change to the folder changes no verdict.
  if (e.files) e.files = SubmissionDir::snapshot(*e.files, spec.files.names());
  if (!s.run && !s.conformance) return e;
  if (sandbox == nullptr) return grader_failed("no sandbox to run the submission in");
  if (s.run && s.copy_files_to)
    if (auto cleared = clear_lab_files(*s.copy_files_to, spec); !cleared)
      return program_failed(cleared.error().message);
  auto box = sandbox->box(s.folder, s.run ? s.files_path : std::string());
  if (!box) return box.error().submissions ? program_failed(box.error().message) : grader_failed(box.error().message);
  // What it handed in, looked at before any of its programs runs (a build in the box is its own).
  const std::optional<std::string> prebuilt =
      s.conformance ? prebuilt_in((*box)->copy_root(), s.prebuilt) : std::nullopt;
  if (s.class_build != nullptr) s.class_build->give(*sandbox, **box);
  if (s.run) CB_TRY_VOID(run_lab(s, spec, *sandbox, **box, e));
  if (s.conformance) {
    const auto began = StallWatch::mark();
    std::string not_started;
    e.conformance.emplace(run_conformance(*s.conformance, prebuilt, s.prebuilt, *sandbox, **box, not_started));
    CB_TRY_VOID(ran_throughout(began, "the conformance traces"));
    // A trace the grader could not even start shows nothing of the program: graded again.
    if (!not_started.empty())
      return grader_failed("the grader could not start the program for a conformance trace: " + not_started);
  }
  if (!e.sandbox) e.sandbox = sandbox_info(sandbox->containment(**box));
  return e;
}

}  // namespace cb::grade

#include "cb/grade/judge.h"

#include "cb/grade/conformance_check.h"
#include "cb/grade/format_common.h"
#include "cb/grade/program_words.h"
#include "cb/grade/provenance.h"
#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

void not_kept(ConformancePart& part, std::size_t missed) {
  part.status = Status::Error;
  part.score = 0;
  part.rule = "not_kept";
  part.message = "the regrade needs the answers to " + std::to_string(missed) +
                 " trace(s) the first grade never asked for (it was graded by another version of cb-grade); grade it "
                 "again with --batch --run";
  part.example = {};
  part.rules.clear();
}

// --conformance alone: a report of no steps, for the part to be added to.
Report no_steps(const GradeOptions& options) {
  Report report;
  report.grader_version = grader_version();
  report.lab_spec_sha256 = (options.spec ? *options.spec : lab_spec()).sha256;
  report.stdout_visibility = options.rubric.stdout_visibility;
  return report;
}

}  // namespace

ConformancePart judge_conformance(const ConformanceEvidence& c, const Rubric& rubric) {
  ConformanceOptions co;
  co.traces = c.traces;
  co.points = rubric.conformance;
  co.visibility = rubric.conformance_visibility;
  // A rubric that fixes the traces other than these answers are to: they cannot be judged on
  // them without running the program again, and guessing would be a grade of another test.
  if ((rubric.seed && *rubric.seed != c.traces.seed) || (rubric.traces && *rubric.traces != c.traces.count)) {
    ConformancePart part = conformance_refused(co, "other_traces", "");
    part.status = Status::Error;
    part.message = "the rubric asks for " + std::to_string(rubric.traces.value_or(c.traces.count)) +
                   " traces of seed " + std::to_string(rubric.seed.value_or(c.traces.seed)) +
                   "; the answers kept are to " + std::to_string(c.traces.count) + " traces of seed " +
                   std::to_string(c.traces.seed) +
                   ": grade the submission again (cb-grade --batch ... --resume grades what changed)";
    part.seconds = c.seconds;
    return part;
  }
  const bool too_slow = c.refused.first == "too_slow";
  if (!c.refused.first.empty() && !(too_slow && c.judged >= 0)) {
    ConformancePart part = conformance_refused(co, c.refused.first, c.refused.second);
    part.seconds = c.seconds;
    return part;
  }
  // The first grading's times, as the points it met them at; a grade kept before those were
  // stops where its time ran out, after the traces it judged.
  co.replay_cuts = c.cuts.value_or(conformance::TimeCuts{});
  co.time_limit = c.time_limit;
  co.jobs = c.jobs;
  if (too_slow && !c.cuts) co.stop_after = c.judged;
  conformance::AnswerLog log = c.answers;  // a replay notes what it missed; the evidence stays as it was
  ConformancePart part = check_conformance(co, log.replaying());
  if (too_slow && part.rule == "too_slow") part.message = c.refused.second;
  if (log.missed() > 0) {
    if (c.shrink_cut) {
      part.shrunk_fully = false;
    } else {
      not_kept(part, log.missed());
    }
  }
  part.seconds = c.seconds;
  return part;
}

namespace {

// A program that never called the server failed before the lab began: that is the one thing
// to say, not a failed check per step.
std::string never_called(const Evidence& e, const Report& report) {
  if (!e.program || !e.record || report.evidence.runs > 0 || !report.evidence.problem.empty()) return {};
  const ProgramRun& p = *e.program;
  std::string said = p.timed_out
                         ? "Your program was stopped at the time limit without calling the server"
                         : "Your program exited with " + std::to_string(p.exit_code) +
                               (p.exit_code == 0 ? " without calling the server" : " before calling the server");
  if (const std::string why = program_words(e.run_output); !why.empty()) said += ": " + why;
  return said;
}

// The step the lab run was in when the program's last request reached the server.
int step_reached(const LabRun& run) {
  if (run.lab.empty()) return 1;
  if (run.bad > 0) return 7;
  if (!run.trials.empty()) return run.trials.size() > 1 ? 6 : 5;
  if (run.burst.empty()) return 2;
  for (const RecordEntry* c : run.count_calls)
    if (c->seq > run.burst.back()->seq) return 4;
  return 3;
}

// A program that ended with an error mid-run cost itself every check it failed from there on:
// each says so, in the program's own words, beside its own message (a step 6 check said only
// "must make at least 4 calls while HALF_OPEN", the traceback was in the output's tail).
void name_the_crash(Report& report, const Evidence& e, const LabSpec& spec) {
  if (!e.program || e.program->timed_out || e.program->exit_code == 0 || !e.record) return;
  const std::string words = program_words(e.run_output);
  const int from = step_reached(analyse(*e.record, spec, !e.expected_epoch.has_value()));
  const std::string said = "your program ended with " + std::to_string(e.program->exit_code) +
                           " (its last request to the server was in step " + std::to_string(from) + ")" +
                           (words.empty() ? "" : ": " + words);
  for (StepReport& s : report.steps) {
    if (s.step < from) continue;
    for (Check& c : s.checks)
      if (c.status == Status::Fail)
        c.message += (c.message.empty() ? "" : " (") + said + (c.message.empty() ? "" : ")");
  }
}

}  // namespace

namespace {

// The rubric's integrity caps (rubric.h): the lab's steps earn at most `cap` points, taken from
// the last steps first, and the report says why.
void cap_steps(Report& r, double cap, const std::string& why) {
  double total = 0;
  for (const StepReport& s : r.steps) total += s.score;
  if (total <= cap) return;
  double over = total - cap;
  for (auto s = r.steps.rbegin(); s != r.steps.rend() && over > 0; ++s) {
    const double cut = std::min(s->score, over);
    s->score -= cut;
    over -= cut;
  }
  r.score -= total - cap;
  r.notes.push_back("The lab's steps earn at most " + points(cap) + " of their " + points(total) +
                    " points here: " + why);
}

void apply_caps(Report& r, const Rubric& rubric) {
  if (rubric.cap_other_numbers) {
    for (const StepReport& s : r.steps)
      for (const Check& c : s.checks)
        if (c.id == "s1.numbers" && c.status == Status::Fail) {
          cap_steps(r, *rubric.cap_other_numbers,
                    "the run was on numbers that are not this student's (the rubric's cap_other_numbers)");
          break;
        }
  }
  // No breaker answered a single call of the conformance traces (no replay.sh, or one that does
  // not run): the steps alone can be passed by a script that replays the handout's requests.
  if (rubric.cap_no_replay && r.conformance && r.conformance->rule == "no_answer" && r.conformance->agreed == 0 &&
      r.conformance->judged <= 1)
    cap_steps(r, *rubric.cap_no_replay,
              "no breaker answered the conformance traces (no replay.sh, or one that does not run), and the "
              "steps alone can be passed without one (the rubric's cap_no_replay)");
}

}  // namespace

Report judge(const Evidence& e, const GradeOptions& options) {
  Report report = e.files ? grade_steps(e, options) : no_steps(options);
  if (e.files) report.headline = never_called(e, report);
  if (e.files && report.headline.empty()) name_the_crash(report, e, options.spec ? *options.spec : lab_spec());
  report.run_output = e.run_output;
  report.program = e.program;
  report.sandbox = e.sandbox;
  if (e.conformance) add_conformance(report, judge_conformance(*e.conformance, options.rubric));
  apply_caps(report, options.rubric);
  for (const std::string& why : e.grader_failures)
    report.notes.push_back("Graded again: an earlier try failed through the grader's fault, not yours (" + why + ").");
  return report;
}

}  // namespace cb::grade

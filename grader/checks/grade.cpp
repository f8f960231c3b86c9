// grade_steps(): reads the four files, analyses the record, runs each step's checks, and then asks
// whether the evidence itself held. Evidence that failed (a record reset mid-run, with entries
// lost, with two runs in it, or from another run than the files) turns every verdict that stood
// on it into an error: the grader's fault to report, never a mistake charged to the student.
#include <algorithm>
#include <chrono>

#include "cb/grade/grade.h"
#include "cb/grade/provenance.h"
#include "cb/grade/lab_spec.h"
#include "cb/utc_time.h"
#include "lab_checks.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {
namespace {

template <class T, class F>
Parsed<T> read_file(const SubmissionDir& dir, std::string_view name_view, F parse, std::int64_t& newest_mtime) {
  const std::string name(name_view);
  Parsed<T> out;
  const FileRead f = dir.read(name);
  if (f.found != FileRead::Found::Ok) {
    out.problem = f.reason;
    return out;
  }
  newest_mtime = std::max(newest_mtime, f.mtime_us);
  if (f.bytes.empty()) {
    out.problem = name + " is empty";
    return out;
  }
  if (const auto bad = invalid_utf8_at(f.bytes); bad != std::string::npos) {
    out.problem = name + " is not UTF-8 text (an invalid byte at offset " + std::to_string(bad) + ")";
    return out;
  }
  auto parsed = parse(f.bytes);
  if (!parsed) {
    out.problem = name + ": " + parsed.error().message;
    return out;
  }
  out.ok = true;
  out.value = std::move(parsed).value();
  return out;
}

// The files were written during the run the record shows, or the record is another run's: from
// a minute before its first lab request to ten minutes after its last (a program may write its
// files at the end, after a slow step).
std::string file_time_problem(const LabRun& run, std::int64_t newest_mtime, const std::string& server) {
  if (run.lab.empty() || newest_mtime == 0) return {};
  const auto first = run.lab.front()->wall_us;
  const auto last = run.lab.back()->wall_us;
  if (!first || !last) return {};
  if (newest_mtime >= *first - 60'000'000 && newest_mtime <= *last + 600'000'000) return {};
  return "the record at " + (server.empty() ? std::string("the server") : server) +
         " is not this run's: its lab requests came " + format_utc(*first) + " to " + format_utc(*last) +
         ", and the files were written " + format_utc(newest_mtime) + "; reset the server (POST " +
         std::string(flaky::path::kAdminReset) + ") and run the lab again, or grade with --run";
}

// " (the 2nd begins at request #22)": where a record of more than one run shows the second.
std::string second_run_text(const LabRun& run) {
  return " (the 2nd begins at request #" + std::to_string(*run.second_run_seq) + ")";
}

// What the program itself did to the record, when nothing else could reach the server: more
// requests than it keeps, or the lab run twice. Empty when the record holds one run, whole.
std::string program_record_problem(const Record& record, const LabRun& run) {
  if (record.gap)
    return "the program made more requests than the server's record keeps, so it lost its first ones (the lab makes "
           "a few dozen)";
  if (run.runs > 1)
    return "the record holds " + std::to_string(run.runs) + " runs of the lab" + second_run_text(run) + ": run it once";
  return {};
}

// `programs`: program_record_problem() where the record is the program's alone (then what it
// names is a mistake step 1 charges, not evidence that failed), else empty.
std::string evidence_problem(const std::optional<Record>& record, const std::optional<LabRun>& run, const Evidence& o,
                             const std::string& programs, std::int64_t newest_mtime, const std::string& server) {
  if (!o.evidence_failure.empty()) return o.evidence_failure;
  if (!record) return {};
  if (o.expected_epoch && record->epoch != *o.expected_epoch)
    return "the server's record was reset during the run (its epoch is " + std::to_string(record->epoch) +
           ", the run began in " + std::to_string(*o.expected_epoch) + "): what it shows is not the whole run";
  if (!programs.empty()) return {};
  if (auto defect = record_defect(*record); !defect.empty()) return defect;
  if (run->runs > 1 && o.expected_epoch)  // a server started or reset for this run, which others could reach
    return "the server's record holds " + std::to_string(run->runs) + " lab runs" + second_run_text(*run) +
           ": either the program ran the lab twice or another program on this machine reached the server, and this "
           "sandbox cannot tell them apart; grade where the program gets a network or a uid of its own (docs/GRADER.md)";
  if (run->runs > 1)
    return "the server's record holds " + std::to_string(run->runs) + " lab runs" + second_run_text(*run) +
           ": the lab ran again without a reset between, so no step can be judged on it; reset the server (POST " +
           std::string(flaky::path::kAdminReset) + ") before a run, or grade with --run";
  if (o.check_file_times) return file_time_problem(*run, newest_mtime, server);
  return {};
}

// Refusals never reach the server, so the record cannot say when each was; where the record and
// the files together say how many there were between two requests, the page draws them there.
void infer_refusals(Timeline& tl, const Inputs& in) {
  if (!tl.refused_us.empty() || !in.run) return;
  const LabRun& run = *in.run;
  if (run.burst.empty() || !run.burst.back()->wall_us) return;
  // Step 4's /count reads, before and after its refused calls: the first two after the burst.
  std::vector<std::int64_t> reads;
  for (const RecordEntry* c : run.count_calls)
    if (c->seq > run.burst.back()->seq && c->wall_us && reads.size() < 2) reads.push_back(*c->wall_us);
  const auto sent = static_cast<std::size_t>(in.spec.script.burst);
  if (run.burst.size() < sent) {
    const std::int64_t from = *run.burst.back()->wall_us;
    const std::int64_t to = reads.empty() ? from : std::max(from, reads.front());
    tl.refused_groups.push_back({from, to, sent - run.burst.size(),
                                 "step 3 sends " + std::to_string(sent) + " " + in.spec.script.fail_path + "; " +
                                     std::to_string(run.burst.size()) + " reached the server"});
  }
  if (in.fastfail.ok && in.fastfail.value->blocked > 0 && reads.size() == 2)
    tl.refused_groups.push_back({reads[0], reads[1], static_cast<std::size_t>(in.fastfail.value->blocked),
                                 in.spec.files.fastfail + ": blocked=" + std::to_string(in.fastfail.value->blocked) +
                                     " between the two " + std::string(flaky::path::kCount) + " reads"});
}

constexpr const char* kNotJudgedOnEvidence = "not judged: the evidence failed (the report says why, first)";

// Evidence that failed leaves every check that stood on it unjudged. What the check found is not
// repeated: on such evidence it would read as a verdict (expected and actual keep the values).
// Why the evidence failed is said once, first.
void not_judged_on_evidence(StepReport& step, bool taints_files, double points) {
  for (Check& c : step.checks) {
    if (c.id == "s1.server" && c.status == Status::Pass) continue;  // it did answer
    const bool stood_on_evidence = c.needs_server || (taints_files && c.status == Status::Fail);
    if (c.status == Status::Skip || !stood_on_evidence) continue;
    c.message = kNotJudgedOnEvidence;
    c.status = Status::Error;
  }
  // A dependant skipped on what its check found says instead that the check was not judged.
  for (Check& c : step.checks) {
    if (c.status != Status::Skip) continue;
    for (const Check& need : step.checks)
      if (need.status == Status::Error && c.stands_on == need.id)
        c.message = "not judged: it stands on " + need.id + ", which was not judged either";
  }
  settle(step, points);
}

}  // namespace

int exit_code(const Report& report) noexcept {
  if (report.status == Status::Error) return 2;
  return report.passed ? 0 : 1;
}

Report grade_steps(const Evidence& e, const GradeOptions& options) {
  const SubmissionDir none = SubmissionDir::absent(e.files ? std::string() : "");
  const SubmissionDir& dir = e.files ? *e.files : none;
  const std::optional<Record>& record = e.record;
  const auto started = std::chrono::steady_clock::now();
  const LabSpec& spec = options.spec ? *options.spec : lab_spec();
  Prerequisites pre;
  Inputs in{spec, pre, record, std::nullopt, e.probe, {}, {}, {}, {}, std::nullopt, std::nullopt, {}};
  // A server the grader did not start may hold requests from before the run (a curl by hand).
  if (record) in.run = analyse(*record, spec, !e.expected_epoch.has_value());
  std::int64_t newest = 0;
  in.state = read_file<StateFile>(dir, spec.files.state, parse_state_file, newest);
  in.ignore = read_file<StateFile>(dir, spec.files.ignore, parse_state_file, newest);
  in.fastfail = read_file<FastFail>(dir, spec.files.fastfail, parse_fastfail, newest);
  in.transitions = read_file<std::vector<TransitionLine>>(dir, spec.files.transitions, parse_transitions, newest);
  if (in.transitions.ok) in.stamp_problem = stamp_problem(*in.transitions.value);
  if (in.run && in.transitions.ok) {
    in.trip = place_trip(*in.run, *in.transitions.value);
    in.close =
        place_close(successful_trials(*in.run), *in.transitions.value, static_cast<std::size_t>(spec.rules.trials));
  }

  pre.has_record = record.has_value();
  if (record && e.record_private) pre.record_unusable = program_record_problem(*record, *in.run);
  pre.no_record_reason = e.no_record_reason;
  if (!in.transitions.ok) pre.file_problems.emplace("transitions", in.transitions.problem);
  if (!in.state.ok) pre.file_problems.emplace("state", in.state.problem);
  if (options.steps.empty()) pre.other_numbers = other_numbers(in);
  for (int n = 1; n <= spec.steps(); ++n)
    if (options.steps.empty() || options.steps.count(n) != 0) pre.shown_steps.insert(n);

  Report report;
  report.grader_version = grader_version();
  report.stdout_visibility = options.rubric.stdout_visibility;
  report.lab_spec_sha256 = spec.sha256;
  report.dir = dir.path();
  report.numbers = spec.numbers_said();
  report.student = spec.student;
  report.server = e.server;
  report.evidence_note = record ? "" : e.no_record_reason;
  if (record) {
    report.evidence.epoch = record->epoch;
    report.evidence.requests = record->entries.size();
    report.evidence.runs = in.run->runs;
  }
  report.evidence.private_server = e.record_private;
  report.evidence.foreign_connections = e.foreign_connections;
  if (in.run && in.run->before_run > 0)
    report.notes.push_back(
        std::to_string(in.run->before_run) + " request(s) reached the server before this run began (before the " +
        std::string(flaky::path::kCount) +
        " of its step 1, after a pause of a second or more): someone else's, or tries by hand, and not graded as "
        "the program's");
  if (e.foreign_connections > 0)
    report.notes.push_back(std::to_string(e.foreign_connections) +
                           " connection(s) from other programs on this machine reached the server and were refused: "
                           "only the program's own uid is served, so the record is its alone");
  const std::string problem = evidence_problem(record, in.run, e, pre.record_unusable, newest, report.server);
  report.evidence.problem = problem;
  report.evidence.taken_by_grader = e.expected_epoch.has_value();
  const bool taints_files = !e.evidence_failure.empty();

  const bool just_after = !options.steps.empty();
  for (int n = 1; n <= spec.steps(); ++n) {
    if (just_after && options.steps.count(n) == 0) continue;
    const double points = options.rubric.points[static_cast<std::size_t>(n)];
    StepReport step = check_step(n, just_after, in, pre, points);
    step.visibility = options.rubric.visibility[static_cast<std::size_t>(n)];
    // A record of two runs leaves a step's rule unjudged wherever the record was its judge: the
    // files alone (which the program writes as it likes) earn nothing, or running twice would
    // be a way out of the record's checks.
    // So does a run on other numbers, wherever a check stood on them.
    if (step.status == Status::Pass && std::any_of(step.checks.begin(), step.checks.end(), [&](const Check& c) {
          return c.status == Status::Skip && ((!pre.record_unusable.empty() && c.needs_server) ||
                                              (!pre.other_numbers.empty() && c.message == kOtherNumbers));
        })) {
      step.status = Status::Skip;
      step.score = 0;
    }
    if (!problem.empty()) not_judged_on_evidence(step, taints_files, points);
    step.title = std::string(spec.step_title(n));
    for (const Check& c : step.checks) {
      ++report.checks_total;
      if (c.status != Status::Skip) ++report.checks_run;
    }
    report.score += step.score;
    report.max_score += step.max_score;
    report.steps.push_back(std::move(step));
  }
  // Passed: nothing failed, and something was checked. A step whose every check was skipped (no
  // server record) neither passes nor fails; the report says how much was verified.
  const auto any = [&](Status st) {
    return std::any_of(report.steps.begin(), report.steps.end(), [st](const StepReport& s) { return s.status == st; });
  };
  const bool erred = !problem.empty() || any(Status::Error);
  report.passed = !erred && !any(Status::Fail) && any(Status::Pass);
  report.status = erred               ? Status::Error
                  : report.passed     ? Status::Pass
                  : any(Status::Fail) ? Status::Fail
                                      : Status::Skip;
  if (!problem.empty()) report.notes.push_back("The evidence failed: " + problem);
  report.timeline = make_timeline(record ? &*record : nullptr, in.run ? &*in.run : nullptr,
                                  in.transitions.ok ? &*in.transitions.value : nullptr, spec, e.step_last_seq);
  infer_refusals(report.timeline, in);
  report.timeline.wait_ms = spec.rules.wait_ms;
  report.timeline.log_file = spec.files.transitions;
  if (in.close) {
    report.timeline.trials_closed_after = in.close->reading;
    report.timeline.trials_closed_at_most = in.close->high;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace cb::grade

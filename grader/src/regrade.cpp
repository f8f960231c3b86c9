#include "cb/grade/regrade.h"

#include <algorithm>

#include "cb/grade/conformance_check.h"
#include "cb/grade/variant.h"
#include "cb/atomic_file.h"
#include "format_common.h"
#include "parallel.h"

namespace cb::grade {
namespace {

std::string status_at(const nlohmann::json& j) {
  return j.is_object() && j.contains("status") && j["status"].is_string() ? j["status"].get<std::string>() : "";
}

// A regrade judges the answers the program gave the first time. A grader that asks what the
// first grade never did (another shrinker, another experiment, a grade from before every trace
// was judged) would be judging answers made up for it: the part is not judged then.
void require_kept(ConformancePart& part, const conformance::AnswerLog& log) {
  if (log.missed() == 0) return;
  part.status = Status::Error;
  part.score = 0;
  part.rule = "not_kept";
  part.message = "the regrade needs the answers to " + std::to_string(log.missed()) +
                 " trace(s) the first grade never asked for (it was graded by another version of cb-grade); grade it "
                 "again with --batch --run";
  part.example = {};
  part.rules.clear();
}

BatchRow regrade_one(const RegradeOptions& o, const std::string& name) {
  BatchRow row;
  row.submission = name;
  row.regraded = true;
  const auto fail = [&row](std::string why) {
    row.status = RowStatus::Error;
    row.error = std::move(why);
    return row;
  };
  const std::string at = o.dir + "/" + name;
  auto kept = read_kept_grade(at);
  if (!kept) return fail(kept.error().message);
  row.student = kept->inputs.student;
  if (kept->status != RowStatus::Graded) {
    row.status = kept->status;
    row.error = kept->error;
    return row;
  }
  GradeOptions options = o.grade;
  const LabSpec& base = options.spec ? *options.spec : lab_spec();
  if (!kept->inputs.student.empty()) {
    // A student's numbers are kept, not worked out again: the regrade needs no course key, and a
    // new lab spec changes everything but whose numbers are whose.
    auto numbers = numbers_of_settings(kept->inputs.numbers, at + "/grading.json: settings");
    if (!numbers) return fail(numbers.error().message);
    auto spec = with_numbers(base, *numbers, kept->inputs.student);
    if (!spec) return fail(at + ": " + spec.error().message);
    options.spec = std::make_shared<const LabSpec>(std::move(*spec));
  }
  const std::string shown = kept->report.is_object() ? kept->report.value("dir", at + "/files") : at + "/files";
  // A program that wrote none of the lab's files is kept with an empty files/, which a copy of the
  // kept folders that keeps no empty folder (git, a zip of files) loses: it is made again, empty,
  // so the regrade says what the grade said. Where it cannot be, opening it says why.
  (void)make_directories(at + "/files");
  auto files = SubmissionDir::open(at + "/files", shown);
  if (!files) return fail(files.error().message);
  Report report = grade_kept(*files, kept->record, kept->inputs, options);
  if (kept->answers) {
    ConformancePart part = conformance_part(kept->inputs, options.rubric, kept->answers->replaying());
    require_kept(part, *kept->answers);
    // The program's time is the first grade's: a regrade runs nothing.
    if (kept->report.contains("conformance") && kept->report["conformance"].is_object())
      part.seconds = kept->report["conformance"].value("seconds", part.seconds);
    add_conformance(report, std::move(part));
  }
  row.changes = changes(kept->report, report);
  if (auto w = write_reports(at, report); !w) return fail("rewriting its reports: " + w.error().message);
  row.status = RowStatus::Graded;
  row.report = std::move(report);
  return row;
}

}  // namespace

Report grade_kept(const SubmissionDir& files, const std::optional<Record>& record, const GradeInputs& in,
                  GradeOptions options) {
  options.server = in.server;
  options.expected_epoch = in.expected_epoch;
  options.record_private = in.record_private;
  options.foreign_connections = in.foreign_connections;
  if (!in.evidence_failure.empty()) options.evidence_failure = in.evidence_failure;
  Report report = grade(files, record, in.no_record_reason, options);
  report.run_output = in.run_output;
  report.program = in.program;
  report.sandbox = in.sandbox;
  return report;
}

ConformancePart conformance_part(const GradeInputs& in, const Rubric& rubric, const conformance::Programs& programs,
                                 std::chrono::milliseconds time_limit) {
  ConformanceOptions co;
  co.command = in.conformance_command;
  co.traces = in.conformance_traces;
  co.seed = in.conformance_seed;
  co.points = rubric.conformance;
  co.visibility = rubric.conformance_visibility;
  co.jobs = 1;  // a class runs side by side already
  co.time_limit = time_limit;
  if (!in.conformance_refused.first.empty())
    return conformance_refused(co, in.conformance_refused.first, in.conformance_refused.second);
  return check_conformance(co, programs);
}

std::string changes(const nlohmann::json& before, const Report& after) {
  std::vector<std::string> said;
  std::map<std::string, std::string> was;
  if (before.is_object() && before.contains("steps") && before["steps"].is_array())
    for (const auto& s : before["steps"])
      if (s.is_object() && s.contains("step")) was[std::to_string(s["step"].get<int>())] = status_at(s);
  for (const StepReport& s : after.steps) {
    const std::string n = std::to_string(s.step);
    const std::string now = to_string(s.status);
    if (was.count(n) == 0) {
      said.push_back("step " + n + ": new, " + now);
    } else if (was[n] != now) {
      said.push_back("step " + n + ": " + was[n] + " -> " + now);
    }
  }
  const std::string c_was = before.contains("conformance") ? status_at(before["conformance"]) : "";
  const std::string c_now = after.conformance ? to_string(after.conformance->status) : "";
  if (c_was != c_now)
    said.push_back("conformance: " + (c_was.empty() ? std::string("none") : c_was) + " -> " +
                   (c_now.empty() ? std::string("none") : c_now));
  const double score_was = before.value("score", 0.0);
  const double max_was = before.value("max_score", 0.0);
  if (score_was != after.score || max_was != after.max_score)
    said.push_back("score " + points(score_was) + "/" + points(max_was) + " -> " + points(after.score) + "/" +
                   points(after.max_score));
  if (before.value("lab_spec_sha256", "") != after.lab_spec_sha256) said.emplace_back("another lab spec");
  if (before.value("grader_version", "") != after.grader_version)
    said.push_back("grader " + before.value("grader_version", std::string("?")) + " -> " + after.grader_version);
  std::string out;
  for (const std::string& s : said) out += (out.empty() ? "" : "; ") + s;
  return out;
}

Result<std::vector<BatchRow>> regrade(const RegradeOptions& o) {
  auto names = submission_folders(o.dir);
  if (!names) return names.error();
  std::vector<BatchRow> rows(names->size());
  for_each_submission(
      rows.size(), o.jobs, [&](std::size_t i) { rows[i] = regrade_one(o, (*names)[i]); }, o.progress);
  return rows;
}

}  // namespace cb::grade

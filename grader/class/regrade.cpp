#include "cb/grade/regrade.h"

#include <algorithm>

#include "cb/grade/judge.h"
#include "cb/grade/variant.h"
#include "cb/atomic_file.h"
#include "cb/grade/format_common.h"
#include "parallel.h"

namespace cb::grade {
namespace {

std::string status_at(const nlohmann::json& j) {
  return j.is_object() && j.contains("status") && j["status"].is_string() ? j["status"].get<std::string>() : "";
}

}  // namespace

BatchRow regrade_submission(const std::string& dir, const std::string& name, const GradeOptions& grade, bool rewrite) {
  BatchRow row;
  row.submission = name;
  row.regraded = true;
  const auto fail = [&row](std::string why) {
    row.status = RowStatus::Error;
    row.error = std::move(why);
    return row;
  };
  const std::string at = dir + "/" + name;
  auto kept = read_kept_grade(at);
  if (!kept) return fail(kept.error().message);
  row.student = kept->evidence.student;
  if (kept->status != RowStatus::Graded) {
    row.status = kept->status;
    row.error = kept->error;
    row.fault = kept->fault;
    row.with_conformance = kept->with_conformance;
    row.max_score = grade.rubric.max_score(kept->with_conformance);
    return row;
  }
  GradeOptions options = grade;
  const LabSpec& base = options.spec ? *options.spec : lab_spec();
  if (!kept->evidence.student.empty()) {
    // A student's numbers are kept, not worked out again: the regrade needs no course key, and a
    // new lab spec changes everything but whose numbers are whose.
    auto numbers = numbers_of_settings(kept->evidence.numbers, at + "/grading.json: settings");
    if (!numbers) return fail(numbers.error().message);
    auto spec = with_numbers(base, *numbers, kept->evidence.student);
    if (!spec) return fail(at + ": " + spec.error().message);
    spec->numbers_from = kept->numbers_from;
    options.spec = std::make_shared<const LabSpec>(std::move(*spec));
  }
  const std::string shown = kept->report.is_object() ? kept->report.value("dir", at + "/files") : at + "/files";
  // A program that wrote none of the lab's files is kept with an empty files/, which a copy of the
  // kept folders that keeps no empty folder (git, a zip of files) loses: it is made again, empty,
  // so the regrade says what the grade said. Where it cannot be, opening it says why.
  (void)make_directories(at + "/files");
  auto files = SubmissionDir::open(at + "/files", shown);
  if (!files) return fail(files.error().message);
  // Read now, each file once: judge() reads the evidence, never a folder.
  kept->evidence.files = SubmissionDir::snapshot(*files, (options.spec ? *options.spec : lab_spec()).files.names());
  auto digest = evidence_sha256(at);
  if (!digest) return fail(digest.error().message);
  Report report = judge(kept->evidence, options);
  report.evidence_sha256 = *digest;
  const Changes changed = changes(kept->report, report);
  row.changes = changed.text();
  row.verdict_changed = changed.verdict_changed();
  row.score_changed = !changed.score.empty();
  row.evidence_changed = changed.evidence_changed;
  if (rewrite)
    if (auto w = write_reports(at, report); !w) return fail("rewriting its reports: " + w.error().message);
  row.status = RowStatus::Graded;
  row.report = std::move(report);
  return row;
}

Changes changes(const nlohmann::json& before, const Report& after) {
  Changes out;
  std::map<std::string, std::string> was;
  if (before.is_object() && before.contains("steps") && before["steps"].is_array())
    for (const auto& s : before["steps"])
      if (s.is_object() && s.contains("step")) was[std::to_string(s["step"].get<int>())] = status_at(s);
  for (const StepReport& s : after.steps) {
    const std::string n = std::to_string(s.step);
    const std::string now = to_string(s.status);
    if (was.count(n) == 0) {
      out.verdicts.push_back("step " + n + ": new, " + now);
    } else if (was[n] != now) {
      out.verdicts.push_back("step " + n + ": " + was[n] + " -> " + now);
    }
  }
  const nlohmann::json c = before.is_object() ? before.value("conformance", nlohmann::json()) : nlohmann::json();
  const std::string c_was = status_at(c);
  const std::string c_now = after.conformance ? to_string(after.conformance->status) : "";
  const auto shown = [](const std::string& s) { return s.empty() ? std::string("none") : s; };
  if (c_was != c_now) {
    out.verdicts.push_back("conformance: " + shown(c_was) + " -> " + shown(c_now));
  } else if (after.conformance && c.is_object() && c.value("rule", "") != after.conformance->rule) {
    out.verdicts.push_back("conformance rule: " + shown(c.value("rule", "")) + " -> " + shown(after.conformance->rule));
  }
  const double score_was = before.value("score", 0.0);
  const double max_was = before.value("max_score", 0.0);
  if (score_was != after.score || max_was != after.max_score)
    out.score = "score " + points(score_was) + "/" + points(max_was) + " -> " + points(after.score) + "/" +
                points(after.max_score);
  if (before.value("lab_spec_sha256", "") != after.lab_spec_sha256) out.provenance.emplace_back("another lab spec");
  // A grade kept before its evidence was hashed has nothing to hold it to.
  if (const std::string kept = before.value("evidence_sha256", ""); !kept.empty() && kept != after.evidence_sha256) {
    out.evidence_changed = true;
    out.provenance.emplace_back("the evidence kept is not what it was graded on (SHA-256 " + kept.substr(0, 12) +
                                " -> " + after.evidence_sha256.substr(0, 12) + ")");
  }
  if (before.value("grader_version", "") != after.grader_version)
    out.provenance.push_back("grader " + before.value("grader_version", std::string("?")) + " -> " +
                             after.grader_version);
  return out;
}

std::string Changes::text() const {
  std::vector<std::string> all = verdicts;
  if (!score.empty()) all.push_back(score);
  all.insert(all.end(), provenance.begin(), provenance.end());
  std::string out;
  for (const std::string& s : all) out += (out.empty() ? "" : "; ") + s;
  return out;
}

Result<std::vector<BatchRow>> regrade(const RegradeOptions& o) {
  auto names = submission_folders(o.dir);
  if (!names) return names.error();
  std::vector<BatchRow> rows(names->size());
  for_each_submission(
      rows.size(), o.jobs, [&](std::size_t i) { rows[i] = regrade_submission(o.dir, (*names)[i], o.grade, o.rewrite); },
      [&](std::size_t, std::size_t done, std::size_t total) {
        if (o.progress) o.progress(done, total);
      });
  return rows;
}

}  // namespace cb::grade

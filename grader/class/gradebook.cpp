// The class's gradebook: a row a submission, enough to see who needs what without opening any
// report (docs/TEACHING.md lists the columns).
#include <algorithm>

#include "cb/grade/batch.h"
#include "cb/hmac_sha256.h"
#include "cb/utf8_text.h"
#include "cb/grade/format_common.h"

namespace cb::grade {
namespace {

// The first check of a step that decided it (a failure, else an error, else a skip's reason).
const Check* deciding_check(const StepReport& s) {
  if (s.status == Status::Pass) return nullptr;
  for (const Check& c : s.checks)
    if (c.status == s.status) return &c;
  return nullptr;
}

const StepReport* step_of(const Report& r, int n) {
  for (const StepReport& s : r.steps)
    if (s.step == n) return &s;
  return nullptr;
}

std::string fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A row with no grade of its own has no score, not a zero an LMS would record: a superseded
// folder's grade is its student's later one, and a not_graded row is the grader's failure.
bool scoreless(RowStatus s) { return s == RowStatus::Superseded || s == RowStatus::NotGraded; }

}  // namespace

const char* to_string(RowStatus s) noexcept {
  switch (s) {
    case RowStatus::Graded: return "graded";
    case RowStatus::Empty: return "empty";
    case RowStatus::Error: return "error";
    case RowStatus::NotGraded: return "not_graded";
    case RowStatus::Superseded: return "superseded";
    case RowStatus::NoSubmission: return "no_submission";
  }
  return "error";
}

std::string csv_cell(const std::string& text) {
  // Bytes that are not UTF-8 (a folder's name, a program's message) are replaced as the JSON
  // gradebook replaces them, so the two carry the same cells and an import reads valid text.
  std::string s =
      invalid_utf8_at(text) == std::string::npos
          ? text
          : nlohmann::json::parse(nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                .get<std::string>();
  // OWASP's advice for CSV injection: a cell a spreadsheet would read as a formula starts with
  // an apostrophe, which it shows as text and does not evaluate.
  if (!s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r'))
    s.insert(0, 1, '\'');
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string gradebook_csv(const std::vector<BatchRow>& rows) {
  const bool variants = std::any_of(rows.begin(), rows.end(), [](const BatchRow& r) { return !r.student.empty(); });
  const bool regrade = std::any_of(rows.begin(), rows.end(), [](const BatchRow& r) { return r.regraded; });
  std::string out = "submission";
  if (variants) out += ",student,numbers";
  out += ",status,score,max_score,passed";
  for (int s = 1; s <= kGradedSteps; ++s) {
    const std::string n = std::to_string(s);
    out += ",step" + n + ",step" + n + "_check,step" + n + "_message";
  }
  out +=
      ",conformance,conformance_rule,conformance_seed,exit_code,seconds,timed_out,sandbox,grader_version,lab_spec,"
      "evidence_sha256";
  if (regrade) out += ",change,changes";
  // Whose fault a row that is not a grade is (fault.h): the grader's is graded again, never the
  // student's.
  out += ",fault,error\n";
  for (const BatchRow& row : rows) {
    const Report* r = row.report ? &*row.report : nullptr;
    out += csv_cell(row.submission);
    if (variants) out += "," + csv_cell(row.student) + "," + csv_cell(r != nullptr ? r->numbers : std::string());
    out += std::string(",") + to_string(row.status);
    if (r == nullptr) {
      out += std::string(scoreless(row.status) ? ",," : ",0,") + points(row.max_score) + ",false";
      for (int s = 1; s <= kGradedSteps; ++s) out += ",,,";
      out += ",,,,,,,,,,";
    } else {
      out += "," + points(r->score) + "," + points(r->max_score) + "," + (r->passed ? "true" : "false");
      for (int s = 1; s <= kGradedSteps; ++s) {
        const StepReport* step = step_of(*r, s);
        const Check* c = step != nullptr ? deciding_check(*step) : nullptr;
        out += std::string(",") + (step != nullptr ? to_string(step->status) : "");
        out += "," + (c != nullptr ? csv_cell(c->id) : std::string()) + "," +
               (c != nullptr ? csv_cell(c->message) : std::string());
      }
      if (r->conformance) {
        out += std::string(",") + to_string(r->conformance->status) + "," + csv_cell(r->conformance->rule) + "," +
               std::to_string(r->conformance->traces.seed);
      } else {
        out += ",,,";
      }
      if (r->program) {
        out += "," + std::to_string(r->program->exit_code) + "," + fixed(r->program->seconds, "%.2f") + "," +
               (r->program->timed_out ? "true" : "false");
      } else {
        out += ",,,";
      }
      out += "," + (r->sandbox ? csv_cell(r->sandbox->containment) : std::string()) + "," +
             csv_cell(r->grader_version) + "," + csv_cell(r->lab_spec_sha256) + "," + r->evidence_sha256;
    }
    if (regrade)
      out += std::string(",") +
             (row.verdict_changed    ? "verdict"
              : row.evidence_changed ? "evidence"
              : row.changes.empty()  ? ""
                                     : "rescaled") +
             "," + csv_cell(row.changes);
    out += std::string(",") + (row.fault == Fault::None ? "" : std::string(to_string(row.fault))) + "," +
           csv_cell(row.error) + "\n";
  }
  return out;
}

nlohmann::json gradebook_row_json(const BatchRow& row) {
  nlohmann::json j{{"submission", row.submission}, {"status", to_string(row.status)}};
  if (!row.student.empty()) j["student"] = row.student;
  if (!row.error.empty()) j["error"] = row.error;
  if (row.fault != Fault::None) j["fault"] = to_string(row.fault);
  if (row.regraded) {
    j["change"] = row.verdict_changed    ? "verdict"
                  : row.evidence_changed ? "evidence"
                  : row.changes.empty()  ? "none"
                                         : "rescaled";
    j["changes"] = row.changes;
  }
  if (!row.report) {
    j["score"] = scoreless(row.status) ? nlohmann::json(nullptr) : nlohmann::json(0);
    j["max_score"] = row.max_score;
    j["passed"] = false;
    return j;
  }
  const Report& r = *row.report;
  j["numbers"] = r.numbers;
  j["score"] = r.score;
  j["max_score"] = r.max_score;
  j["passed"] = r.passed;
  j["grader_version"] = r.grader_version;
  j["lab_spec_sha256"] = r.lab_spec_sha256;
  if (!r.evidence_sha256.empty()) j["evidence_sha256"] = r.evidence_sha256;
  nlohmann::json steps = nlohmann::json::object();
  nlohmann::json failed = nlohmann::json::array();
  for (const StepReport& s : r.steps) {
    nlohmann::json step{{"status", to_string(s.status)}, {"score", s.score}};
    if (const Check* c = deciding_check(s)) {
      step["check"] = c->id;
      step["message"] = c->message;
    }
    steps[std::to_string(s.step)] = std::move(step);
    for (const Check& c : s.checks)
      if (c.status == Status::Fail) failed.push_back(c.id);
  }
  j["steps"] = std::move(steps);
  j["failed"] = std::move(failed);  // every check that failed, by id
  if (r.conformance)
    j["conformance"] = {{"status", to_string(r.conformance->status)},
                        {"score", r.conformance->score},
                        {"rule", r.conformance->rule},
                        {"message", r.conformance->message},
                        {"seed", r.conformance->traces.seed},
                        {"traces", r.conformance->traces.count}};
  if (r.program)
    j["program"] = {{"exit_code", r.program->exit_code},
                    {"seconds", r.program->seconds},
                    {"timed_out", r.program->timed_out},
                    {"limit_hit", r.program->limit_hit}};
  if (r.sandbox) j["sandbox"] = r.sandbox->containment;
  return j;
}

std::string rows_digest(std::vector<nlohmann::json> rows) {
  // What a regrade changed is the history of a grade, not the grade: the digest is of the grades
  // alone, so a regrade's gradebook and the batch's of the same grades have one digest.
  for (nlohmann::json& row : rows)
    if (row.is_object()) {
      row.erase("change");
      row.erase("changes");
    }
  std::stable_sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("submission", "") < b.value("submission", "");
  });
  std::string lines;
  for (const nlohmann::json& row : rows)
    lines += row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return hex(sha256(lines));
}

std::string gradebook_digest(const std::vector<BatchRow>& rows) {
  std::vector<nlohmann::json> json_rows;
  json_rows.reserve(rows.size());
  for (const BatchRow& row : rows) json_rows.push_back(gradebook_row_json(row));
  return rows_digest(std::move(json_rows));
}

std::string gradebook_json(const std::vector<BatchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BatchRow& row : rows) out.push_back(gradebook_row_json(row));
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cb::grade

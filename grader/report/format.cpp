#include <algorithm>

#include "cb/grade/files.h"
#include "cb/html_page.h"
#include "cb/grade/format_common.h"

namespace cb::grade {

std::optional<Format> parse_format(std::string_view name) {
  if (name == "text") return Format::Text;
  if (name == "json") return Format::Json;
  if (name == "junit") return Format::Junit;
  if (name == "gradescope") return Format::Gradescope;
  if (name == "html") return Format::Html;
  if (name == "classroom") return Format::Classroom;
  return std::nullopt;
}

std::string render(const Report& report, Format format, bool colour) {
  switch (format) {
    case Format::Text: return render_text(report, colour);
    case Format::Json: return render_json(report);
    case Format::Junit: return render_junit(report);
    case Format::Gradescope: return render_gradescope(report);
    case Format::Html: return render_html(report);
    case Format::Classroom: return render_classroom(report);
  }
  return {};
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& s : r.steps) {
    nlohmann::json checks = nlohmann::json::array();
    for (const Check& c : s.checks) {
      checks.push_back({{"id", c.id},
                        {"name", c.name},
                        {"status", to_string(c.status)},
                        {"message", c.message},
                        {"expected", c.expected},
                        {"actual", c.actual},
                        {"needs_server", c.needs_server}});
    }
    steps.push_back({{"step", s.step},
                     {"title", s.title},
                     {"status", to_string(s.status)},
                     {"score", s.score},
                     {"max_score", s.max_score},
                     {"checks", std::move(checks)}});
  }
  nlohmann::json evidence = nullptr;
  if (!r.server.empty())
    evidence = {{"server", r.server},
                {"epoch", r.evidence.epoch},
                {"requests", r.evidence.requests},
                {"runs", r.evidence.runs},
                {"private_server", r.evidence.private_server},
                {"foreign_connections", r.evidence.foreign_connections},
                {"problem", r.evidence.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.evidence.problem)}};
  nlohmann::json out{{"score", r.score},
                     {"max_score", r.max_score},
                     {"passed", r.passed},
                     {"status", to_string(r.status)},
                     {"steps", std::move(steps)},
                     {"dir", r.dir},
                     {"grader_version", r.grader_version},
                     {"lab_spec_sha256", r.lab_spec_sha256},
                     {"numbers", r.numbers},
                     {"student", r.student.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.student)},
                     {"server", r.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.server)},
                     {"evidence", std::move(evidence)},
                     {"notes", r.notes},
                     {"headline", r.headline.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.headline)},
                     {"checks_run", r.checks_run},
                     {"checks_total", r.checks_total},
                     {"seconds", r.seconds}};
  if (!r.evidence_sha256.empty()) out["evidence_sha256"] = r.evidence_sha256;
  if (!r.evidence_note.empty()) out["evidence_note"] = r.evidence_note;
  if (!r.run_output.empty()) out["run_output"] = r.run_output;
  if (r.conformance) out["conformance"] = conformance_json(*r.conformance);
  if (r.program) {
    out["program"] = {
        {"seconds", r.program->seconds},
        {"exit_code", r.program->exit_code},
        {"timed_out", r.program->timed_out},
        {"limit_seconds", r.program->limit_seconds},
        {"limit_hit", r.program->limit_hit.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.program->limit_hit)},
        {"limit_text",
         r.program->limit_text.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.program->limit_text)}};
  }
  if (r.sandbox) {
    nlohmann::json sandbox = r.sandbox->details;
    sandbox["containment"] = r.sandbox->containment;
    sandbox["trusted"] = r.sandbox->trusted;
    sandbox["description"] = r.sandbox->description;
    // Where the program is described: with the lab run, or with the conformance part alone.
    if (out.contains("program")) out["program"]["sandbox"] = sandbox;
    if (out.contains("conformance")) out["conformance"]["sandbox"] = sandbox;
  }
  return out;
}

std::string render_json(const Report& r) {
  return to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_gradescope(const Report& r) {
  nlohmann::json tests = nlohmann::json::array();
  for (const StepReport& s : r.steps) {
    std::string output = check_lines(s);
    if (s.status == Status::Skip) output = "Not checked: " + output;
    // A step that passed and earns less than its points was capped by the rubric (judge.h): it
    // says so, and counts as not passed, as a test that did not earn its points.
    const bool capped = s.status == Status::Pass && s.score < s.max_score;
    if (capped)
      for (const std::string& note : r.notes)
        if (note.rfind("The lab's steps earn at most", 0) == 0) output = "Passed, but capped. " + note + "\n" + output;
    tests.push_back({{"name", "Step " + std::to_string(s.step) + ": " + s.title},
                     {"number", std::to_string(s.step)},
                     {"score", s.score},
                     {"max_score", s.max_score},
                     {"status", s.status == Status::Pass && !capped ? "passed" : "failed"},
                     {"tags", check_ids(s)},
                     {"output", output},
                     {"output_format", "text"},
                     {"visibility", s.visibility}});
  }
  if (r.conformance) {
    const ConformancePart& c = *r.conformance;
    tests.push_back({{"name", "Conformance: your breaker on " + std::to_string(c.traces.count) + " generated traces"},
                     {"number", "C"},
                     {"score", c.score},
                     {"max_score", c.max_score},
                     {"status", c.status == Status::Pass ? "passed" : "failed"},
                     {"tags", c.rule.empty() ? nlohmann::json::array() : nlohmann::json::array({c.rule})},
                     {"output", conformance_lines(c)},
                     {"output_format", "text"},
                     {"visibility", c.visibility}});
  }
  std::string summary = r.headline.empty() ? std::string() : r.headline + "\n";
  // While a test is held back (hidden, or shown after the due date or once grades are
  // published), the total would tell what it scored: the output, which students always see,
  // counts only the tests they are shown.
  double shown = 0;
  double shown_max = 0;
  bool held_back = false;
  for (const auto& t : tests) {
    if (t["visibility"] != "visible") {
      held_back = true;
      continue;
    }
    shown += t["score"].get<double>();
    shown_max += t["max_score"].get<double>();
  }
  if (held_back) {
    summary += "Score on the tests shown now " + points(shown) + "/" + points(shown_max) +
               "; the others, and the total, are shown later (after the due date, or when grades are published). "
               "Graded on " +
               r.numbers + ".";
  } else {
    summary += "Score " + points(r.score) + "/" + points(r.max_score) + ". " + std::to_string(r.checks_run) + " of " +
               std::to_string(r.checks_total) + " checks run, on " + r.numbers + ".";
  }
  if (!r.evidence_note.empty()) summary += " " + r.evidence_note;
  for (const std::string& note : r.notes) summary += "\n" + note;
  if (r.status == Status::Error)
    summary +=
        "\nThis submission was NOT graded: the evidence failed, which is not the submission's fault. Ask for a regrade.";
  if (r.program) summary += "\n" + program_line(*r.program);
  if (r.sandbox) summary += "\n" + sandbox_line(*r.sandbox);
  // Gradescope shows text, not a page: the page is one command away on the student's machine.
  if (r.program)
    summary +=
        "\nYour run drawn on a time axis: in your kit, cb-grade --run 'sh run.sh' --dir out --format html -o report.html";
  if (!r.run_output.empty()) summary += "\n\nYour program's output (the end of it):\n" + r.run_output;
  summary += "\nGraded by cb-grade " + r.grader_version + " on lab spec " + r.lab_spec_sha256.substr(0, 12) + ".";
  nlohmann::json extra{{"grader_version", r.grader_version}, {"lab_spec_sha256", r.lab_spec_sha256}};
  if (r.conformance) extra["conformance_seed"] = r.conformance->traces.seed;
  if (!r.student.empty()) extra["student"] = r.student;
  nlohmann::json out{{"score", r.score},
                     {"max_score", r.max_score},
                     {"execution_time", r.wall_seconds > 0 ? r.wall_seconds : r.seconds},
                     {"output", summary},
                     {"output_format", "text"},
                     {"stdout_visibility", r.stdout_visibility},
                     {"extra_data", std::move(extra)},
                     {"tests", std::move(tests)}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// GitHub Classroom's reporter (classroom-resources/autograding-grading-reporter) posts the sum of
// the tests' scores out of max_score, and fails the check run when status is "fail" or "error".
std::string render_classroom(const Report& r) {
  const auto status_of = [](Status s) { return s == Status::Pass ? "pass" : s == Status::Error ? "error" : "fail"; };
  nlohmann::json tests = nlohmann::json::array();
  for (const StepReport& s : r.steps)
    tests.push_back({{"name", "Step " + std::to_string(s.step) + ": " + s.title},
                     {"status", status_of(s.status)},
                     {"score", s.score},
                     {"message", s.status == Status::Pass ? std::string() : check_lines(s)}});
  if (r.conformance)
    tests.push_back(
        {{"name", "Conformance: your breaker on " + std::to_string(r.conformance->traces.count) + " generated traces"},
         {"status", status_of(r.conformance->status)},
         {"score", r.conformance->score},
         {"message", r.conformance->status == Status::Pass ? std::string() : conformance_lines(*r.conformance)}});
  const nlohmann::json out{{"version", 1},
                           {"status", status_of(r.status)},
                           {"max_score", r.max_score},
                           {"grader_version", r.grader_version},
                           {"tests", std::move(tests)}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string xml_escape(std::string_view raw) { return html_escape(raw); }

std::string render_junit(const Report& r) {
  int failures = 0;
  int errors = 0;
  int skipped = 0;
  std::string cases;
  for (const StepReport& s : r.steps) {
    const bool fault = s.status == Status::Error;
    char time[32];
    std::snprintf(time, sizeof time, "%.6f", s.seconds);
    cases += "    <testcase name=\"" + xml_escape("Step " + std::to_string(s.step) + ": " + s.title) +
             "\" classname=\"cb-lab.step" + std::to_string(s.step) + "\" time=\"" + time + "\">\n";
    cases += "      <properties>\n        <property name=\"score\" value=\"" + points(s.score) +
             "\"/>\n        <property name=\"max_score\" value=\"" + points(s.max_score) +
             "\"/>\n      </properties>\n";
    std::string first;
    for (const Check& c : s.checks)
      if (first.empty() && c.status == s.status && s.status != Status::Pass)
        first = c.id + ": " + c.name + (c.message.empty() ? "" : ": " + c.message);
    const std::string body = xml_escape(check_lines(s));
    if (fault) {
      ++errors;
      cases += "      <error message=\"" + xml_escape(first) + "\" type=\"grader\">" + body + "</error>\n";
    } else if (s.status == Status::Fail) {
      ++failures;
      cases += "      <failure message=\"" + xml_escape(first) + "\" type=\"check\">" + body + "</failure>\n";
    } else if (s.status == Status::Skip) {
      ++skipped;
      cases += "      <skipped message=\"" + xml_escape(first) + "\"/>\n";
    }
    cases += "      <system-out>" + body + "</system-out>\n    </testcase>\n";
  }
  if (r.conformance) {
    const ConformancePart& c = *r.conformance;
    char time[32];
    std::snprintf(time, sizeof time, "%.6f", c.seconds);
    const std::string body = xml_escape(conformance_lines(c));
    cases +=
        "    <testcase name=\"Conformance: your breaker on generated traces\" classname=\"cb-lab.conformance\" time=\"" +
        std::string(time) + "\">\n      <properties>\n        <property name=\"score\" value=\"" + points(c.score) +
        "\"/>\n        <property name=\"max_score\" value=\"" + points(c.max_score) +
        "\"/>\n        <property name=\"seed\" value=\"" + std::to_string(c.traces.seed) +
        "\"/>\n      </properties>\n";
    if (c.status == Status::Error) {
      ++errors;
      cases += "      <error message=\"" + xml_escape(c.message) + "\" type=\"grader\">" + body + "</error>\n";
    } else if (c.status == Status::Fail) {
      ++failures;
      cases += "      <failure message=\"" + xml_escape(c.rule + ": " + c.message) + "\" type=\"conformance\">" + body +
               "</failure>\n";
    }
    cases += "      <system-out>" + body + "</system-out>\n    </testcase>\n";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.6f", r.seconds);
  const std::string counts = "tests=\"" + std::to_string(r.steps.size() + (r.conformance ? 1 : 0)) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
                             std::to_string(skipped) + "\" time=\"" + time + "\"";
  std::string program;
  if (r.program) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", r.program->seconds);
    program = "      <property name=\"program_seconds\" value=\"" + std::string(seconds) +
              "\"/>\n      <property name=\"program_exit_code\" value=\"" + std::to_string(r.program->exit_code) +
              "\"/>\n      <property name=\"program_timed_out\" value=\"" + (r.program->timed_out ? "true" : "false") +
              "\"/>\n";
  }
  if (r.sandbox)
    program += "      <property name=\"sandbox\" value=\"" + xml_escape(r.sandbox->containment) +
               "\"/>\n      <property name=\"sandbox_trusted\" value=\"" + (r.sandbox->trusted ? "true" : "false") +
               "\"/>\n      <property name=\"sandbox_description\" value=\"" + xml_escape(r.sandbox->description) +
               "\"/>\n";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"cb-grade\" " + counts +
         ">\n  <testsuite name=\"cb-lab\" " + counts + ">\n    <properties>\n      <property name=\"score\" value=\"" +
         points(r.score) + "\"/>\n      <property name=\"max_score\" value=\"" + points(r.max_score) +
         "\"/>\n      <property name=\"dir\" value=\"" + xml_escape(r.dir) +
         "\"/>\n      <property name=\"numbers\" value=\"" + xml_escape(r.numbers) +
         "\"/>\n      <property name=\"server\" value=\"" + xml_escape(r.server) +
         "\"/>\n      <property name=\"record_runs\" value=\"" + std::to_string(r.evidence.runs) +
         "\"/>\n      <property name=\"private_server\" value=\"" + (r.evidence.private_server ? "true" : "false") +
         "\"/>\n      <property name=\"foreign_connections\" value=\"" +
         std::to_string(r.evidence.foreign_connections) + "\"/>\n      <property name=\"status\" value=\"" +
         to_string(r.status) + "\"/>\n" + program + "    </properties>\n" + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace cb::grade

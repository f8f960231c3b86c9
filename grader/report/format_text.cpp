#include <cstdio>

#include "cb/grade/files.h"
#include "cb/grade/format_common.h"

namespace cb::grade {
namespace {

struct Paint {
  bool on;
  [[nodiscard]] std::string operator()(const char* code, const std::string& s) const {
    return on ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  }
};

std::string label(Status s, const Paint& paint) {
  switch (s) {
    case Status::Pass: return paint("32", "ok  ");
    case Status::Fail: return paint("1;31", "FAIL");
    case Status::Skip: return paint("33", "skip");
    case Status::Error: return paint("1;35", "ERR ");
  }
  return "?";
}

}  // namespace

namespace {

std::string score_line(const Report& r, int failed, int skipped) {
  std::string out = "Score " + points(r.score) + "/" + points(r.max_score);
  if (r.status == Status::Error && r.evidence.problem.empty())
    out += ": NOT GRADED, the grader could not run the program";
  else if (r.status == Status::Error && r.evidence.taken_by_grader)
    out += ": NOT GRADED, the evidence failed (the grader's fault, not the submission's)";
  else if (r.status == Status::Error)
    out +=
        ": NOT GRADED, the record given cannot be judged (the first lines say why); nothing counts against the "
        "submission";
  else if (failed > 0)
    out += ": " + std::to_string(failed) + (r.conformance ? " part(s) failed" : " step(s) failed");
  else if (r.passed)
    out += r.steps.empty() ? ": passed" : ": every step checked passed";
  out += ". " + std::to_string(r.checks_run) + " of " + std::to_string(r.checks_total) + " checks run";
  if (skipped > 0 || r.checks_run < r.checks_total) {
    out += " (" + std::to_string(r.checks_total - r.checks_run) + " skipped";
    // The hint fits the evidence: without a record it is how to get one; with one, the skips
    // come from checks whose prerequisites failed, and each says which.
    if (r.server.empty()) out += "; the server's record verifies the rest: --server or --run";
    out += ")";
  }
  return out + ".";
}

}  // namespace

std::string score_line(const Report& r) {
  int failed = r.conformance && r.conformance->status == Status::Fail ? 1 : 0;
  int skipped = 0;
  for (const StepReport& s : r.steps) {
    failed += s.status == Status::Fail ? 1 : 0;
    skipped += s.status == Status::Skip ? 1 : 0;
  }
  return score_line(r, failed, skipped);
}

std::string render_text_raw(const Report& r, bool colour);

std::string render_text(const Report& r, bool colour) { return valid_utf8(render_text_raw(r, colour)); }

std::string render_text_raw(const Report& r, bool colour) {
  const Paint paint{colour};
  // Whatever came from the submission (its files, its output, its paths) is shown through
  // printable(): a program's bytes must not steer the terminal that reads the report. The colour
  // codes below are the report's own.
  std::string out = "cb-grade " + printable(r.dir);
  if (r.steps.empty() && r.conformance) {
    out = "cb-grade --conformance " + printable(shell_quoted(r.conformance->traces.command)) + "\n";
  } else if (r.server.empty()) {
    out += "  (files only: " + printable(r.evidence_note) + ")\n";
  } else {
    out += "  (evidence: " + printable(r.server) + ", record epoch " + std::to_string(r.evidence.epoch) + ", " +
           std::to_string(r.evidence.requests) + " request(s), " + std::to_string(r.evidence.runs) +
           (r.evidence.runs == 1 ? " lab run)\n" : " lab runs)\n");
  }
  // Which numbers, always: a student with their own who graded on the handout's sees it first.
  if (!r.numbers.empty()) out += "  graded on " + printable(r.numbers) + "\n";
  for (const std::string& note : r.notes) out += paint("1;35", "! " + printable(note)) + "\n";
  if (!r.headline.empty()) out += "\n" + paint("1;31", printable(r.headline)) + "\n";
  int failed = 0;
  int skipped = 0;
  for (const StepReport& s : r.steps) {
    failed += s.status == Status::Fail ? 1 : 0;
    skipped += s.status == Status::Skip ? 1 : 0;
    const char* verdict = s.status == Status::Pass    ? "PASS"
                          : s.status == Status::Fail  ? "FAIL"
                          : s.status == Status::Error ? "ERROR"
                                                      : "SKIP";
    const char* code = s.status == Status::Pass    ? "1;32"
                       : s.status == Status::Fail  ? "1;31"
                       : s.status == Status::Error ? "1;35"
                                                   : "1;33";
    // Collapsed under a headline: one line a step, together.
    out += (r.headline.empty() || s.step == r.steps.front().step ? "\nStep " : "Step ") + std::to_string(s.step) +
           "  " + s.title + "  " + paint(code, verdict) + "  " + points(s.score) + "/" + points(s.max_score) + "\n";
    if (!r.headline.empty()) continue;  // the headline said it; each check would say the same
    for (const Check& c : s.checks) {
      out += "    " + label(c.status, paint) + "  " + printable(c.name) + "  [" + c.id + "]\n";
      if (c.status == Status::Pass) continue;
      if (!c.message.empty()) out += "          " + printable(c.message) + "\n";
      if (c.status == Status::Fail && !c.expected.is_null())
        out += "          expected " + printable(shown(c.expected)) + ", got " + printable(shown(c.actual)) + "\n";
    }
  }
  if (r.conformance) {
    const ConformancePart& c = *r.conformance;
    failed += c.status == Status::Fail ? 1 : 0;
    const char* verdict = c.status == Status::Pass ? "PASS" : c.status == Status::Fail ? "FAIL" : "ERROR";
    const char* code = c.status == Status::Pass ? "1;32" : c.status == Status::Fail ? "1;31" : "1;35";
    out += "\nConformance  your breaker, call by call, on generated traces  " + paint(code, verdict) + "  " +
           points(c.score) + "/" + points(c.max_score) + "\n";
    std::string lines = printable(conformance_lines(c));
    for (std::size_t at = 0; at < lines.size();) {
      const auto nl = lines.find('\n', at);
      out += "    " + lines.substr(at, nl - at) + "\n";
      at = nl == std::string::npos ? lines.size() : nl + 1;
    }
  }
  out += "\n" + score_line(r, failed, skipped) + "\n";
  if (r.program) out += program_line(*r.program) + "\n";
  if (r.sandbox)
    out += (r.sandbox->trusted ? sandbox_line(*r.sandbox) : paint("1;35", sandbox_line(*r.sandbox))) + "\n";
  if (!r.run_output.empty()) out += "\nYour program's output (the end of it):\n" + printable(r.run_output) + "\n";
  return out;
}

}  // namespace cb::grade

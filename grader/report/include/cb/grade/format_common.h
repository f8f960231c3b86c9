#pragma once
// Helpers the report formats share.

#include <cstdio>
#include <string>
#include <vector>

#include "cb/grade/format.h"

namespace cb::grade {

// 1 -> "1", 0.5 -> "0.5", 12.25 -> "12.25"
inline std::string points(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

// A JSON value as a person reads it: strings without their quotes.
inline std::string shown(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "Your program ran for 3.12 s and exited with 0."
inline std::string program_line(const ProgramRun& p) {
  char buf[320];
  if (p.timed_out)
    std::snprintf(buf, sizeof buf,
                  "Your program ran for %.2f s and was killed at the time limit (%g s), a second after it was asked "
                  "for its threads' stacks (SIGQUIT: a JVM or a Go program prints them in its output); it is graded "
                  "as far as it got.",
                  p.seconds, p.limit_seconds);
  else
    std::snprintf(buf, sizeof buf, "Your program ran for %.2f s and exited with %d.", p.seconds, p.exit_code);
  std::string line = buf;
  if (!p.limit_text.empty()) line += " It ran into " + p.limit_text + " and is graded as far as it got.";
  return line;
}

// "Sandbox: namespaces (uid 60001, its own; ...)": what the programs ran under.
inline std::string sandbox_line(const SandboxInfo& s) {
  return std::string(s.trusted ? "Sandbox: " : "NOT TO BE TRUSTED: no sandbox: ") + s.description;
}

// A word the shell reads back as exactly `s`: 'it'\''s'.
inline std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One step's checks as plain lines, for the formats that carry text (junit, gradescope).
inline std::string check_lines(const StepReport& s) {
  std::string out;
  for (const Check& c : s.checks) {
    out += std::string(c.status == Status::Pass    ? "[ok]    "
                       : c.status == Status::Fail  ? "[FAIL]  "
                       : c.status == Status::Error ? "[ERROR] "
                                                   : "[skip]  ") +
           c.name + " (" + c.id + ")\n";
    if (c.status != Status::Pass && !c.message.empty()) out += "        " + c.message + "\n";
  }
  return out;
}

// The ids of a step's checks, for formats that tag tests (Gradescope).
inline std::vector<std::string> check_ids(const StepReport& s) {
  std::vector<std::string> ids;
  for (const Check& c : s.checks) ids.push_back(c.id);
  return ids;
}

// The conformance part as plain lines: what was run, and on a failure the table of the shrunk
// trace, what it is about, and how to repeat it (text, junit, gradescope).
std::string conformance_lines(const ConformancePart& c);
nlohmann::json conformance_json(const ConformancePart& c);

std::string render_text(const Report& r, bool colour);
std::string render_json(const Report& r);
std::string render_junit(const Report& r);
std::string render_gradescope(const Report& r);
std::string render_html(const Report& r);
std::string render_classroom(const Report& r);

}  // namespace cb::grade

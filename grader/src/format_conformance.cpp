// The conformance part in the report's formats.
#include <cstdio>

#include "cb/grade/conformance_traces.h"
#include "format_common.h"

namespace cb::grade {
namespace {

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string conformance_lines(const ConformancePart& c) {
  std::string out;
  if (c.status == Status::Error) return c.message + "\n";
  if (c.status == Status::Pass)
    return "answered every call of " + std::to_string(c.traces) + " generated traces as the rules do (seed " +
           std::to_string(c.seed) + ")\n";
  out += "seed " + std::to_string(c.seed) + ": " + std::to_string(c.agreed) +
         " trace(s) answered as the rules do, then trace " + std::to_string(c.failing_trace + 1) + " (" +
         std::to_string(c.original_calls) + " calls) was not";
  if (!c.rows.empty())
    out += "; shrunk to " + std::to_string(c.rows.size()) + " call(s)" +
           (c.shrunk_fully ? "" : " (as far as the time allowed)");
  out += "\n";
  out += "what it got wrong [" + c.rule + "]: " + c.message + "\n";
  if (!c.rows.empty()) {
    out += "settings: " + (c.input.empty() ? c.settings.dump() : c.input.front()) + "\n";
    out += "  call  t_ms        result   expected            your program\n";
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      const ConformanceRow& r = c.rows[i];
      out += "  " + padded(std::to_string(i + 1), 6) + padded(conformance::ms_text(r.t_ms), 12) + padded(r.result, 9) +
             padded(r.expected, 20) + (r.got.empty() ? "(no answer)" : r.got) + (r.differs ? "   <- differs" : "") +
             "\n";
    }
  }
  std::string input;
  for (const std::string& line : c.input) input += " " + shell_quoted(line);
  out += "to replay it: printf '%s\\n'" + input + " | " + c.command + "\n";
  out += "to repeat the run: cb-grade --conformance " + shell_quoted(c.command) + " --seed " + std::to_string(c.seed) +
         "\n";
  if (!c.stderr_tail.empty())
    out += "its standard error (the end of it):\n" + c.stderr_tail + (c.stderr_tail.back() == '\n' ? "" : "\n");
  return out;
}

nlohmann::json conformance_json(const ConformancePart& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ConformanceRow& r : c.rows)
    rows.push_back({{"t_ms", r.t_ms},
                    {"result", r.result},
                    {"expected", r.expected},
                    {"got", r.got.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.got)},
                    {"differs", r.differs}});
  nlohmann::json out{
      {"command", c.command},          {"seed", c.seed},   {"traces", c.traces},       {"agreed", c.agreed},
      {"status", to_string(c.status)}, {"score", c.score}, {"max_score", c.max_score}, {"seconds", c.seconds}};
  if (c.status == Status::Fail) {
    out["failing_trace"] = c.failing_trace + 1;
    out["original_calls"] = c.original_calls;
    out["settings"] = c.settings;
    out["input"] = c.input;
    out["rows"] = std::move(rows);
    out["shrink_runs"] = c.shrink_runs;
    out["shrink_seconds"] = c.shrink_seconds;
    out["shrunk_fully"] = c.shrunk_fully;
  }
  if (!c.rule.empty()) out["rule"] = c.rule;
  if (!c.message.empty()) out["message"] = c.message;
  if (!c.stderr_tail.empty()) out["stderr_tail"] = c.stderr_tail;
  return out;
}

}  // namespace cb::grade

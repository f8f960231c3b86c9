// The conformance part in the report's formats.
#include <algorithm>
#include <cstdio>

#include "cb/grade/format_common.h"
#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

namespace {

std::string calls_text(std::size_t n) { return how_many(static_cast<long long>(n), "call", "calls"); }
std::string traces_text(int n) { return how_many(n, "trace", "traces"); }

// A counterexample as a table, and the line that replays it by hand.
std::string example_lines(const Counterexample& e, const std::string& command) {
  std::string out;
  if (!e.rows.empty()) {
    const bool alone =
        std::any_of(e.rows.begin(), e.rows.end(), [](const ConformanceRow& r) { return !r.alone.empty(); });
    out += "settings: " + (e.input.empty() ? e.settings.dump() : e.input.front()) + "\n";
    out += std::string("  call  t_ms        result   expected            ") +
           (alone ? "after other traces   alone\n" : "your program\n");
    for (std::size_t i = 0; i < e.rows.size(); ++i) {
      const ConformanceRow& r = e.rows[i];
      const std::string got = r.got.empty() ? "(no answer)" : r.got;
      out += "  " + padded(std::to_string(i + 1), 6) + padded(ms_text(r.t_ms), 12) + padded(r.result, 9) +
             padded(r.expected, 20) + (alone ? padded(got, 21) + (r.alone.empty() ? "(no answer)" : r.alone) : got) +
             (r.differs ? "   <- differs" : "") + "\n";
    }
  }
  std::string input;
  for (const std::string& line : e.input) input += " " + shell_quoted(line);
  out += "to replay it: printf '%s\\n'" + input + " | " + command + "\n";
  return out;
}

// What no trace could ask a program that does not take calls in flight, said where it passed or
// failed, so a pass is not read as more than it is.
std::string not_probed_line(const ConformancePart& c) {
  if (c.not_probed.empty()) return "";
  std::string ids;
  for (const std::string& id : c.not_probed) ids += (ids.empty() ? "" : ", ") + id;
  return "not probed (it does not say \"in_flight\": true, so every call was made one at a time): " + ids + "\n";
}

std::string shrunk_text(const Counterexample& e, bool fully) {
  std::string out = "trace " + std::to_string(e.trace + 1) + " (" + calls_text(e.original_calls) + ")";
  if (!e.rows.empty() && e.rows.size() < e.original_calls)
    out += ", shrunk to " + calls_text(e.rows.size()) + (fully ? "" : " (as far as the time allowed)");
  return out;
}

}  // namespace

std::string conformance_lines(const ConformancePart& c) {
  std::string out;
  if (c.status == Status::Error) return c.message + "\n";
  const std::string in = c.processes > 0 ? ", in " + how_many(c.processes, "process", "processes") : "";
  if (c.status == Status::Pass)
    return "answered every call of " + std::to_string(c.traces.count) + " generated traces as the rules do (seed " +
           std::to_string(c.traces.seed) + in + ")\n" + not_probed_line(c);
  if (c.example.trace < 0) {
    // Nothing was answered to show on a trace (it never answered, or was refused before it ran):
    // what happened, in one line; the standard error only when it says more than that line.
    out += "[" + c.rule + "] " + c.message + "\n";
    const std::size_t lines = static_cast<std::size_t>(std::count(c.stderr_tail.begin(), c.stderr_tail.end(), '\n'));
    if (lines > 1)
      out += "its standard error (the end of it):\n" + c.stderr_tail + (c.stderr_tail.back() == '\n' ? "" : "\n");
    return out;
  }
  const int wrong = c.traces.count - c.agreed;
  out += "seed " + std::to_string(c.traces.seed) + ": " + std::to_string(wrong) + " of " + traces_text(c.traces.count) +
         " answered otherwise than the rules" + in + "; the first, " + shrunk_text(c.example, c.shrunk_fully) + ":\n";
  out += "what it got wrong [" + c.rule + "]: " + c.message + "\n";
  out += example_lines(c.example, c.traces.command);
  if (!c.rules.empty()) {
    out += "every departure, over all " + traces_text(c.judged) + " (traces put down to each):\n";
    for (const ConformanceRule& r : c.rules)
      out += "  " + padded(r.rule, 25) + padded(traces_text(r.traces), 12) + r.message + "\n";
    for (const ConformanceRule& r : c.rules) {
      if (r.example.trace == c.example.trace && r.rule == c.rule) continue;  // the first, above
      out += "[" + r.rule + "] where it went wrong soonest: " + shrunk_text(r.example, r.shrunk_fully) + ":\n";
      out += example_lines(r.example, c.traces.command);
    }
  }
  out += "to repeat the run: cb-grade --conformance " + shell_quoted(c.traces.command) + c.traces.repeat_flags +
         " --seed " + std::to_string(c.traces.seed) + "\n";
  if (!c.stderr_tail.empty())
    out += "its standard error (the end of it):\n" + c.stderr_tail + (c.stderr_tail.back() == '\n' ? "" : "\n");
  return out + not_probed_line(c);
}

namespace {

nlohmann::json rows_json(const std::vector<ConformanceRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const ConformanceRow& r : rows) {
    nlohmann::json row{{"t_ms", r.t_ms},
                       {"result", r.result},
                       {"expected", r.expected},
                       {"got", r.got.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.got)},
                       {"differs", r.differs}};
    if (!r.alone.empty()) row["alone"] = r.alone;
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

nlohmann::json conformance_json(const ConformancePart& c) {
  nlohmann::json out{{"command", c.traces.command}, {"seed", c.traces.seed},         {"traces", c.traces.count},
                     {"agreed", c.agreed},          {"status", to_string(c.status)}, {"score", c.score},
                     {"max_score", c.max_score},    {"seconds", c.seconds}};
  if (c.processes > 0) out["processes"] = c.processes;
  if (c.judged != c.traces.count) out["judged"] = c.judged;
  if (c.judged > 0) out["in_flight"] = c.in_flight;
  if (!c.not_probed.empty()) out["not_probed"] = c.not_probed;
  if (c.status == Status::Fail) {
    out["failing_trace"] = c.example.trace + 1;
    out["original_calls"] = c.example.original_calls;
    out["settings"] = c.example.settings;
    out["input"] = c.example.input;
    out["rows"] = rows_json(c.example.rows);
    out["shrink_runs"] = c.shrink_runs;
    out["shrink_seconds"] = c.shrink_seconds;
    out["shrunk_fully"] = c.shrunk_fully;
    nlohmann::json rules = nlohmann::json::array();
    for (const ConformanceRule& r : c.rules)
      rules.push_back({{"rule", r.rule},
                       {"message", r.message},
                       {"traces", r.traces},
                       {"trace", r.example.trace + 1},
                       {"original_calls", r.example.original_calls},
                       {"settings", r.example.settings},
                       {"input", r.example.input},
                       {"rows", rows_json(r.example.rows)},
                       {"shrunk_fully", r.shrunk_fully}});
    out["rules"] = std::move(rules);
  }
  if (!c.rule.empty()) out["rule"] = c.rule;
  if (!c.message.empty()) out["message"] = c.message;
  if (!c.stderr_tail.empty()) out["stderr_tail"] = c.stderr_tail;
  return out;
}

}  // namespace cb::grade

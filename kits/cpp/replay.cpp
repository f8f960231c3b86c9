// Your breaker from breaker.hpp, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that lab.cpp uses (through
// harness.hpp). The first line of input is the settings, then one line per call, each answered
// with one line; another settings line starts the next trace, on a new breaker (the protocol is
// in docs/CONTRACTS.md). A call is made whole ({t_ms, result}), or begins ({t_ms, begin: n}) and
// ends later ({t_ms, end: n, result}) with other calls between, as a real client's calls
// overlap: its permit from allow() goes back to record() when it ends. Time is the trace's own:
// the clock the breaker reads is each line's t_ms, so a trace of minutes replays in a moment.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "harness.hpp"

namespace {

// The number after "key": in one of the protocol's lines (compact JSON, written by the grader).
bool number(const std::string& line, const char* key, double& out) {
  const std::string quoted = std::string("\"") + key + "\":";
  const auto at = line.find(quoted);
  if (at == std::string::npos) return false;
  const char* start = line.c_str() + at + quoted.size();
  char* end = nullptr;
  out = std::strtod(start, &end);
  return end != start;
}

// A trace's settings line: what a new breaker is built with.
Settings settings_of(const std::string& line) {
  Settings s;
  double v = 0;
  if (number(line, "window", v)) s.window_size = static_cast<int>(v);
  if (number(line, "minimum_calls", v)) s.minimum_calls = static_cast<int>(v);
  if (number(line, "failure_rate_percent", v)) s.failure_rate_percent = static_cast<int>(v);
  if (number(line, "wait_in_open_ms", v)) s.wait_in_open_ms = v;
  if (number(line, "permitted_in_half_open", v)) s.permitted_in_half_open = static_cast<int>(v);
  return s;
}

}  // namespace

int main() {
  std::string line;
  double now = 0;
  std::optional<BreakerHandle> b;
  std::map<double, Permit> in_flight;  // a call's number -> its permit
  // "traces": "many": the grader may send the next trace's settings after the last call;
  // "in_flight": calls may overlap.
  const char* says = ",\"traces\":\"many\",\"in_flight\":true}";
  while (std::getline(std::cin, line)) {
    if (line.find("\"window\"") != std::string::npos) {
      // A trace begins: a new breaker, nothing of the last one kept.
      now = 0;
      b.emplace(settings_of(line), [&now] { return now; });
      in_flight.clear();
      continue;
    }
    double t = 0;
    double status = 0;
    if (!b || !number(line, "t_ms", t)) {
      std::cerr << "replay: not a call: " << line << '\n';
      return 1;
    }
    now = t;
    double id = 0;
    if (number(line, "begin", id)) {
      const std::optional<Permit> permit = b->allow();
      if (permit) in_flight[id] = *permit;
      std::cout << "{\"decision\":\"" << (permit ? "permitted" : "rejected") << "\",\"state\":\"" << b->state() << '"'
                << says << std::endl;
      continue;
    }
    const bool timed_out = line.find("\"timeout\"") != std::string::npos;
    if (!timed_out && !number(line, "result", status)) {
      std::cerr << "replay: no result: " << line << '\n';
      return 1;
    }
    const Outcome outcome = classify_answer(timed_out ? std::nullopt : std::optional<int>(static_cast<int>(status)));
    if (number(line, "end", id)) {
      // A call let through earlier comes back (the end of one the breaker refused counts nothing).
      if (const auto it = in_flight.find(id); it != in_flight.end()) {
        b->record(outcome, it->second);
        in_flight.erase(it);
      }
      std::cout << "{\"state\":\"" << b->state() << '"' << says << std::endl;
      continue;
    }
    const std::optional<Permit> permit = b->allow();
    if (permit) b->record(outcome, *permit);  // the call completes at t_ms
    std::cout << "{\"decision\":\"" << (permit ? "permitted" : "rejected") << "\",\"state\":\"" << b->state() << '"'
              << says << std::endl;
  }
  return 0;
}

// Your breaker from breaker.hpp, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that lab.cpp uses. The first
// line of input is the settings, then one call per line, each answered with one line before the
// next comes (the protocol is in docs/CONTRACTS.md). Time is the trace's own: the clock the
// breaker reads is each call's t_ms, so a trace of minutes replays in a moment.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "breaker.hpp"

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

}  // namespace

int main() {
  std::string line;
  Settings s;
  double v = 0;
  if (!std::getline(std::cin, line)) return 0;  // no input, nothing to answer
  if (number(line, "window", v)) s.window_size = static_cast<int>(v);
  if (number(line, "minimum_calls", v)) s.minimum_calls = static_cast<int>(v);
  if (number(line, "failure_rate_percent", v)) s.failure_rate_percent = static_cast<int>(v);
  if (number(line, "wait_in_open_ms", v)) s.wait_in_open_ms = v;
  if (number(line, "permitted_in_half_open", v)) s.permitted_in_half_open = static_cast<int>(v);
  double now = 0;
  Breaker b(s, [&now] { return now; });
  while (std::getline(std::cin, line)) {
    double t = 0;
    double status = 0;
    if (!number(line, "t_ms", t)) {
      std::cerr << "replay: not a call: " << line << '\n';
      return 1;
    }
    now = t;
    const bool timed_out = line.find("\"timeout\"") != std::string::npos;
    if (!timed_out && !number(line, "result", status)) {
      std::cerr << "replay: no result: " << line << '\n';
      return 1;
    }
    const bool permitted = b.allow();
    if (permitted) b.record(classify(timed_out ? std::nullopt : std::optional<int>(static_cast<int>(status))));
    std::cout << "{\"decision\":\"" << (permitted ? "permitted" : "rejected") << "\",\"state\":\"" << b.state << "\"}"
              << std::endl;
  }
  return 0;
}

// cb-lab conform: the project's engine answering the conformance protocol on standard input and
// output, one line per call, so the grader's traces can drive it as they drive a student's
// breaker (the protocol: docs/CONTRACTS.md; the grader's side: docs/GRADER.md).
//
//   in:  {"window":10,"minimum_calls":5,"failure_rate_percent":50,"wait_in_open_ms":3000,"permitted_in_half_open":3}
//        {"t_ms":1234.5,"result":200}            one per call, in time order; result: a status or "timeout"
//   out: {"decision":"permitted","state":"CLOSED"}   one per call, flushed before the next is read
#include "cmd_conform.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"

namespace cb::cli {
namespace {

using json = nlohmann::json;

ExitCode fail(const std::string& message) {
  std::cerr << "cb-lab conform: " << message << '\n';
  return ExitCode::Usage;
}

// A whole number field of the settings line within [lo, hi].
Result<int> whole(const json& j, const char* key, int lo, int hi) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<long long>() < lo || it->get<long long>() > hi)
    return Error{std::string("line 1: \"") + key + "\": expected a whole number from " + std::to_string(lo) + " to " +
                 std::to_string(hi)};
  return static_cast<int>(it->get<long long>());
}

Result<BreakerOptions> settings(const std::string& line) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"line 1: expected the settings, a JSON object"};
  auto window = whole(j, "window", 1, 100'000);
  if (!window) return window.error();
  auto minimum = whole(j, "minimum_calls", 1, *window);
  if (!minimum) return minimum.error();
  auto rate = whole(j, "failure_rate_percent", 1, 100);
  if (!rate) return rate.error();
  auto trials = whole(j, "permitted_in_half_open", 1, 1000);
  if (!trials) return trials.error();
  const auto wait = j.find("wait_in_open_ms");
  if (wait == j.end() || !wait->is_number() || wait->get<double>() < 0 || wait->get<double>() > 86'400'000)
    return Error{"line 1: \"wait_in_open_ms\": expected milliseconds from 0 to 86400000"};
  BreakerOptions o = profiles::lab(std::chrono::microseconds(std::llround(wait->get<double>() * 1000.0)));
  o.trip.window.size = *window;
  o.trip.window.minimum_calls = *minimum;
  o.trip.failure_rate_percent = *rate;
  o.trip.slow_call_rate_percent.reset();  // the protocol's calls have no duration
  o.half_open.permitted_calls = *trials;
  return o;
}

}  // namespace

CLI::App* setup_conform(CLI::App& app, ConformOptions&) {
  auto* cmd = app.add_subcommand("conform", "The engine on the conformance protocol: settings, then one call per line");
  cmd->footer(
      "Reads the settings line, then {\"t_ms\": T, \"result\": STATUS|\"timeout\"} lines; answers each with\n"
      "{\"decision\": \"permitted\"|\"rejected\", \"state\": STATE} before reading the next. Exit 0 at the end of\n"
      "the input; 2 with a one-line error naming the line for anything else. The protocol: docs/CONTRACTS.md.\n"
      "Check it against the grader's model: cb-grade --conformance \"cb-lab conform\"");
  return cmd;
}

ExitCode run_conform(const ConformOptions&) {
  std::string line;
  if (!std::getline(std::cin, line)) return fail("line 1: expected the settings, got nothing");
  auto options = settings(line);
  if (!options) return fail(options.error().message);
  ManualClock clock;
  auto created = CircuitBreaker::create(*options, clock);
  if (!created) return fail("line 1: " + created.error().message);
  CircuitBreaker& breaker = **created;
  double last_t = 0;
  for (long n = 2; std::getline(std::cin, line); ++n) {
    const std::string at = "line " + std::to_string(n) + ": ";
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return fail(at + "expected {\"t_ms\": T, \"result\": STATUS or \"timeout\"}");
    const auto t = j.find("t_ms");
    if (t == j.end() || !t->is_number() || t->get<double>() < last_t)
      return fail(at + "\"t_ms\": expected milliseconds, never less than the call before");
    last_t = t->get<double>();
    const auto result = j.find("result");
    Verdict verdict = Verdict::Failure;
    if (result != j.end() && result->is_string() && result->get<std::string>() == "timeout") {
      verdict = Verdict::Failure;
    } else if (result != j.end() && result->is_number_integer() && result->get<int>() >= 100 &&
               result->get<int>() <= 599) {
      const int status = result->get<int>();
      verdict = status >= 500 ? Verdict::Failure : status >= 400 ? Verdict::Ignored : Verdict::Success;
    } else {
      return fail(at + "\"result\": expected a status from 100 to 599 or \"timeout\"");
    }
    clock.set(TimePoint{std::chrono::microseconds(std::llround(last_t * 1000.0))});
    const Admission a = breaker.try_acquire();
    if (a) (void)breaker.record(a.ticket, {verdict, Duration::zero()});
    std::cout << "{\"decision\":\"" << (a ? "permitted" : "rejected") << "\",\"state\":\"" << to_string(breaker.state())
              << "\"}" << std::endl;  // flushed: the grader waits for it before sending the next call
  }
  return ExitCode::Ok;
}

}  // namespace cb::cli

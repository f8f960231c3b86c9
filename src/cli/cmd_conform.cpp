// cb-lab conform: the project's engine answering the conformance protocol on standard input and
// output, one line per call, so the grader's traces can drive it as they drive a student's
// breaker (the protocol: docs/CONTRACTS.md; the grader's side: docs/GRADER.md).
//
//   in:  {"window":10,"minimum_calls":5,"failure_rate_percent":50,"wait_in_open_ms":3000,"permitted_in_half_open":3}
//        {"t_ms":1234.5,"result":200}            one per call, in time order; result: a status or "timeout"
//   out: {"decision":"permitted","state":"CLOSED","traces":"many","in_flight":true}   one per call, flushed
//   then, perhaps, the next trace's settings line, and its calls, on a new breaker
//   calls in flight: {"t_ms":T,"begin":N} answered as a call; {"t_ms":T,"end":N,"result":R} with {"state":S}
#include "cmd_conform.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "cb/breaker/breaker.h"
#include "cb/bounded_file.h"
#include "cb/breaker/profiles.h"

namespace cb::cli {
namespace {

using json = nlohmann::json;

// No line of the protocol comes near this (a settings line is about 110 bytes).
constexpr std::size_t kMaxLine = 4096;
// A trace's own clock: a year of milliseconds is far past any trace, and far inside what
// microseconds in 64 bits hold.
constexpr double kMaxMs = 365.0 * 24 * 3600 * 1000;

ExitCode fail(const std::string& message) {
  std::cerr << "cb-lab conform: " << message << '\n';
  return ExitCode::Usage;
}

// A whole number field of the settings line within [lo, hi].
Result<int> whole(const json& j, const std::string& at, const char* key, int lo, int hi) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<long long>() < lo || it->get<long long>() > hi)
    return Error{at + "\"" + key + "\": expected a whole number from " + std::to_string(lo) + " to " +
                 std::to_string(hi)};
  return static_cast<int>(it->get<long long>());
}

Result<BreakerOptions> settings(const json& j, const std::string& at) {
  auto window = whole(j, at, "window", 1, 100'000);
  if (!window) return window.error();
  auto minimum = whole(j, at, "minimum_calls", 1, *window);
  if (!minimum) return minimum.error();
  auto rate = whole(j, at, "failure_rate_percent", 1, 100);
  if (!rate) return rate.error();
  auto trials = whole(j, at, "permitted_in_half_open", 1, 1000);
  if (!trials) return trials.error();
  const auto wait = j.find("wait_in_open_ms");
  if (wait == j.end() || !wait->is_number() || wait->get<double>() < 0 || wait->get<double>() > 86'400'000)
    return Error{at + "\"wait_in_open_ms\": expected milliseconds from 0 to 86400000"};
  BreakerOptions o = profiles::lab(std::chrono::microseconds(std::llround(wait->get<double>() * 1000.0)));
  o.trip.window.size = *window;
  o.trip.window.minimum_calls = *minimum;
  o.trip.failure_rate_percent = *rate;
  o.trip.slow_call_rate_percent.reset();  // the protocol's calls have no duration
  o.half_open.permitted_calls = *trials;
  return o;
}

// A call line's time, which never goes back (`last_t`).
Result<double> time_of(const json& j, const std::string& at, double& last_t) {
  const auto t = j.find("t_ms");
  // Read as a double and checked before it becomes microseconds: 1e16 ms would not fit.
  if (t == j.end() || !t->is_number() || !(t->get<double>() >= last_t && t->get<double>() <= kMaxMs))
    return Error{at + "\"t_ms\": expected milliseconds from the call before's (" + json(last_t).dump() + ") to " +
                 std::to_string(static_cast<long long>(kMaxMs)) +
                 (t != j.end() && t->is_number() ? ", got " + t->dump() : std::string())};
  last_t = t->get<double>();
  return last_t;
}

// A call in flight's number (a begin or an end line's).
Result<long long> call_id(const json& j, const std::string& at, const char* key) {
  const auto id = j.find(key);
  if (id == j.end() || !id->is_number_integer() || id->get<long long>() < 1)
    return Error{at + "\"" + key + "\": expected a call's number, a whole number from 1"};
  return id->get<long long>();
}

// A call line's verdict.
Result<Verdict> verdict_of(const json& j, const std::string& at) {
  const auto result = j.find("result");
  if (result != j.end() && result->is_string() && result->get<std::string>() == "timeout") return Verdict::Failure;
  // As a long long: get<int>() of 4294967796 would wrap to 500.
  if (result != j.end() && result->is_number_integer() && result->get<long long>() >= 100 &&
      result->get<long long>() <= 599) {
    const auto status = result->get<long long>();
    return status >= 500 ? Verdict::Failure : status >= 400 ? Verdict::Ignored : Verdict::Success;
  }
  return Error{at + "\"result\": expected a status from 100 to 599 or \"timeout\"" +
               (result != j.end() ? ", got " + result->dump() : std::string())};
}

}  // namespace

CLI::App* setup_conform(CLI::App& app, ConformOptions&) {
  auto* cmd = app.add_subcommand("conform", "The engine on the conformance protocol: settings, then one call per line");
  cmd->footer(
      "Reads the settings line, then {\"t_ms\": T, \"result\": STATUS|\"timeout\"} lines; answers each with\n"
      "{\"decision\": \"permitted\"|\"rejected\", \"state\": STATE, \"traces\": \"many\"} before reading the next.\n"
      "Another settings line starts a new trace on a new breaker. Calls in flight: {\"t_ms\": T, \"begin\": N}\n"
      "is answered as a call, {\"t_ms\": T, \"end\": N, \"result\": R} with {\"state\": STATE}; every answer says\n"
      "\"in_flight\": true. Exit 0 at the end of the input; 2 with a\n"
      "one-line error naming the line for anything else. The protocol: docs/CONTRACTS.md.\n"
      "Check it against the grader's model: cb-grade --conformance \"cb-lab conform\"");
  return cmd;
}

ExitCode conform_command(const ConformOptions&) {
  std::string line;
  std::ios::sync_with_stdio(false);  // read_line takes standard input's buffer as it is
  LineRead got = read_line(std::cin, line, kMaxLine);
  if (got == LineRead::End) return fail("line 1: expected the settings, got nothing");
  ManualClock clock;
  std::unique_ptr<CircuitBreaker> breaker;
  std::unordered_map<long long, Ticket> in_flight;  // the trace's calls let through, not yet ended
  double last_t = 0;
  for (long n = 1;; ++n) {
    const std::string at = "line " + std::to_string(n) + ": ";
    if (got == LineRead::TooLong) return fail(at + "longer than " + std::to_string(kMaxLine) + " bytes");
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return fail(at + "expected {\"t_ms\": T, \"result\": STATUS or \"timeout\"}, or the next trace's settings");
    if (n == 1 || j.contains("window")) {
      // A trace begins: a breaker of its own, on a clock of its own, with nothing of the last.
      auto options = settings(j, at);
      if (!options) return fail(options.error().message);
      clock.set(TimePoint{});
      auto created = CircuitBreaker::create(*options, clock);
      if (!created) return fail(at + created.error().message);
      breaker = std::move(*created);
      in_flight.clear();
      last_t = 0;
    } else {
      auto t = time_of(j, at, last_t);
      if (!t) return fail(t.error().message);
      clock.set(TimePoint{std::chrono::microseconds(std::llround(*t * 1000.0))});
      const bool begins = j.contains("begin");
      const bool ends = !begins && j.contains("end");
      auto id = begins ? call_id(j, at, "begin") : ends ? call_id(j, at, "end") : Result<long long>{0LL};
      if (!id) return fail(id.error().message);
      if (ends) {
        auto verdict = verdict_of(j, at);
        if (!verdict) return fail(verdict.error().message);
        // An end for a call it refused (or never began) counts nothing: the rules' trace may end
        // a call this breaker did not let through.
        if (const auto it = in_flight.find(*id); it != in_flight.end()) {
          (void)breaker->record(it->second, {*verdict, Duration::zero()});
          in_flight.erase(it);
        }
        std::cout << "{\"state\":\"" << to_string(breaker->state()) << "\",\"traces\":\"many\",\"in_flight\":true}"
                  << std::endl;
      } else {
        auto verdict = begins ? Result<Verdict>{Verdict::Success} : verdict_of(j, at);
        if (!verdict) return fail(verdict.error().message);
        const Admission a = breaker->try_acquire();
        if (a && begins) in_flight.emplace(*id, a.ticket);
        if (a && !begins) (void)breaker->record(a.ticket, {*verdict, Duration::zero()});
        // Flushed: the grader waits for it before sending the next call.
        std::cout << "{\"decision\":\"" << (a ? "permitted" : "rejected") << "\",\"state\":\""
                  << to_string(breaker->state()) << "\",\"traces\":\"many\",\"in_flight\":true}" << std::endl;
      }
    }
    got = read_line(std::cin, line, kMaxLine);
    if (got == LineRead::End) break;
  }
  return ExitCode::Ok;
}

}  // namespace cb::cli

#pragma once
// Test-only: a breaker on a manual clock, with its transitions recorded, and a shorthand for
// driving it one call at a time.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cb/breaker/breaker.h"

namespace cb::testing {

using namespace std::chrono_literals;

inline TimePoint at_s(double seconds) {
  return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds))};
}

struct Harness {
  ManualClock clock;
  std::unique_ptr<CircuitBreaker> breaker;
  std::vector<Transition> transitions;

  explicit Harness(BreakerOptions options, RandomSource* random = nullptr) {
    auto created = CircuitBreaker::create(std::move(options), clock, random);
    REQUIRE_MESSAGE(created.ok(), (created.ok() ? "" : created.error().message));
    breaker = std::move(created).value();
    breaker->subscribe([this](const Transition& t) { transitions.push_back(t); });
  }

  // One call, reported at once: "ok", "fail", "ignored" or "refused".
  std::string call(Verdict v, Duration elapsed = Duration::zero()) {
    const Admission a = breaker->try_acquire();
    if (!a) return "refused";
    (void)breaker->record(a.ticket, {v, elapsed});
    return v == Verdict::Success ? "ok" : v == Verdict::Failure ? "fail" : "ignored";
  }

  // Several calls from a pattern: S success, F failure, I ignored. Returns one letter per call:
  // the verdict's letter when the call went through, R when it was refused.
  std::string calls(std::string_view pattern) {
    std::string out;
    for (char c : pattern) {
      const Verdict v = c == 'S' ? Verdict::Success : c == 'F' ? Verdict::Failure : Verdict::Ignored;
      out += call(v) == "refused" ? 'R' : c;
    }
    return out;
  }

  State state() { return breaker->state(); }
  void at(double seconds) { clock.set(at_s(seconds)); }

  // "CLOSED->OPEN OPEN->HALF_OPEN ..."
  std::string path() const {
    std::string out;
    for (const auto& t : transitions) {
      if (!out.empty()) out += ' ';
      out += std::string(to_string(t.from)) + "->" + std::string(to_string(t.to));
    }
    return out;
  }
};

}  // namespace cb::testing

// A configuration that could never work is refused, and the error names the field.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "cb/breaker/options.h"
#include "cb/breaker/profiles.h"

namespace cb {
namespace {

using namespace std::chrono_literals;

std::string error_of(const BreakerOptions& o) {
  auto r = validate(o);
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST_CASE("every named profile is a valid configuration") {
  for (auto name : profiles::names()) {
    CAPTURE(name);
    auto o = profiles::by_name(name);
    REQUIRE(o.ok());
    CHECK(validate(*o).ok());
  }
  CHECK_FALSE(profiles::by_name("nope").ok());
  CHECK(profiles::by_name("nope").error().message.find("known: lab") != std::string::npos);
}

TEST_CASE("an invalid configuration is rejected with the field it is about") {
  const BreakerOptions lab = profiles::lab();
  BreakerOptions o = lab;
  SUBCASE("window of 0") {
    o.trip.window.size = 0;
    CHECK(starts_with(error_of(o), "trip.window.size: must be between 1 and"));
    CHECK(error_of(o).find("got 0") != std::string::npos);
  }
  SUBCASE("minimum calls of 0") {
    o.trip.window.minimum_calls = 0;
    CHECK(starts_with(error_of(o), "trip.window.minimum_calls: must be >= 1"));
  }
  SUBCASE("a minimum a count window can never reach") {
    o.trip.window.minimum_calls = 11;
    CHECK(starts_with(error_of(o), "trip.window.minimum_calls: must be <= trip.window.size (10)"));
  }
  SUBCASE("the same minimum is fine for a time window") {
    o.trip.window = {WindowOptions::Kind::Time, 10, 11};
    CHECK(error_of(o) == "(accepted)");
  }
  SUBCASE("threshold of 0") {
    o.trip.failure_rate_percent = 0.0;
    CHECK(starts_with(error_of(o), "trip.failure_rate_percent: must be in (0, 100]"));
  }
  SUBCASE("threshold over 100") {
    o.trip.failure_rate_percent = 100.5;
    CHECK(error_of(o) == "trip.failure_rate_percent: must be in (0, 100], got 100.5");
  }
  SUBCASE("threshold of exactly 100 is fine") {
    o.trip.failure_rate_percent = 100.0;
    CHECK(error_of(o) == "(accepted)");
  }
  SUBCASE("not a number") {
    o.trip.slow_call_rate_percent = std::nan("");
    CHECK(starts_with(error_of(o), "trip.slow_call_rate_percent: must be in (0, 100]"));
  }
  SUBCASE("a slow-call rate without a slow-call duration") {
    o.trip.slow_call_duration = 0s;
    CHECK(starts_with(error_of(o), "trip.slow_call_duration: must be > 0 when"));
  }
  SUBCASE("negative durations") {
    o.trip.slow_call_duration = -1s;
    CHECK(starts_with(error_of(o), "trip.slow_call_duration: must be >= 0"));
    o = lab;
    o.cooldown.base = -1ms;
    CHECK(error_of(o) == "cooldown.base: must be >= 0, got -0.001 s");
    o = lab;
    o.half_open.max_wait = -1s;
    CHECK(starts_with(error_of(o), "half_open.max_wait: must be >= 0"));
    o = lab;
    o.cooldown.cap = -1s;
    CHECK(starts_with(error_of(o), "cooldown.cap: must be >= 0"));
  }
  SUBCASE("negative consecutive failures") {
    o.trip.consecutive_failures = -1;
    CHECK(starts_with(error_of(o), "trip.consecutive_failures: must be >= 0"));
  }
  SUBCASE("no rule that could ever trip") {
    o.trip.failure_rate_percent.reset();
    o.trip.slow_call_rate_percent.reset();
    o.half_open.decide = HalfOpenOptions::Decide::EachOutcome;
    CHECK(starts_with(error_of(o), "trip: no rule is set"));
  }
  SUBCASE("a growing cool-down without a cap") {
    o.cooldown.multiplier = 2.0;
    CHECK(starts_with(error_of(o), "cooldown.cap: must be > 0 when cooldown.multiplier > 1"));
  }
  SUBCASE("a cap below the base") {
    o.cooldown.cap = 1s;
    CHECK(starts_with(error_of(o), "cooldown.cap: must be >= cooldown.base (30 s)"));
  }
  SUBCASE("a shrinking cool-down") {
    o.cooldown.multiplier = 0.5;
    CHECK(starts_with(error_of(o), "cooldown.multiplier: must be >= 1"));
  }
  SUBCASE("jitter outside [0, 1]") {
    o.cooldown.jitter = 1.5;
    CHECK(starts_with(error_of(o), "cooldown.jitter: must be in [0, 1]"));
  }
  SUBCASE("negative trials") {
    o.half_open.permitted_calls = -1;
    CHECK(starts_with(error_of(o), "half_open.permitted_calls: must be between 0"));
  }
  SUBCASE("trials judged together need at least one trial") {
    o.half_open.permitted_calls = 0;
    CHECK(starts_with(error_of(o), "half_open.permitted_calls: must be >= 1 when trials are judged together"));
  }
  SUBCASE("more successes to close than trials permitted") {
    BreakerOptions p = profiles::probe(3, 10s);
    p.half_open.successes_to_close = 2;
    CHECK(starts_with(error_of(p), "half_open.successes_to_close: must be <= half_open.permitted_calls (1)"));
    p.half_open.successes_to_close = 0;
    CHECK(starts_with(error_of(p), "half_open.successes_to_close: must be >= 1"));
  }
  SUBCASE("trials judged together without a rate to judge them by") {
    BreakerOptions p = profiles::probe(3, 10s);
    p.half_open.decide = HalfOpenOptions::Decide::AfterAllTrials;
    CHECK(starts_with(error_of(p), "half_open.decide:"));
  }
}

}  // namespace
}  // namespace cb

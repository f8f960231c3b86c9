// The grader's model of the lab's rules and the project's engine were written apart, from the
// same handout; on random traces, with settings drawn around the lab's and times that land
// exactly on the wait's end, they must decide every call the same way and end in the same state.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "cb/breaker/profiles.h"
#include "cb/grade/conformance_model.h"
#include "harness.h"

namespace cb::testing {
namespace {

namespace model = cb::grade::conformance;

std::string_view engine_state(State s) {
  return s == State::Closed ? "CLOSED" : s == State::Open ? "OPEN" : "HALF_OPEN";
}

TEST_CASE("conformance model and engine agree on 300 random traces") {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    model::Settings s = model::lab_settings();
    if (seed % 5 != 0) {  // one trace in five keeps the lab's own settings
      s.window = pick(4, 20);
      s.minimum_calls = pick(1, s.window);
      s.failure_rate_percent = pick(10, 90);
      s.wait_in_open_ms = pick(1, 50) * 100;
      s.permitted_in_half_open = pick(1, 5);
    }
    BreakerOptions o = profiles::lab(std::chrono::milliseconds(static_cast<int>(s.wait_in_open_ms)));
    o.trip.window.size = s.window;
    o.trip.window.minimum_calls = s.minimum_calls;
    o.trip.failure_rate_percent = s.failure_rate_percent;
    o.trip.slow_call_rate_percent.reset();
    o.half_open.permitted_calls = s.permitted_in_half_open;
    Harness h(o);
    model::Model m(s);
    double t = 0;
    double opened_at = -1;
    for (int i = 0; i < 120; ++i) {
      // Mostly small steps; sometimes straight to the end of the wait, or a hair before it.
      const int how = pick(0, 9);
      if (how == 0 && opened_at >= 0)
        t = std::max(t, opened_at + s.wait_in_open_ms);
      else if (how == 1 && opened_at >= 0)
        t = std::max(t, opened_at + s.wait_in_open_ms - 1);
      else
        t += pick(0, 400);
      const int r = pick(0, 9);
      const model::Call call{t, r < 4 ? 200 : r < 8 ? 500 : 400, r == 9};
      h.clock.set(TimePoint{std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(t))});
      const model::Step want = m.call(call);
      const Admission a = h.breaker->try_acquire();
      if (a) {
        const Verdict v = call.timed_out || call.status >= 500 ? Verdict::Failure
                          : call.status >= 400                 ? Verdict::Ignored
                                                               : Verdict::Success;
        (void)h.breaker->record(a.ticket, {v, Duration::zero()});
      }
      const auto got_state = engine_state(h.breaker->state());
      CAPTURE(seed);
      CAPTURE(i);
      CAPTURE(t);
      REQUIRE((want.decision == model::Decision::Permitted) == static_cast<bool>(a));
      REQUIRE(model::to_string(want.state) == got_state);
      if (want.rule == model::Rule::Tripped || want.rule == model::Rule::ReopenedAfterTrials) opened_at = t;
    }
  }
}

}  // namespace
}  // namespace cb::testing

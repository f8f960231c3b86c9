// The coarse clock: a refusal well before the cool-down's end costs no precise clock read, the
// boundary itself is still exact, and SteadyClock's coarse reading keeps its promise.
#include <doctest/doctest.h>

#include <atomic>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

// Test-only: a manual clock whose coarse reading trails the precise one by `behind`, and which
// counts how often each is read.
class CountingClock final : public Clock {
 public:
  explicit CountingClock(Duration lag) : lag_(lag) {}
  TimePoint now() const noexcept override {
    precise_reads.fetch_add(1);
    return t;
  }
  TimePoint coarse_now() const noexcept override {
    coarse_reads.fetch_add(1);
    return t - behind;
  }
  Duration coarse_lag() const noexcept override { return lag_; }

  TimePoint t{};
  Duration behind{0};
  mutable std::atomic<int> precise_reads{0};
  mutable std::atomic<int> coarse_reads{0};

 private:
  Duration lag_;
};

TEST_CASE("coarse clock: refusals read it, the precise clock only near the end, and the end is exact") {
  CountingClock clock(50ms);
  auto breaker = CircuitBreaker::create(profiles::probe(1, 10s), clock).value();
  (void)breaker->record(breaker->try_acquire().ticket, {Verdict::Failure, 1ms});  // OPEN at 0 for 10 s
  REQUIRE(breaker->state() == State::Open);
  clock.behind = 3ms;  // within the promised 50 ms
  auto refusals = [&](int n) {
    clock.precise_reads = 0;
    clock.coarse_reads = 0;
    int refused = 0;
    for (int i = 0; i < n; ++i) refused += breaker->try_acquire().permitted() ? 0 : 1;
    return refused;
  };

  SUBCASE("well before the end: the coarse clock alone decides") {
    clock.t = TimePoint{5s};
    CHECK(refusals(100) == 100);
    CHECK(clock.coarse_reads == 100);
    CHECK(clock.precise_reads == 0);
  }
  SUBCASE("within the lag of the end: the precise clock decides each one") {
    clock.t = TimePoint{10s - 30ms};  // coarse + lag = 10.017 s: too close to tell
    CHECK(refusals(10) == 10);
    CHECK(clock.precise_reads == 10);
    clock.t = TimePoint{10s - 1us};
    CHECK(refusals(10) == 10);
  }
  SUBCASE("at the end exactly, a lagging coarse clock does not delay the trial") {
    clock.t = TimePoint{10s};  // the coarse clock says 9.997 s
    const Admission a = breaker->try_acquire();
    CHECK(a.permitted());
    CHECK(a.ticket.admitted_in == State::HalfOpen);
  }
  SUBCASE("forced open reads no clock at all") {
    breaker->force_open();
    clock.t = TimePoint{1h};
    CHECK(refusals(10) == 10);
    CHECK(clock.coarse_reads == 0);
    CHECK(clock.precise_reads == 0);
    CHECK(breaker->try_acquire().decision == Decision::RefusedForcedOpen);
  }
}

TEST_CASE("coarse clock: SteadyClock's coarse reading is never later than now() and trails by at most its lag") {
  const SteadyClock clock;
  const Duration lag = clock.coarse_lag();
  CHECK(lag >= 50ms);
  int later = 0;
  int too_far = 0;
  for (int i = 0; i < 100000; ++i) {
    const TimePoint coarse = clock.coarse_now();
    const TimePoint precise = clock.now();
    later += coarse > precise ? 1 : 0;
    too_far += precise - coarse > lag ? 1 : 0;
  }
  CHECK(later == 0);
  CHECK(too_far == 0);
}

}  // namespace
}  // namespace cb::testing

// A snapshot carries a breaker into another process: restored, it must behave exactly as the
// original would have.
#include <doctest/doctest.h>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

// The generation a restore gives depends on the restoring breaker's own history (it never
// moves back); everything else must match.
Snapshot ignoring_generation(Snapshot s) {
  s.generation = 0;
  return s;
}

// Drives two breakers with the same calls and says whether they answered alike.
bool same_future(Harness& a, Harness& b, std::string_view pattern, double from) {
  for (int step = 0; step < 4; ++step) {
    a.at(from + step * 2.0);
    b.at(from + step * 2.0);
    if (a.calls(pattern) != b.calls(pattern)) return false;
    if (a.state() != b.state()) return false;
  }
  return ignoring_generation(a.breaker->snapshot()) == ignoring_generation(b.breaker->snapshot());
}

TEST_CASE("a restored breaker continues exactly where the original was") {
  Harness original(profiles::lab(3s));
  double taken_at = 0;
  SUBCASE("CLOSED with a partly filled window") { CHECK(original.calls("SSSF") == "SSSF"); }
  SUBCASE("OPEN, 1 s into its cool-down") {
    CHECK(original.calls("SSSFFF") == "SSSFFF");
    taken_at = 1;
  }
  SUBCASE("HALF_OPEN with one trial reported") {
    CHECK(original.calls("SSSFFF") == "SSSFFF");
    taken_at = 3.5;
    original.at(taken_at);
    CHECK(original.calls("S") == "S");
  }
  original.at(taken_at);
  const Snapshot snap = original.breaker->snapshot();

  Harness copy(profiles::lab(3s));
  copy.at(taken_at);
  REQUIRE(copy.breaker->restore(snap).ok());
  const Snapshot restored = copy.breaker->snapshot();
  CHECK(restored.generation >= snap.generation);
  CHECK(ignoring_generation(restored) == ignoring_generation(snap));
  CHECK(same_future(original, copy, "SFS", taken_at + 0.5));
}

TEST_CASE("trials outstanding at the snapshot free their slots when restored") {
  Harness h(profiles::lesson());
  CHECK(h.calls("FFF") == "FFF");
  h.at(10);
  const Admission trial = h.breaker->try_acquire();  // out when the process died
  REQUIRE(trial);
  const Snapshot snap = h.breaker->snapshot();
  CHECK(snap.trials_admitted == 1);

  Harness next(profiles::lesson());
  next.at(10);
  REQUIRE(next.breaker->restore(snap).ok());
  CHECK(next.state() == State::HalfOpen);
  CHECK(next.calls("S") == "S");
  CHECK(next.state() == State::Closed);
}

TEST_CASE("a ticket issued before a restore arrives late") {
  Harness h(profiles::lab(3s));
  const Snapshot empty = h.breaker->snapshot();
  const Admission a = h.breaker->try_acquire();
  REQUIRE(h.breaker->restore(empty).ok());
  CHECK(h.breaker->record(a.ticket, {Verdict::Failure, 1ms}) == RecordEffect::Late);
}

TEST_CASE("restore refuses a snapshot the breaker could not have produced") {
  Harness h(profiles::lab(3s));
  Snapshot s = h.breaker->snapshot();
  auto error = [&](const Snapshot& bad) {
    auto r = h.breaker->restore(bad);
    return r.ok() ? std::string("(accepted)") : r.error().message;
  };
  SUBCASE("a window larger than the configuration's") {
    s.window.assign(11, WindowBucket{0, 1, 0, 0});
    CHECK(error(s).rfind("snapshot.window: holds 11 buckets", 0) == 0);
  }
  SUBCASE("forced open but CLOSED") {
    s.mode = Mode::ForcedOpen;
    CHECK(error(s) == "snapshot.state: a forced-open breaker is OPEN");
  }
  SUBCASE("negative counts") {
    s.consecutive_failures = -1;
    CHECK(error(s) == "snapshot.consecutive_failures: must be >= 0");
  }
  SUBCASE("trials that would already have decided") {
    s.state = State::HalfOpen;
    s.trial_successes = 3;
    s.trials_admitted = 3;
    CHECK(error(s) == "snapshot.trials: these trials would already have decided the breaker");
  }
  SUBCASE("a refused restore changes nothing") {
    CHECK(h.calls("SSF") == "SSF");
    const Snapshot before = h.breaker->snapshot();
    s.cooldown = -1s;
    CHECK(error(s) == "snapshot.cooldown: must be >= 0");
    CHECK(h.breaker->snapshot() == before);
  }
}

}  // namespace
}  // namespace cb::testing

// The cool-down policy is a pure function of (failed trials, random draw).
#include <doctest/doctest.h>

#include <set>

#include "cb/breaker/cooldown.h"

namespace cb {
namespace {

using namespace std::chrono_literals;

TEST_CASE("a fixed cool-down ignores failed trials") {
  const CooldownPolicy p(CooldownOptions{30s, 1.0, 0s, 0.0});
  CHECK(p.duration(0, 0.9) == 30s);
  CHECK(p.duration(7, 0.9) == 30s);
  CHECK_FALSE(p.needs_random());
}

TEST_CASE("a growing cool-down doubles per failed trial and stops at the cap") {
  const CooldownPolicy p(CooldownOptions{10s, 2.0, 60s, 0.0});
  CHECK(p.duration(0, 0) == 10s);
  CHECK(p.duration(1, 0) == 20s);
  CHECK(p.duration(2, 0) == 40s);
  CHECK(p.duration(3, 0) == 60s);
  CHECK(p.duration(1000, 0) == 60s);  // no overflow on the way to the cap
}

TEST_CASE("jitter adds between 0 and jitter x the cool-down") {
  const CooldownPolicy p(CooldownOptions{30s, 1.0, 0s, 0.2});
  CHECK(p.needs_random());
  CHECK(p.duration(0, 0.0) == 30s);
  CHECK(p.duration(0, 0.5) == 33s);
  CHECK(p.duration(0, 0.999999) < 36s);
  CHECK(p.duration(0, 0.999999) > 35s);
}

TEST_CASE("SeededRandom: the same seed gives the same draws - all below 1") {
  SeededRandom a(42);
  SeededRandom b(42);
  SeededRandom c(43);
  std::set<double> seen;
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const double x = a.next_unit();
    CHECK(x == b.next_unit());
    differs = differs || x != c.next_unit();
    CHECK(x >= 0.0);
    CHECK(x < 1.0);
    seen.insert(x);
  }
  CHECK(differs);
  CHECK(seen.size() == 1000);
}

}  // namespace
}  // namespace cb

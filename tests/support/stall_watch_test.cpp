// A stall: a gap between two readings of the process's own clock, found for any span it overlaps.
#include <doctest/doctest.h>

#include "cb/stall_watch.h"

namespace cb {
namespace {

using std::chrono::milliseconds;
using time_point = StallLog::time_point;

time_point at(int ms) { return time_point{} + milliseconds{ms}; }

TEST_CASE("stall log: a gap past the threshold is a stall, found for every span it overlaps") {
  StallLog log(milliseconds{250});
  for (int t = 0; t <= 1000; t += 20) log.reading(at(t));  // a process that ran
  CHECK_FALSE(log.during(at(0), at(1000)));
  log.reading(at(11'000));  // stopped for ten seconds
  for (int t = 11'020; t <= 12'000; t += 20) log.reading(at(t));
  const auto s = log.during(at(500), at(12'000));
  REQUIRE(s);
  CHECK(s->from == at(1000));
  CHECK(s->length == milliseconds{10'000});
  CHECK(log.during(at(5000), at(6000)));            // inside it
  CHECK(log.during(at(10'900), at(11'500)));        // its end
  CHECK_FALSE(log.during(at(0), at(900)));          // before it
  CHECK_FALSE(log.during(at(11'000), at(12'000)));  // after it
}

TEST_CASE("stall log: a late wake under the threshold is not one, and the longest of several is named") {
  StallLog log(milliseconds{250});
  log.reading(at(0));
  log.reading(at(240));  // a busy machine's late wake
  CHECK_FALSE(log.during(at(0), at(240)));
  log.reading(at(600));   // 360 ms
  log.reading(at(3600));  // 3 s
  log.reading(at(3900));  // 300 ms
  const auto s = log.during(at(0), at(4000));
  REQUIRE(s);
  CHECK(s->length == milliseconds{3000});
  CHECK(log.during(at(3700), at(3800))->length == milliseconds{300});
}

TEST_CASE("stall log: a clock read out of order moves nothing back, and only the newest stalls are kept") {
  StallLog log(milliseconds{100}, 2);
  log.reading(at(1000));
  log.reading(at(500));  // an older reading, from a thread that was late to say it
  log.reading(at(1050));
  CHECK_FALSE(log.during(at(0), at(2000)));
  log.reading(at(2000));
  log.reading(at(3000));
  log.reading(at(4000));
  CHECK_FALSE(log.during(at(1000), at(1500)));  // the first, dropped
  CHECK(log.during(at(3500), at(3600)));
}

TEST_CASE("stall watch: the process's own, running, sees no stall in a process that runs") {
  StallWatch& watch = StallWatch::process();
  CHECK(&watch == &StallWatch::process());
  CHECK_FALSE(watch.since(StallWatch::mark()));
}

}  // namespace
}  // namespace cb

// The sliding windows on their own: totals, eviction, and what a snapshot of them holds.
#include <doctest/doctest.h>

#include "cb/breaker/window.h"

namespace cb {
namespace {

using namespace std::chrono_literals;

TimePoint sec(double s) { return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s))}; }

TEST_CASE("count window keeps the last N calls") {
  SlidingWindow w({WindowOptions::Kind::Count, 3, 1});
  w.record(true, false, {});
  w.record(true, true, {});
  CHECK(w.totals() == WindowTotals{2, 2, 1});
  w.record(false, false, {});
  w.record(false, false, {});  // evicts the first failure
  CHECK(w.totals() == WindowTotals{3, 1, 1});
  w.record(false, false, {});  // evicts the slow failure
  CHECK(w.totals() == WindowTotals{3, 0, 0});
  SUBCASE("buckets are oldest first, one call each") {
    w.record(true, false, {});
    const auto b = w.buckets();
    REQUIRE(b.size() == 3);
    CHECK(b[2].failures == 1);
    CHECK(b[0].failures == 0);
  }
  SUBCASE("clear empties it") {
    w.clear();
    CHECK(w.totals() == WindowTotals{});
    CHECK(w.buckets().empty());
  }
}

TEST_CASE("time window keeps the calls of the last N seconds") {
  SlidingWindow w({WindowOptions::Kind::Time, 5, 1});
  w.record(true, false, sec(0.2));
  w.record(true, false, sec(0.9));
  w.record(false, false, sec(2.5));
  CHECK(w.totals() == WindowTotals{3, 2, 0});
  SUBCASE("second 0 leaves at t=5") {
    w.expire(sec(4.999));
    CHECK(w.totals().calls == 3);
    w.expire(sec(5));
    CHECK(w.totals() == WindowTotals{1, 0, 0});
    w.expire(sec(6.999));
    CHECK(w.totals() == WindowTotals{1, 0, 0});
    w.expire(sec(7));  // and second 2 at t=7
    CHECK(w.totals() == WindowTotals{});
  }
  SUBCASE("a jump far ahead empties it") {
    w.record(true, true, sec(1000));
    CHECK(w.totals() == WindowTotals{1, 1, 1});
  }
  SUBCASE("a clock stepping back inside the window still counts") {
    w.record(true, false, sec(4));
    w.record(false, false, sec(1));
    CHECK(w.totals().calls == 5);
    w.record(false, false, sec(-10));  // older than the window: nowhere to count it
    CHECK(w.totals().calls == 5);
  }
  SUBCASE("negative seconds round down") {
    SlidingWindow n({WindowOptions::Kind::Time, 2, 1});
    n.record(true, false, sec(-0.5));  // second -1
    n.record(true, false, sec(0.5));   // second 0
    CHECK(n.totals().calls == 2);
    n.expire(sec(1));
    CHECK(n.totals().calls == 1);
  }
  SUBCASE("buckets round-trip through restore") {
    const auto before = w.buckets();
    SlidingWindow other({WindowOptions::Kind::Time, 5, 1});
    REQUIRE(other.restore(before).ok());
    CHECK(other.buckets() == before);
    CHECK(other.totals() == w.totals());
    other.expire(sec(5));
    CHECK(other.totals().calls == 1);
  }
}

TEST_CASE("restore refuses contents the window could not have held") {
  SlidingWindow count({WindowOptions::Kind::Count, 2, 1});
  CHECK_FALSE(count.restore({{0, 1, 0, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}}).ok());
  CHECK(count.restore({{0, 2, 0, 0}}).error().message == "window[0]: a count window holds one call per bucket");
  CHECK(count.restore({{0, 1, 2, 0}}).error().message == "window[0]: failures and slow calls cannot exceed calls");
  SlidingWindow time({WindowOptions::Kind::Time, 5, 1});
  CHECK(time.restore({{3, 1, 0, 0}, {3, 1, 0, 0}}).error().message == "window[1]: seconds must increase");
  CHECK_FALSE(time.restore({{0, 1, 0, 0}, {5, 1, 0, 0}}).ok());
  CHECK(count.restore({{0, 1, 1, 1}}).ok());
  CHECK(count.totals() == WindowTotals{1, 1, 1});
}

}  // namespace
}  // namespace cb

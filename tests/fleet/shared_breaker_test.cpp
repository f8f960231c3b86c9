// The shared breaker against a real redis-server (a unix socket in the test's directory).
// Both clocks are the test's: each process's is a ManualClock, and Redis's is a hash the test
// sets, read by the real function library with its one TIME call swapped for that hash
// (load_with_test_clock). So a test sets the time, then acts; nothing waits for a state.
#include <doctest/doctest.h>

#include <memory>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "cb/fleet/shared_breaker.h"
#include "fleet_library.h"
#include "cb/redis_link.h"
#include "redis_server.h"
#include "temp_dir.h"

namespace cb::fleet {
namespace {

using namespace std::chrono_literals;
using testing::RedisServer;
using testing::TempDir;

constexpr Duration kPausedTimeout = std::chrono::duration_cast<Duration>(50ms);

BreakerOptions rules(int permits = 3) {
  BreakerOptions o;
  o.name = "payments";
  o.trip.failure_rate_percent = 50.0;
  o.trip.window = {WindowOptions::Kind::Time, 10, 6};
  o.cooldown.base = 1s;
  o.half_open.permitted_calls = permits;
  return o;
}

// The library as shipped, but reading its time from the hash cbtest:clock (sec, usec).
void load_with_test_clock(RedisLink& link) {
  std::string lib(kFleetLibrary);
  const std::string time_call = "redis.call('TIME')";
  const auto at = lib.find(time_call);
  REQUIRE(at != std::string::npos);
  REQUIRE(lib.find(time_call, at + 1) == std::string::npos);  // Redis's clock is read in one place
  lib.replace(at, time_call.size(), "redis.call('HMGET', 'cbtest:clock', 'sec', 'usec')");
  auto r = link.command({"FUNCTION", "LOAD", "REPLACE", lib});
  REQUIRE(r);
  REQUIRE(r->kind == RedisReply::Kind::String);
}

// A fleet of in-process members, each with its own clock, all starting at the same instant
// unless told otherwise; Redis's clock starts at 1,000,000 s.
struct Fleet {
  TempDir dir;
  RedisServer redis{dir.path()};
  RedisLink admin{*parse_redis_address(redis.address()), 2s};
  long long redis_ms = 1'000'000'000;
  bool redis_up = true;
  std::vector<std::unique_ptr<ManualClock>> clocks;
  std::vector<std::unique_ptr<SharedBreaker>> members;

  Fleet() {
    set_redis_ms(redis_ms);
    load_with_test_clock(admin);
  }
  void set_redis_ms(long long ms) {
    redis_ms = ms;
    auto r = admin.command(
        {"HSET", "cbtest:clock", "sec", std::to_string(ms / 1000), "usec", std::to_string((ms % 1000) * 1000)});
    REQUIRE(r);
  }
  FleetOptions fleet_options(int i) const {
    FleetOptions f;
    f.address = redis.address();
    f.name = "payments";
    f.instance = "i" + std::to_string(i);
    f.report_every = Duration{0};  // the test syncs
    // Long enough that a Redis which answers is never taken for one that does not, however busy
    // the machine; a test of a Redis that does not answer sets its own (kPausedTimeout).
    f.redis_timeout = 10s;
    f.load_functions = false;  // the library with the test's clock, loaded above, stays
    return f;
  }
  SharedBreaker& add(const BreakerOptions& o, FleetOptions f, Duration offset = Duration{0}) {
    clocks.push_back(std::make_unique<ManualClock>(TimePoint{std::chrono::hours{1} + offset}));
    auto b = SharedBreaker::create(o, std::move(f), *clocks.back());
    REQUIRE_MESSAGE(b, b.error().message);
    members.push_back(std::move(*b));
    return *members.back();
  }
  void add_n(int n, const BreakerOptions& o) {
    for (int i = 0; i < n; ++i) add(o, fleet_options(static_cast<int>(members.size())));
  }
  // Every member's clock and Redis's move on together.
  void advance(Duration d) {
    for (auto& c : clocks) c->advance(d);
    if (redis_up) set_redis_ms(redis_ms + d.count() / 1000);
  }
  void stop_redis() {
    redis.stop();
    redis_up = false;
  }
  // A member for a test that stops Redis: it must see the silence soon, so it gives up sooner.
  FleetOptions paused_options(int i) const {
    FleetOptions f = fleet_options(i);
    f.redis_timeout = kPausedTimeout;
    return f;
  }
  // Once Redis answers again, a member with that short timeout may still miss an answer on a busy
  // machine; a report is idempotent (see "a report that timed out..."), so it is sent again, a
  // bounded number of times, and the last error is named if none is answered.
  void sync_answered(std::size_t i) {
    for (int attempt = 0; attempt < 100; ++attempt)
      if (members[i]->sync()) return;
    FAIL("no answer from a Redis that runs again: " << members[i]->status().last_error);
  }
  void sync_all() {
    for (auto& m : members) REQUIRE_MESSAGE(m->sync(), m->status().last_error);
  }
  // A call through member i with the given verdict; false when refused.
  bool call(std::size_t i, Verdict v) {
    const Admission a = members[i]->try_acquire();
    if (!a) return false;
    (void)members[i]->record(a.ticket, {v, Duration{1000}});
    return true;
  }
  [[nodiscard]] State fleet_state() {
    auto r = admin.command({"HGET", "{cb:payments}:s", "st"});
    REQUIRE(r);
    return r->text == "o" ? State::Open : r->text == "h" ? State::HalfOpen : State::Closed;
  }
  // The calls in the fleet's window, over all its buckets.
  [[nodiscard]] long long window_calls() {
    auto r = admin.command({"HGETALL", "{cb:payments}:w"});
    REQUIRE(r);
    long long calls = 0;
    for (std::size_t i = 0; i + 1 < r->elements.size(); i += 2)
      if (r->elements[i].text.starts_with("c")) calls += std::stoll(r->elements[i + 1].text);
    return calls;
  }
  [[nodiscard]] long long field(const std::string& name) {
    auto r = admin.command({"HGET", "{cb:payments}:s", name});
    REQUIRE(r);
    return std::stoll(r->text);
  }
};

TEST_CASE("the fleet trips on calls that no instance alone would trip on") {
  Fleet f;
  f.add_n(3, rules());
  // Each sees 2 failures: under its minimum of 6 calls alone, 6 of 6 together.
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(f.call(i, Verdict::Failure));
    CHECK(f.call(i, Verdict::Failure));
  }
  f.sync_all();
  CHECK(f.fleet_state() == State::Open);
  auto ttl = f.admin.command({"PTTL", "{cb:payments}:s"});
  REQUIRE(ttl);
  CHECK(ttl->integer > 86'000'000);  // the keys of a breaker nobody calls go after a day
  // The last to report learned it in its own answer; the others learn it on their next one.
  CHECK_FALSE(f.call(2, Verdict::Success));
  CHECK(f.call(0, Verdict::Success));
  f.sync_all();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK_FALSE(f.call(i, Verdict::Success));
    CHECK(f.members[i]->status().state == State::Open);
  }
}

TEST_CASE("exactly M trials per cool-down across 20 instances, over 200 cool-downs") {
  for (int m : {1, 3, 5}) {
    CAPTURE(m);
    Fleet f;
    f.add_n(20, rules(m));
    for (std::size_t i = 0; i < 20; ++i) CHECK(f.call(i, Verdict::Failure));
    f.sync_all();
    f.sync_all();
    REQUIRE(f.fleet_state() == State::Open);
    for (int cooldown = 0; cooldown < 200; ++cooldown) {
      CAPTURE(cooldown);
      f.advance(1s);
      // Every instance wants to try: each asks once, in turn.
      for (std::size_t i = 0; i < 20; ++i) CHECK_FALSE(f.call(i, Verdict::Failure));
      f.sync_all();
      // Each instance now sends what it may; the last cool-down's trials succeed.
      const Verdict v = cooldown == 199 ? Verdict::Success : Verdict::Failure;
      int trials = 0;
      for (std::size_t i = 0; i < 20; ++i)
        for (int k = 0; k < 10; ++k) trials += f.call(i, v) ? 1 : 0;
      CHECK(trials == m);
      f.sync_all();
      CHECK(f.fleet_state() == (cooldown == 199 ? State::Closed : State::Open));
    }
    CHECK(f.field("trials") == 200 * m);
  }
}

TEST_CASE("a permit holder that never reports counts as a failed trial when its lease ends") {
  Fleet f;
  f.add_n(4, rules(1));
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(f.call(i, Verdict::Failure));
    CHECK(f.call(i, Verdict::Failure));
  }
  f.sync_all();
  f.sync_all();
  f.advance(1s);
  CHECK_FALSE(f.call(0, Verdict::Success));
  REQUIRE(f.members[0]->sync());
  const Admission held = f.members[0]->try_acquire();
  REQUIRE(held);
  // Killed while holding it: no result ever comes (the destructor's last sync settles nothing).
  f.members[0].reset();
  for (std::size_t i = 1; i < 4; ++i) CHECK_FALSE(f.call(i, Verdict::Success));
  for (std::size_t i = 1; i < 4; ++i) REQUIRE(f.members[i]->sync());
  for (std::size_t i = 1; i < 4; ++i) CHECK_FALSE(f.call(i, Verdict::Success));  // no second trial
  CHECK(f.fleet_state() == State::HalfOpen);
  f.advance(4999ms);
  REQUIRE(f.members[1]->sync());
  CHECK(f.fleet_state() == State::HalfOpen);
  f.advance(1ms);  // the lease (5 s) is over: reopened, as after a failed trial
  REQUIRE(f.members[1]->sync());
  CHECK(f.fleet_state() == State::Open);
  CHECK(f.field("expired") == 1);
  CHECK(f.field("trials") == 1);
}

TEST_CASE("a quorum: one instance's failures alone do not open the fleet's breaker") {
  Fleet f;
  FleetOptions a = f.fleet_options(0);
  FleetOptions b = f.fleet_options(1);
  a.quorum = b.quorum = 2;
  f.add(rules(), a);
  f.add(rules(), b);
  for (int k = 0; k < 20; ++k) CHECK(f.call(0, Verdict::Failure));  // a broken path of its own
  for (int k = 0; k < 4; ++k) CHECK(f.call(1, Verdict::Success));
  f.sync_all();
  CHECK(f.fleet_state() == State::Closed);
  CHECK(f.call(1, Verdict::Failure));  // a second instance fails too: two of two
  REQUIRE(f.members[1]->sync());
  CHECK(f.fleet_state() == State::Open);
}

TEST_CASE("a fleet whose members' options differ is refused, naming both") {
  Fleet f;
  f.add(rules(3), f.fleet_options(0));
  auto other = SharedBreaker::create(rules(5), f.fleet_options(1), *f.clocks[0]);
  REQUIRE(other);
  CHECK_FALSE((*other)->sync());
  CHECK((*other)->status().last_error.find("options differ from the fleet's") != std::string::npos);
}

TEST_CASE("at its first round trip a process loads its library over an older one of the same name") {
  TempDir dir;
  RedisServer redis(dir.path());
  RedisLink admin(*parse_redis_address(redis.address()), 2s);
  // An older build's library: the same names, an answer this build cannot read.
  auto old =
      admin.command({"FUNCTION", "LOAD",
                     "#!lua name=cb_fleet\nredis.register_function('cb_fleet_v1_sync', function() return 1 end)"});
  REQUIRE(old);
  REQUIRE(old->kind == RedisReply::Kind::String);
  ManualClock clock;
  FleetOptions f;
  f.address = redis.address();
  f.name = "payments";
  f.report_every = Duration{0};
  auto b = SharedBreaker::create(rules(), f, clock);
  REQUIRE(b);
  CHECK((*b)->sync());
  CHECK((*b)->status().last_error.empty());
  // And a deployment that loads the library itself is told when it has not.
  REQUIRE(admin.command({"FUNCTION", "FLUSH"}));
  f.load_functions = false;
  f.instance = "manual";
  auto manual = SharedBreaker::create(rules(), f, clock);
  REQUIRE(manual);
  CHECK_FALSE((*manual)->sync());
  CHECK((*manual)->status().last_error.find("is not loaded") != std::string::npos);
}

TEST_CASE("a result from before the fleet tripped is late and counts for nothing") {
  Fleet f;
  f.add_n(1, rules());
  const Admission early = f.members[0]->try_acquire();
  REQUIRE(early);
  for (int k = 0; k < 6; ++k) CHECK(f.call(0, Verdict::Failure));
  f.sync_all();
  CHECK(f.members[0]->record(early.ticket, {Verdict::Success, Duration{0}}) == RecordEffect::Late);
  CHECK(f.members[0]->record({kRefused, State::Open}, {Verdict::Success, Duration{0}}) == RecordEffect::Refused);
}

TEST_CASE("clocks five minutes apart: OPEN lasts the fleet's cool-down on each") {
  Fleet f;
  f.add(rules(), f.fleet_options(0), 5min);
  f.add(rules(), f.fleet_options(1), -5min);
  for (int k = 0; k < 3; ++k) {
    CHECK(f.call(0, Verdict::Failure));
    CHECK(f.call(1, Verdict::Failure));
  }
  f.sync_all();
  f.sync_all();
  REQUIRE(f.fleet_state() == State::Open);
  f.advance(999ms);
  for (std::size_t i = 0; i < 2; ++i) CHECK_FALSE(f.call(i, Verdict::Success));
  f.sync_all();
  CHECK(f.fleet_state() == State::Open);
  f.advance(1ms);
  for (std::size_t i = 0; i < 2; ++i) CHECK_FALSE(f.call(i, Verdict::Success));  // each asks
  f.sync_all();
  CHECK(f.fleet_state() == State::HalfOpen);
  CHECK(f.call(0, Verdict::Success));
  CHECK(f.call(1, Verdict::Success));
}

TEST_CASE("a paused Redis: calls go on, counts are kept and merged when it answers") {
  Fleet f;
  f.add(rules(), f.paused_options(0));
  for (int k = 0; k < 3; ++k) CHECK(f.call(0, Verdict::Failure));
  f.redis.pause();
  CHECK_FALSE(f.members[0]->sync());  // within its short timeout
  for (int k = 0; k < 3; ++k) CHECK(f.call(0, Verdict::Failure));
  CHECK_FALSE(f.members[0]->sync());
  CHECK(f.members[0]->status().sync_failures == 2);
  CHECK_FALSE(f.members[0]->status().local);  // not yet degrade_after (500 ms) without an answer
  f.redis.resume();
  f.sync_answered(0);
  CHECK(f.fleet_state() == State::Open);  // 6 failures of 6: the three from before and the three during
}

TEST_CASE("a report that timed out may still have run: it is not counted twice") {
  Fleet f;
  f.add(rules(), f.paused_options(0));
  CHECK(f.call(0, Verdict::Failure));
  f.redis.pause();
  // Both reports wait in Redis's socket while it is stopped, and run when it goes on.
  CHECK_FALSE(f.members[0]->sync());
  CHECK(f.call(0, Verdict::Success));
  CHECK_FALSE(f.members[0]->sync());
  f.redis.resume();
  CHECK(f.call(0, Verdict::Success));
  f.sync_answered(0);
  CHECK(f.window_calls() == 3);
  CHECK(f.fleet_state() == State::Closed);
}

TEST_CASE("a restarted Redis lost the library: it is loaded again on 'Function not found'") {
  Fleet f;
  FleetOptions o = f.fleet_options(0);
  o.load_functions = true;
  f.add(rules(), o);
  f.redis.stop();
  CHECK_FALSE(f.members[0]->sync());
  f.redis.start();
  CHECK(f.members[0]->sync());
  RedisLink link(*parse_redis_address(f.redis.address()), 2s);
  auto list = link.command({"FUNCTION", "LIST", "LIBRARYNAME", "cb_fleet"});
  REQUIRE(list);
  CHECK(list->elements.size() == 1);
}

TEST_CASE("without Redis, only the instances that rank first send a trial") {
  for (int m : {1, 3}) {
    CAPTURE(m);
    Fleet f;
    f.add_n(20, rules(m));
    f.sync_all();
    f.sync_all();  // everyone has the whole member list now
    for (std::size_t i = 0; i < 20; ++i) CHECK(f.call(i, Verdict::Failure));
    f.sync_all();
    f.sync_all();
    REQUIRE(f.fleet_state() == State::Open);
    f.stop_redis();
    for (int round = 0; round < 5; ++round) {
      CAPTURE(round);
      // Each cool-down: every instance's own breaker ends it at the same moment, every one
      // wants to try, and about M do.
      f.advance(1s);
      for (auto& member : f.members) (void)member->sync();
      int trials = 0;
      for (std::size_t i = 0; i < 20; ++i)
        for (int k = 0; k < 5; ++k) trials += f.call(i, Verdict::Failure) ? 1 : 0;
      CHECK(trials == m);
      for (auto& member : f.members) CHECK(member->status().local);
    }
  }
}

TEST_CASE("options a fleet cannot share are refused, naming the field") {
  ManualClock clock;
  FleetOptions f;
  f.address = "unix:///nonexistent/redis.sock";
  f.name = "payments";
  BreakerOptions o = rules();
  o.trip.consecutive_failures = 5;
  auto a = SharedBreaker::create(o, f, clock);
  REQUIRE_FALSE(a);
  CHECK(a.error().message.starts_with("trip.consecutive_failures:"));
  f.name = "pay{ments}";
  auto b = SharedBreaker::create(rules(), f, clock);
  REQUIRE_FALSE(b);
  CHECK(b.error().message.starts_with("fleet.name:"));
  f.name = "payments";
  f.address = "http://127.0.0.1:6379";
  auto c = SharedBreaker::create(rules(), f, clock);
  REQUIRE_FALSE(c);
  CHECK(c.error().message.starts_with("fleet.address:"));
  f.address = "redis://127.0.0.1:0";
  CHECK_FALSE(SharedBreaker::create(rules(), f, clock));
}

TEST_CASE("a CLOSED call reads no clock, and with no Redis at all the process runs on local rules") {
  struct CountingClock final : Clock {
    mutable std::atomic<int> reads{0};
    ManualClock inner;
    [[nodiscard]] TimePoint now() const noexcept override {
      ++reads;
      return inner.now();
    }
  } clock;
  FleetOptions f;
  f.address = "unix:///nonexistent/redis.sock";
  f.name = "payments";
  f.report_every = Duration{0};
  auto b = SharedBreaker::create(rules(), f, clock);
  REQUIRE(b);
  const int before = clock.reads.load();
  for (int k = 0; k < 100; ++k) {
    const Admission a = (*b)->try_acquire();
    REQUIRE(a);
    CHECK((*b)->record(a.ticket, {Verdict::Success, Duration{0}}) == RecordEffect::Counted);
  }
  CHECK(clock.reads.load() == before);
  clock.inner.advance(500ms);
  CHECK_FALSE((*b)->sync());
  CHECK((*b)->status().local);
  for (int k = 0; k < 6; ++k) {
    const Admission a = (*b)->try_acquire();
    REQUIRE(a);
    (void)(*b)->record(a.ticket, {Verdict::Failure, Duration{0}});
  }
  CHECK((*b)->status().state == State::Open);  // its own six failures, judged by its own rules
}

TEST_CASE("ranking: every process computes the same first places, and they move") {
  std::vector<std::string> members;
  for (int i = 0; i < 20; ++i) members.push_back("i" + std::to_string(i));
  std::set<std::string> ever_first;
  for (std::uint64_t key = 0; key < 50; ++key) {
    int first = 0;
    for (const std::string& m : members) {
      if (ranks_first(m, members, key, 3)) {
        ++first;
        ever_first.insert(m);
      }
    }
    CHECK(first == 3);
  }
  CHECK(ever_first.size() >= 15);
}

TEST_CASE("threads calling on two members while their reporters talk to Redis: at most M trials a HALF_OPEN") {
  // Real time (a 20 ms cool-down, reports every 5 ms) and the real library: what this checks is
  // the threads, under TSan in CI; the count holds whatever the timing.
  TempDir dir;
  RedisServer redis(dir.path());
  SteadyClock clock;
  BreakerOptions o = rules(2);
  o.cooldown.base = 20ms;
  std::vector<std::unique_ptr<SharedBreaker>> members;
  for (int i = 0; i < 2; ++i) {
    FleetOptions f;
    f.address = redis.address();
    f.name = "threads";
    f.instance = "t" + std::to_string(i);
    f.report_every = 5ms;
    f.lease = 200ms;
    auto b = SharedBreaker::create(o, f, clock);
    REQUIRE(b);
    members.push_back(std::move(*b));
  }
  std::mutex mu;
  std::map<std::uint64_t, int> trials;  // per HALF_OPEN generation
  std::vector<std::thread> threads;
  const auto until = std::chrono::steady_clock::now() + 1s;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SharedBreaker& b = *members[static_cast<std::size_t>(t % 2)];
      while (std::chrono::steady_clock::now() < until) {
        const Admission a = b.try_acquire();
        if (!a) continue;
        if (a.ticket.admitted_in == State::HalfOpen) {
          std::lock_guard lock(mu);
          ++trials[a.ticket.generation];
        }
        (void)b.record(a.ticket, {Verdict::Failure, Duration{100}});
        (void)b.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  int most = 0;
  for (const auto& [gen, n] : trials) most = std::max(most, n);
  MESSAGE(trials.size() << " HALF_OPENs with trials, at most " << most);
  CHECK(most <= 2);
  CHECK(trials.size() >= 5);
}

}  // namespace
}  // namespace cb::fleet

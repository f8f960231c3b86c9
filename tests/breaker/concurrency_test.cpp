// Many threads on one breaker. Run under TSan (the tsan preset) as well as normally.
#include <doctest/doctest.h>

#include <atomic>
#include <barrier>
#include <map>
#include <mutex>
#include <thread>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

constexpr int kThreads = 8;

// Each thread's own pseudo-random stream (xorshift64), so no thread waits on a shared generator.
struct XorShift {
  std::uint64_t x;
  std::uint64_t next() noexcept {
    x ^= x << 13U;
    x ^= x >> 7U;
    x ^= x << 17U;
    return x;
  }
};

TEST_CASE("concurrency: racing threads in HALF_OPEN get exactly the permitted trials") {
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    Harness h(profiles::lab(3s));
    REQUIRE(h.calls("FFFFF") == "FFFFF");
    h.at(3);
    std::atomic<int> permitted{0};
    std::atomic<int> refused_full{0};
    std::barrier start(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        start.arrive_and_wait();  // everyone asks at once
        const Admission a = h.breaker->try_acquire();
        if (a) {
          permitted.fetch_add(1);
        } else if (a.decision == Decision::RefusedHalfOpenFull) {
          refused_full.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(permitted.load() == 3);
    CHECK(refused_full.load() == kThreads - 3);
  }
}

TEST_CASE("concurrency: threads hammering one breaker through every state") {
  // Each worker calls, sometimes moves the (shared, manual) clock, and reports what the
  // dependency did: failing for the first 10 s of every 20 s. Trials are counted per half-open
  // generation as the workers are admitted, and checked against the transitions afterwards.
  Harness h(profiles::lab(3s));
  std::mutex mu;
  std::map<std::uint64_t, int> trials_by_generation;
  std::vector<Transition> heard;
  h.breaker->subscribe([&](const Transition& t) { heard.push_back(t); });  // delivery is serial
  constexpr int kCallsPerThread = 4000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      XorShift random{0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(static_cast<unsigned>(i)) + 1U)};
      for (int n = 0; n < kCallsPerThread; ++n) {
        if (random.next() % 40 == 0) h.clock.advance(1s);
        const Admission a = h.breaker->try_acquire();
        if (!a) continue;
        if (a.ticket.admitted_in == State::HalfOpen) {
          std::lock_guard lock(mu);
          ++trials_by_generation[a.ticket.generation];
        }
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(h.clock.now().time_since_epoch()).count();
        const bool failing = (seconds / 10) % 2 == 0;
        (void)h.breaker->record(a.ticket, {failing ? Verdict::Failure : Verdict::Success, 1ms});
      }
    });
  }
  for (auto& t : threads) t.join();

  // The transitions form one unbroken chain: each starts where the last ended, generations
  // count up by one, and the breaker went round the whole cycle.
  REQUIRE(heard.size() >= 6);
  for (std::size_t k = 1; k < heard.size(); ++k) {
    CAPTURE(k);
    CHECK(heard[k].from == heard[k - 1].to);
    CHECK(heard[k].generation == heard[k - 1].generation + 1);
  }
  int half_opens_decided = 0;
  for (const Transition& t : heard) {
    if (t.from != State::HalfOpen || t.reason == Reason::HalfOpenTimeout) continue;
    // A HALF_OPEN decided by its trials admitted exactly 3 of them, never more.
    CHECK(trials_by_generation[t.generation - 1] == 3);
    ++half_opens_decided;
  }
  CHECK(half_opens_decided >= 2);
  for (const auto& [generation, trials] : trials_by_generation) CHECK(trials <= 3);
  const Counters c = h.breaker->status().metrics.counters;
  CHECK(c.permitted + c.not_permitted == static_cast<std::uint64_t>(kThreads) * kCallsPerThread);
  CHECK(c.successes + c.failures + c.late == c.permitted);
}

// The lock-free paths (a call and its success in CLOSED, a refusal in OPEN) race the locked
// ones here. Random outcomes from each thread's own generator, failing mostly in the first 5 s
// of every 10 s so the breaker goes round its cycle many times; the invariants come from the
// listeners' transcript and the counters, for each kind of rule.
TEST_CASE("concurrency: stress with random outcomes - the transcript is a valid path and every call is counted once") {
  struct Profile {
    const char* name;
    BreakerOptions options;
  };
  BreakerOptions timed = profiles::lab(3s);
  timed.trip.window = {WindowOptions::Kind::Time, 2, 5};
  for (const Profile& p :
       {Profile{"lab (count window, 3 trials judged together)", profiles::lab(3s)},
        Profile{"balancer (consecutive, every call a trial)", profiles::balancer()},
        Profile{"lesson (consecutive, one trial)", profiles::lesson()}, Profile{"time window", timed}}) {
    const std::string name = p.name;
    CAPTURE(name);
    Harness h(p.options);
    std::vector<Transition> heard;
    h.breaker->subscribe([&](const Transition& t) { heard.push_back(t); });  // delivery is serial
    std::mutex mu;
    std::map<std::uint64_t, int> trials_by_generation;  // admitted, less those that gave their slot back
    constexpr int kStressThreads = 8;
    constexpr int kCalls = 5000;
    std::atomic<std::uint64_t> recorded{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kStressThreads; ++i) {
      threads.emplace_back([&, i] {
        XorShift random{0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(static_cast<unsigned>(i)) + 7U)};
        for (int n = 0; n < kCalls; ++n) {
          const std::uint64_t x = random.next();
          if (x % 50 == 0) h.clock.advance(250ms);
          const Admission a = h.breaker->try_acquire();
          if (!a) continue;
          if (a.ticket.admitted_in == State::HalfOpen) {
            std::lock_guard lock(mu);
            ++trials_by_generation[a.ticket.generation];
          }
          const auto ms =
              std::chrono::duration_cast<std::chrono::milliseconds>(h.clock.now().time_since_epoch()).count();
          const unsigned odds = (ms / 5000) % 2 == 0 ? 85 : 3;  // percent failing
          const unsigned roll = static_cast<unsigned>((x >> 20U) % 100);
          const Verdict v = roll < odds ? Verdict::Failure : roll < 97 ? Verdict::Success : Verdict::Ignored;
          if (h.breaker->record(a.ticket, {v, 1ms}) == RecordEffect::Ignored &&
              a.ticket.admitted_in == State::HalfOpen) {
            std::lock_guard lock(mu);  // an ignored trial told nothing: its slot went to the next call
            --trials_by_generation[a.ticket.generation];
          }
          recorded.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();

    REQUIRE(heard.size() >= 6);
    for (std::size_t k = 0; k < heard.size(); ++k) {
      CAPTURE(k);
      const Transition& t = heard[k];
      const bool edge = (t.from == State::Closed && t.to == State::Open) ||
                        (t.from == State::Open && t.to == State::HalfOpen) ||
                        (t.from == State::HalfOpen && (t.to == State::Open || t.to == State::Closed));
      CHECK(edge);
      if (k == 0) continue;
      CHECK(t.from == heard[k - 1].to);
      CHECK(t.generation > heard[k - 1].generation);
      CHECK(t.at >= heard[k - 1].at);
    }
    const int limit = p.options.half_open.permitted_calls;
    if (limit > 0)
      for (const auto& [generation, trials] : trials_by_generation) CHECK(trials <= limit);
    const Counters c = h.breaker->status().metrics.counters;
    CHECK(c.permitted + c.not_permitted == static_cast<std::uint64_t>(kStressThreads) * kCalls);
    CHECK(c.permitted == recorded.load());
    CHECK(c.successes + c.failures + c.ignored + c.late == c.permitted);
    CHECK(c.transitions == heard.size());
  }
}

}  // namespace
}  // namespace cb::testing

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
      std::uint64_t x = 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(static_cast<unsigned>(i)) + 1U);
      for (int n = 0; n < kCallsPerThread; ++n) {
        x ^= x << 13U;
        x ^= x >> 7U;
        x ^= x << 17U;
        if (x % 40 == 0) h.clock.advance(1s);
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

}  // namespace
}  // namespace cb::testing

// What one call costs the caller, for three designs in the same process: our engine, the common
// one-mutex breaker that reads the clock on every call (bench/mutex_breaker.h) and a beginner's
// breaker (bench/baseline_breaker.h). "Call" is a permitted call plus its recorded success in
// CLOSED, or one refusal in OPEN; 1 and 2 threads on one breaker.
// Run: bench/run-breaker-bench (Release build, several processes). Numbers go in
// docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <memory>

#include "baseline_breaker.h"
#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"
#include "mutex_breaker.h"

namespace {

using namespace std::chrono_literals;

// Shared by the threads of one benchmark run; built by thread 0 before the others start.
struct Shared {
  cb::SteadyClock steady;
  std::unique_ptr<cb::CircuitBreaker> breaker;
  std::unique_ptr<cb::bench::MutexBreaker> mutex;
  std::unique_ptr<cb::bench::BaselineBreaker> baseline;
};
Shared g;

// Arg 0 is the lab's count window (10 calls, at least 5, 50%), arg 1 the balancer's five
// consecutive failures; the mutex breaker gets the same rule.
cb::BreakerOptions profile(std::int64_t which, cb::Duration cooldown = 30s) {
  return which == 0 ? cb::profiles::lab(cooldown) : cb::profiles::balancer();
}
cb::bench::MutexBreaker::Options mutex_profile(std::int64_t which, std::chrono::seconds cooldown = 30s) {
  return which == 0 ? cb::bench::MutexBreaker::lab_rule(cooldown) : cb::bench::MutexBreaker::balancer_rule(cooldown);
}
const char* label(std::int64_t which) { return which == 0 ? "lab" : "balancer"; }

void BM_Ours_Closed(benchmark::State& state) {
  if (state.thread_index() == 0) g.breaker = cb::CircuitBreaker::create(profile(state.range(0)), g.steady).value();
  for (auto _ : state) {
    const cb::Admission a = g.breaker->try_acquire();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(g.breaker->record(a.ticket, {cb::Verdict::Success, 1ms}));
  }
  if (state.thread_index() == 0) state.SetLabel(label(state.range(0)));
}
BENCHMARK(BM_Ours_Closed)->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

void BM_Mutex_Closed(benchmark::State& state) {
  if (state.thread_index() == 0) g.mutex = std::make_unique<cb::bench::MutexBreaker>(mutex_profile(state.range(0)));
  for (auto _ : state) {
    const std::uint64_t generation = g.mutex->before();
    benchmark::DoNotOptimize(generation);
    g.mutex->after(generation, true);
  }
  if (state.thread_index() == 0) state.SetLabel(label(state.range(0)));
}
BENCHMARK(BM_Mutex_Closed)->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

void BM_Baseline_Closed(benchmark::State& state) {
  if (state.thread_index() == 0) g.baseline = std::make_unique<cb::bench::BaselineBreaker>(5, 30s);
  for (auto _ : state) {
    benchmark::DoNotOptimize(g.baseline->allow());
    g.baseline->report(true);
  }
}
BENCHMARK(BM_Baseline_Closed)->Threads(1)->Threads(2)->UseRealTime();

void BM_Ours_Refusal(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g.breaker = cb::CircuitBreaker::create(profile(1, 3600s), g.steady).value();
    for (int i = 0; i < 5; ++i) {
      const cb::Admission a = g.breaker->try_acquire();
      (void)g.breaker->record(a.ticket, {cb::Verdict::Failure, 1ms});
    }
  }
  for (auto _ : state) benchmark::DoNotOptimize(g.breaker->try_acquire());
  if (state.thread_index() == 0 && g.breaker->state() != cb::State::Open) state.SkipWithError("not OPEN");
}
BENCHMARK(BM_Ours_Refusal)->Threads(1)->Threads(2)->UseRealTime();

void BM_Mutex_Refusal(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g.mutex = std::make_unique<cb::bench::MutexBreaker>(mutex_profile(1, 3600s));
    for (int i = 0; i < 5; ++i) g.mutex->after(g.mutex->before(), false);
  }
  for (auto _ : state) benchmark::DoNotOptimize(g.mutex->before());
  if (state.thread_index() == 0 && g.mutex->before() != 0) state.SkipWithError("not OPEN");
}
BENCHMARK(BM_Mutex_Refusal)->Threads(1)->Threads(2)->UseRealTime();

void BM_Baseline_Refusal(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g.baseline = std::make_unique<cb::bench::BaselineBreaker>(5, 3600s);
    for (int i = 0; i < 5; ++i) g.baseline->report(false);
  }
  for (auto _ : state) benchmark::DoNotOptimize(g.baseline->allow());
}
BENCHMARK(BM_Baseline_Refusal)->Threads(1)->Threads(2)->UseRealTime();

// What bounds the numbers above: an uncontended lock and unlock, and a read of each clock.
void BM_Floor_MutexLockUnlock(benchmark::State& state) {
  static std::mutex mu;
  for (auto _ : state) {
    std::lock_guard lock(mu);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Floor_MutexLockUnlock)->Threads(1)->Threads(2)->UseRealTime();

void BM_Floor_SteadyClockRead(benchmark::State& state) {
  cb::SteadyClock clock;
  for (auto _ : state) benchmark::DoNotOptimize(clock.now());
}
BENCHMARK(BM_Floor_SteadyClockRead);

void BM_Floor_CoarseClockRead(benchmark::State& state) {
  for (auto _ : state) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_Floor_CoarseClockRead);

}  // namespace

BENCHMARK_MAIN();

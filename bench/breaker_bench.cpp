// What one call costs the caller: a permitted call plus its recorded outcome in CLOSED, and a
// refusal in OPEN, for our engine and for a one-mutex baseline, 1 and 2 threads on one breaker.
// Run: bench/run-breaker-bench (Release build). Numbers go in docs/PERFORMANCE.md.
#include <benchmark/benchmark.h>

#include <memory>

#include "baseline_breaker.h"
#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"

namespace {

using namespace std::chrono_literals;

// Shared by the threads of one benchmark run; built by thread 0 before the others start.
struct Shared {
  cb::SteadyClock steady;
  std::unique_ptr<cb::CircuitBreaker> breaker;
  std::unique_ptr<cb::bench::BaselineBreaker> baseline;
};
Shared g;

cb::BreakerOptions profile(std::int64_t which) {
  return which == 0 ? cb::profiles::lab(3s) : cb::profiles::balancer();
}

void BM_Closed_CallAndRecord(benchmark::State& state) {
  if (state.thread_index() == 0) g.breaker = cb::CircuitBreaker::create(profile(state.range(0)), g.steady).value();
  for (auto _ : state) {
    const cb::Admission a = g.breaker->try_acquire();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(g.breaker->record(a.ticket, {cb::Verdict::Success, 1ms}));
  }
  if (state.thread_index() == 0) state.SetLabel(state.range(0) == 0 ? "lab" : "balancer");
}
BENCHMARK(BM_Closed_CallAndRecord)->Arg(0)->Arg(1)->Threads(1)->Threads(2)->UseRealTime();

void BM_Open_Refusal(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g.breaker = cb::CircuitBreaker::create(cb::profiles::lab(3600s), g.steady).value();
    g.breaker->force_closed();
    g.breaker->reset();
    for (int i = 0; i < 5; ++i) {
      const cb::Admission a = g.breaker->try_acquire();
      (void)g.breaker->record(a.ticket, {cb::Verdict::Failure, 1ms});
    }
  }
  for (auto _ : state) benchmark::DoNotOptimize(g.breaker->try_acquire());
  if (state.thread_index() == 0 && g.breaker->state() != cb::State::Open) state.SkipWithError("not OPEN");
}
BENCHMARK(BM_Open_Refusal)->Threads(1)->Threads(2)->UseRealTime();

void BM_Baseline_Closed_CallAndRecord(benchmark::State& state) {
  if (state.thread_index() == 0) g.baseline = std::make_unique<cb::bench::BaselineBreaker>(5, 30s);
  for (auto _ : state) {
    benchmark::DoNotOptimize(g.baseline->allow());
    g.baseline->report(true);
  }
}
BENCHMARK(BM_Baseline_Closed_CallAndRecord)->Threads(1)->Threads(2)->UseRealTime();

void BM_Baseline_Open_Refusal(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g.baseline = std::make_unique<cb::bench::BaselineBreaker>(5, 3600s);
    for (int i = 0; i < 5; ++i) g.baseline->report(false);
  }
  for (auto _ : state) benchmark::DoNotOptimize(g.baseline->allow());
}
BENCHMARK(BM_Baseline_Open_Refusal)->Threads(1)->Threads(2)->UseRealTime();

// What bounds the numbers above: an uncontended lock and unlock, and one read of the clock.
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

}  // namespace

BENCHMARK_MAIN();

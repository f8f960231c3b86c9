// The grader's own time in cb-grade --conformance, without any program's start-up: generating
// and judging traces, and shrinking a 200-call counterexample. The program here is the grader's
// model with one rule bent, answering in-process, so what is timed is the grader alone.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "cb/grade/conformance_traces.h"

namespace {

using namespace cb::grade::conformance;

// A breaker that takes "at least" for "more than" at the threshold.
Replies strict_rate(const Trace& t) {
  Settings s = t.settings;
  s.failure_rate_percent += 1;
  return model_answers(s, t.calls);
}

// 200 calls with the lab's settings that first differ at call 150 or later: generated traces
// with the lab's settings (every fifth of a seed), joined with a quiet minute between, cut at
// 200 calls; the first seed whose join differs that late.
Trace long_counterexample() {
  for (std::uint64_t seed = 1; seed < 10'000; ++seed) {
    Trace joined{lab_settings(), {}};
    double offset = 0;
    for (int i = 0; joined.calls.size() < 200; i += 5) {
      const Trace part = generate(seed, i);
      for (Call c : part.calls) {
        c.t_ms += offset;
        joined.calls.push_back(c);
      }
      offset = joined.calls.back().t_ms + 60'000;
    }
    joined.calls.resize(200);
    const auto d = compare(joined, strict_rate(joined).answers);
    if (d && d->at >= 150) return joined;
  }
  std::fprintf(stderr, "no long counterexample found\n");
  std::exit(1);
}

void BM_ShrinkA200CallCounterexample(benchmark::State& state) {
  const Trace failing = long_counterexample();
  std::size_t calls = 0;
  int runs = 0;
  for (auto _ : state) {
    const Shrunk small = shrink(failing, strict_rate);
    calls = small.trace.calls.size();
    runs = small.runs;
    benchmark::DoNotOptimize(small);
  }
  state.counters["calls_after"] = static_cast<double>(calls);
  state.counters["program_runs"] = runs;
}
BENCHMARK(BM_ShrinkA200CallCounterexample)->Unit(benchmark::kMillisecond);

void BM_Generate200TracesAndJudge(benchmark::State& state) {
  for (auto _ : state) {
    for (int i = 0; i < 200; ++i) {
      const Trace t = generate(7, i);
      benchmark::DoNotOptimize(compare(t, model_answers(t.settings, t.calls)));
    }
  }
}
BENCHMARK(BM_Generate200TracesAndJudge)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

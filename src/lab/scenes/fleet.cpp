// The payments story's "20 instances": every instance of checkout has its own breaker, payments is down,
// and each breaker sends its own trial every cool-down. Without jitter they come together; with
// jitter on the cool-down (a seeded random source per instance, so a run repeats exactly) they
// spread out.
#include <algorithm>
#include <cstdio>
#include <map>

#include "cb/breaker/breaker.h"
#include "cb/breaker/cooldown.h"
#include "cb/lab/scenes.h"

namespace cb::lab {
namespace {

struct Run {
  std::map<long long, int> per_bucket;  // trials reaching payments, per bucket
  std::vector<int> per_second;          // the same per second of the outage: the herd shows here
  int max_in_one_second = 0;            // the most trials in any one second
  long long trials = 0;
  std::vector<double> trial_times;
};

Run simulate(const FleetSpec& spec, BreakerOptions options, double jitter, std::uint64_t seed) {
  options.cooldown.jitter = jitter;
  ManualClock clock;
  std::vector<SeededRandom> randoms;
  randoms.reserve(static_cast<std::size_t>(spec.instances));
  for (int i = 0; i < spec.instances; ++i) randoms.emplace_back(seed * 1000 + static_cast<std::uint64_t>(i));
  std::vector<std::unique_ptr<CircuitBreaker>> breakers;
  for (int i = 0; i < spec.instances; ++i)
    breakers.push_back(CircuitBreaker::create(options, clock, &randoms[static_cast<std::size_t>(i)]).value());
  // Every instance calls on its own beat, the beats spread over start_spread.
  struct Call {
    Micros at;
    int instance;
  };
  std::vector<Call> calls;
  const Micros end = spec.down_for + 2 * spec.bucket;
  for (int i = 0; i < spec.instances; ++i) {
    const Micros first{spec.start_spread.count() * i / spec.instances};
    for (Micros t = first; t < end; t += spec.request_every) calls.push_back({t, i});
  }
  std::sort(calls.begin(), calls.end(),
            [](const Call& a, const Call& b) { return std::tie(a.at, a.instance) < std::tie(b.at, b.instance); });
  Run run;
  run.per_second.assign(static_cast<std::size_t>((spec.down_for.count() + 999'999) / 1'000'000), 0);
  for (const Call& c : calls) {
    clock.set(TimePoint{c.at});
    CircuitBreaker& b = *breakers[static_cast<std::size_t>(c.instance)];
    const Admission a = b.try_acquire();
    if (!a) continue;
    const bool down = c.at < spec.down_for;
    if (a.ticket.admitted_in == State::HalfOpen && down) {
      ++run.trials;
      ++run.per_bucket[c.at.count() / spec.bucket.count()];
      ++run.per_second[static_cast<std::size_t>(c.at.count() / 1'000'000)];
      run.trial_times.push_back(static_cast<double>(c.at.count()) / 1e6);
    }
    (void)b.record(a.ticket, {down ? Verdict::Failure : Verdict::Success, Micros{0}});
  }
  std::sort(run.trial_times.begin(), run.trial_times.end());
  for (std::size_t i = 0, j = 0; j < run.trial_times.size(); ++j) {
    while (run.trial_times[j] - run.trial_times[i] >= 1.0) ++i;
    run.max_in_one_second = std::max(run.max_in_one_second, static_cast<int>(j - i + 1));
  }
  return run;
}

}  // namespace

Result<SceneOutput> run_fleet(const FleetSpec& spec, const BreakerOptions& options, const SceneRun& how) {
  SceneOutput out;
  if (how.live && !how.processes)
    out.lines.emplace_back("(the fleet is simulated here; --shared REDIS runs it as real processes too)");
  const std::uint64_t seed = how.seed.value_or(spec.seed);
  nlohmann::json runs = nlohmann::json::array();
  for (double jitter : spec.jitters) {
    const Run r = simulate(spec, options, jitter, seed);
    // Buckets wholly inside the outage: the first (the trips) and the last (recovery) are partial.
    std::string buckets;
    nlohmann::json counts = nlohmann::json::array();
    for (long long k = 1; k < spec.down_for.count() / spec.bucket.count(); ++k) {
      const int n = r.per_bucket.count(k) != 0 ? r.per_bucket.at(k) : 0;
      buckets += (buckets.empty() ? "" : " ") + std::to_string(n);
      counts.push_back(n);
    }
    char line[512];
    std::snprintf(line, sizeof line,
                  "jitter %.2f: trials reaching payments per %lld s: %s; at most %d in any one second", jitter,
                  static_cast<long long>(spec.bucket.count() / 1'000'000), buckets.c_str(), r.max_in_one_second);
    out.lines.emplace_back(line);
    runs.push_back({{"jitter", jitter},
                    {"per_bucket", counts},
                    {"per_second", r.per_second},
                    {"max_in_one_second", r.max_in_one_second},
                    {"trials", r.trials}});
  }
  out.lines.push_back(std::to_string(spec.instances) +
                      " breakers know nothing of each other: without jitter each sends its trial on the same "
                      "schedule, all of them within the same second; with jitter the cool-downs differ, so fewer "
                      "trials come, and spread out (seed " +
                      std::to_string(seed) + ")");
  out.data = {{"instances", spec.instances},
              {"runs", runs},
              {"seed", seed},
              {"bucket_s", static_cast<double>(spec.bucket.count()) / 1e6}};
  return out;
}

}  // namespace cb::lab

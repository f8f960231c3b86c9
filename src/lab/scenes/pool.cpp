// The payments story's "How one slow service spreads": requests arrive at a fixed rate, each holds a worker
// for as long as its calls take, retries included. A discrete-event simulation on the engine's
// manual clock (exact to the microsecond: 40/s is an arrival every 25,000 us), or live: real
// worker threads calling the flaky server, with time scaled down.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <queue>
#include <semaphore>
#include <thread>

#include "cb/breaker/breaker.h"
#include "cb/lab/http_call.h"
#include "cb/lab/scenes.h"
#include "cb/flaky/endpoints.h"

namespace cb::lab {
namespace {

std::string secs(Micros t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(t.count()) / 1e6);
  return buf;
}

struct Figures {
  int peak = 0;
  std::optional<Micros> exhausted;      // the first arrival that found no free worker
  std::optional<Micros> first_timeout;  // the first call that gave up waiting
  long long turned_away = 0;
  long long requests = 0;
  long long refused_by_breaker = 0;
  std::vector<std::pair<Micros, int>> samples;  // workers in use at each sample time
};

Figures simulate(const PoolSpec& spec, const std::optional<BreakerOptions>& options) {
  ManualClock clock;
  std::unique_ptr<CircuitBreaker> breaker;
  if (options) breaker = CircuitBreaker::create(*options, clock).value();
  // Events: an attempt ending (kind 0) sorts before an arrival (kind 1) at the same instant, so a
  // worker freed at t serves the request arriving at t (50/s at 80 ms holds 4, not 5).
  struct Event {
    Micros at;
    int kind;
    long long seq;
    int attempt;
    bool failed;
    bool timed_out;
    Ticket ticket;
  };
  auto later = [](const Event& a, const Event& b) {
    return std::tie(a.at, a.kind, a.seq) > std::tie(b.at, b.kind, b.seq);
  };
  std::priority_queue<Event, std::vector<Event>, decltype(later)> events(later);
  Figures f;
  const Micros every{static_cast<Micros::rep>(std::llround(1e6 / spec.rate))};
  long long seq = 0;
  for (Micros t{0}; t < spec.duration; t += every) events.push({t, 1, seq++, 0, false, false, {}});
  int busy = 0;
  Micros next_sample{0};

  // Starts attempt n of a request at t: through the breaker, against the dependency's phase.
  auto start_attempt = [&](Micros t, long long id, int n) -> bool {
    clock.set(TimePoint{t});
    Ticket ticket;
    if (breaker) {
      const Admission a = breaker->try_acquire();
      if (!a) {
        ++f.refused_by_breaker;
        return false;  // refused at once: the request ends now, its worker free
      }
      ticket = a.ticket;
    }
    const BackendPhase& p = phase_at(spec.backend, t);
    const bool hang = p.answer == BackendPhase::Answer::Hang || p.latency >= spec.timeout;
    const Micros took = hang ? spec.timeout : p.latency;
    events.push({t + took, 0, id, n, hang || p.answer == BackendPhase::Answer::Error, hang, ticket});
    return true;
  };

  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    for (; next_sample <= e.at && next_sample <= spec.duration; next_sample += spec.sample_every)
      f.samples.emplace_back(next_sample, busy);
    if (e.kind == 1) {
      ++f.requests;
      if (spec.workers > 0 && busy >= spec.workers) {
        ++f.turned_away;
        if (!f.exhausted) f.exhausted = e.at;
        continue;
      }
      ++busy;
      f.peak = std::max(f.peak, busy);
      if (!start_attempt(e.at, e.seq, 1)) --busy;
      continue;
    }
    clock.set(TimePoint{e.at});
    if (e.timed_out && !f.first_timeout) f.first_timeout = e.at;
    if (breaker) (void)breaker->record(e.ticket, {e.failed ? Verdict::Failure : Verdict::Success, Micros{0}});
    // A failed attempt is tried again at once while attempts remain: the retry holds the same
    // worker, which is what multiplies the workers a slow dependency takes.
    if (e.failed && e.attempt < spec.attempts && start_attempt(e.at, e.seq, e.attempt + 1)) continue;
    --busy;
  }
  for (; next_sample <= spec.duration; next_sample += spec.sample_every) f.samples.emplace_back(next_sample, busy);
  return f;
}

// Live: real threads, one per worker, calling the flaky server; time scaled by `scale`.
Figures live(const PoolSpec& spec, const std::optional<BreakerOptions>& options, const ServerUrl& server,
             double scale) {
  auto scaled = [&](Micros d) { return Micros{static_cast<Micros::rep>(static_cast<double>(d.count()) * scale)}; };
  cb::SteadyClock clock;
  std::optional<BreakerOptions> o = options;
  if (o) o->cooldown.base = scaled(o->cooldown.base);
  std::unique_ptr<CircuitBreaker> breaker;
  if (o) breaker = CircuitBreaker::create(*o, clock).value();
  const int workers = spec.workers > 0 ? spec.workers : 1000;
  std::counting_semaphore<> free_workers(workers);
  std::atomic<int> busy{0};
  std::atomic<int> peak{0};
  std::mutex mu;
  Figures f;
  const auto start = std::chrono::steady_clock::now();
  auto scene_now = [&] {
    return Micros{static_cast<Micros::rep>(
        static_cast<double>(std::chrono::duration_cast<Micros>(std::chrono::steady_clock::now() - start).count()) /
        scale)};
  };
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(scaled(spec.timeout));
  std::vector<std::thread> threads;
  std::thread sampler([&] {
    for (Micros t{0}; t <= spec.duration; t += spec.sample_every) {
      std::this_thread::sleep_until(start + scaled(t));
      std::lock_guard lock(mu);
      f.samples.emplace_back(t, busy.load());
    }
  });
  const Micros every{static_cast<Micros::rep>(std::llround(1e6 / spec.rate))};
  for (Micros t{0}; t < spec.duration; t += every) {
    std::this_thread::sleep_until(start + scaled(t));
    ++f.requests;
    if (!free_workers.try_acquire()) {
      std::lock_guard lock(mu);
      ++f.turned_away;
      if (!f.exhausted) f.exhausted = scene_now();
      continue;
    }
    const int now_busy = ++busy;
    for (int p = peak.load(); now_busy > p && !peak.compare_exchange_weak(p, now_busy);) {
    }
    threads.emplace_back([&, t] {
      for (int attempt = 1; attempt <= spec.attempts; ++attempt) {
        std::optional<Admission> a;
        if (breaker) {
          a = breaker->try_acquire();
          if (!*a) {
            std::lock_guard lock(mu);
            ++f.refused_by_breaker;
            break;
          }
        }
        const BackendPhase& p = phase_at(spec.backend, scene_now());
        const std::string path =
            p.answer == BackendPhase::Answer::Hang ? std::string(flaky::path::kHang)
            : p.answer == BackendPhase::Answer::Error
                ? std::string(flaky::path::kAlways500)
                : std::string(flaky::path::kSlow) + "?ms=" + std::to_string(scaled(p.latency).count() / 1000);
        const HttpAnswer r = http_request(server, "GET", path, timeout);
        const bool failed = classify::Classifier::http().classify(r.observation) == Verdict::Failure;
        if (r.observation.origin == classify::Origin::Timeout) {
          std::lock_guard lock(mu);
          const Micros at = scene_now();
          if (!f.first_timeout || at < *f.first_timeout) f.first_timeout = at;
        }
        if (breaker)
          (void)breaker->record(
              a->ticket, {failed ? Verdict::Failure : Verdict::Success, std::chrono::duration_cast<Micros>(r.elapsed)});
        if (!failed) break;
      }
      --busy;
      free_workers.release();
      (void)t;
    });
  }
  for (auto& th : threads) th.join();
  sampler.join();
  f.peak = peak.load();
  return f;
}

// The workers usually in use: the median of the samples after the first. A peak is one
// instant, and a live run's first instants carry the start-up of threads and connections.
int typical(const Figures& f) {
  std::vector<int> v;
  for (std::size_t i = 1; i < f.samples.size(); ++i) v.push_back(f.samples[i].second);
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Live and simulated tell the same story: the same exhaustion (to a tenth of a second, or 5%),
// and about as many workers usually busy (within 2, or 25%).
bool agree(const Figures& live, const Figures& sim) {
  if (live.exhausted.has_value() != sim.exhausted.has_value()) return false;
  if (live.exhausted) {
    const double a = static_cast<double>(live.exhausted->count()) / 1e6;
    const double b = static_cast<double>(sim.exhausted->count()) / 1e6;
    if (std::abs(a - b) > std::max(0.1, 0.05 * b)) return false;
  }
  const int a = typical(live);
  const int b = typical(sim);
  return std::abs(a - b) <= std::max(2, b / 4);
}

}  // namespace

Result<SceneOutput> run_pool(const PoolSpec& spec, const std::optional<BreakerOptions>& breaker, const SceneRun& how) {
  const Figures sim = simulate(spec, breaker);
  Figures shown = sim;
  if (how.live) {
    auto url = parse_url(how.server);
    if (!url) return url.error();
    shown = live(spec, breaker, *url, how.scale);
  }
  SceneOutput out;
  std::string samples;
  nlohmann::json sample_json = nlohmann::json::array();
  for (const auto& [t, n] : shown.samples) {
    samples += (samples.empty() ? "" : "  ") + secs(t) + ": " + std::to_string(n);
    sample_json.push_back({{"t_s", static_cast<double>(t.count()) / 1e6}, {"in_use", n}});
  }
  char head[256];
  std::snprintf(
      head, sizeof head, "%g requests/s, %s each with %d attempt(s), %s%s", spec.rate,
      spec.backend.front().answer == BackendPhase::Answer::Hang ? "hanging" : "answering", spec.attempts,
      spec.workers > 0 ? ("a pool of " + std::to_string(spec.workers)).c_str() : "as many workers as it wants",
      breaker ? ", through a breaker" : ", no breaker");
  out.lines.emplace_back(head);
  out.lines.push_back("workers in use: " + samples);
  std::string verdict =
      "typically " + std::to_string(typical(shown)) + " workers in use, at most " + std::to_string(shown.peak);
  if (shown.exhausted) {
    verdict += "; the pool was exhausted at " + secs(*shown.exhausted);
    if (shown.first_timeout)
      verdict += *shown.exhausted < *shown.first_timeout
                     ? ", before the first timeout fired (" + secs(*shown.first_timeout) + ")"
                     : " (first timeout at " + secs(*shown.first_timeout) + ")";
    verdict += "; " + std::to_string(shown.turned_away) + " of " + std::to_string(shown.requests) +
               " requests found no worker";
  } else {
    verdict += "; the pool was never exhausted";
  }
  if (shown.refused_by_breaker > 0)
    verdict += "; " + std::to_string(shown.refused_by_breaker) + " refused at once by the breaker";
  out.lines.push_back(verdict);
  if (how.live) {
    const std::string simulated = "typically " + std::to_string(typical(sim)) + " in use, " +
                                  (sim.exhausted ? "exhausted at " + secs(*sim.exhausted) : "never exhausted");
    out.lines.push_back(agree(shown, sim) ? "the simulation agrees (" + simulated + ")"
                                          : "the simulation differs: " + simulated);
  }
  auto opt_s = [](const std::optional<Micros>& t) {
    return t ? nlohmann::json(static_cast<double>(t->count()) / 1e6) : nlohmann::json(nullptr);
  };
  out.data = {{"peak", shown.peak},
              {"typical", typical(shown)},
              {"exhausted_s", opt_s(shown.exhausted)},
              {"first_timeout_s", opt_s(shown.first_timeout)},
              {"turned_away", shown.turned_away},
              {"requests", shown.requests},
              {"refused_by_breaker", shown.refused_by_breaker},
              {"samples", sample_json},
              {"live", how.live}};
  if (how.live)
    out.data["simulated"] = {{"peak", sim.peak},
                             {"typical", typical(sim)},
                             {"exhausted_s", opt_s(sim.exhausted)},
                             {"first_timeout_s", opt_s(sim.first_timeout)}};
  if (how.live) out.data["agrees_with_simulation"] = agree(shown, sim);
  return out;
}

}  // namespace cb::lab

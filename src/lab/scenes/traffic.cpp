// The toggle scene: a client calling a server that is healthy and failing by turns, with a default
// action as the breaker's fallback. Beside it, the exercise's own design for comparison: retrying
// at once, recursively, while the breaker is CLOSED. Both run on the engine; the retry is the
// caller's loop around it, never inside it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "cb/breaker/breaker.h"
#include "cb/flaky/server.h"
#include "cb/breaker/call.h"
#include "cb/lab/http_call.h"
#include "cb/lab/scenes.h"

namespace cb::lab {
namespace {

struct Second {
  int calls = 0;
  int answered = 0;
  int fallback = 0;
  std::string state;
};

struct Tally {
  long long requests = 0;
  int largest_burst = 0;  // the most server calls one request made
  long long backend_calls = 0;
  long long answered = 0;
  long long fallbacks = 0;
  std::map<long long, Second> seconds;
  std::vector<std::string> transitions;
};

// The toggling server, simulated: healthy for a period, failing for the next, from `offset`.
bool healthy_at(Micros t, Micros period, Micros offset) {
  const auto k = static_cast<long long>(
      std::floor(static_cast<double>((t - offset).count()) / static_cast<double>(period.count())));
  return k % 2 == 0;
}

// One request through the breaker; with `retry_in_closed`, the naive retry-by-recursion: a failure while
// the breaker is still CLOSED is tried again at once. Each try is its own cb::call, so the retry
// sits outside the breaker, which sees and counts every try.
template <class CallBackend>
Reply<std::string> request(CircuitBreaker& b, bool retry_in_closed, Tally& tally, CallBackend&& call_backend) {
  for (int calls = 1;; ++calls) {
    bool failed = false;
    Reply<std::string> reply = call(
        b,
        [&] {
          ++tally.backend_calls;
          tally.largest_burst = std::max(tally.largest_burst, calls);
          return call_backend() ? std::string("Hello") : std::string();
        },
        [](const std::string& body) { return body.empty() ? Verdict::Failure : Verdict::Success; },
        fallbacks{[](const Refused&) -> Reply<std::string> {
                    return Degraded<std::string>{"DEFAULT", "the breaker is open: the default action"};
                  },
                  [&](const Failed<std::string>&) -> Reply<std::string> {
                    failed = true;
                    return Degraded<std::string>{"DEFAULT", "the call failed: the default action"};
                  }});
    if (!failed || !retry_in_closed || b.state() != State::Closed) return reply;
  }
}

void count(Tally& t, long long second, const Reply<std::string>& r, State s) {
  ++t.requests;
  Second& sec = t.seconds[second];
  ++sec.calls;
  if (is_fallback(r)) {
    ++sec.fallback;
    ++t.fallbacks;
  } else {
    ++sec.answered;
    ++t.answered;
  }
  sec.state = std::string(to_string(s));
}

Tally simulate(const TrafficSpec& spec, const BreakerOptions& options, bool retry, Micros duration, Micros offset) {
  ManualClock clock;
  auto b = CircuitBreaker::create(options, clock).value();
  Tally t;
  b->subscribe([&](const Transition& tr) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f s %s->%s", static_cast<double>(tr.at.time_since_epoch().count()) / 1e6,
                  std::string(to_string(tr.from)).c_str(), std::string(to_string(tr.to)).c_str());
    t.transitions.emplace_back(buf);
  });
  const Micros every{static_cast<Micros::rep>(std::llround(1e6 / spec.rate))};
  for (Micros at{0}; at < duration; at += every) {
    clock.set(TimePoint{at});
    const auto r = request(*b, retry, t, [&] { return healthy_at(at, spec.toggle_period, offset); });
    count(t, at.count() / 1'000'000, r, b->state());
  }
  return t;
}

}  // namespace

Result<SceneOutput> run_traffic(const TrafficSpec& spec, const BreakerOptions& options, const SceneRun& how) {
  const Micros duration = how.duration.value_or(spec.duration);
  Tally shown;
  Micros offset{0};
  if (how.live) {
    auto url = parse_url(how.server);
    if (!url) return url.error();
    cb::SteadyClock clock;
    auto b = CircuitBreaker::create(options, clock).value();
    const auto start = std::chrono::steady_clock::now();
    auto now = [&] { return std::chrono::duration_cast<Micros>(std::chrono::steady_clock::now() - start); };
    b->subscribe([&](const Transition& tr) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f s %s->%s", static_cast<double>(now().count()) / 1e6,
                    std::string(to_string(tr.from)).c_str(), std::string(to_string(tr.to)).c_str());
      shown.transitions.emplace_back(buf);
    });
    const Micros every{static_cast<Micros::rep>(std::llround(1e6 / spec.rate))};
    std::optional<bool> last_health;
    Micros last_sent{0};
    bool flipped = false;
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout);
    for (Micros at{0}; at < duration; at += every) {
      std::this_thread::sleep_until(start + at);
      const Micros sent = now();
      const auto r = request(*b, false, shown, [&] {
        const HttpAnswer a = http_request(*url, "GET", spec.path, timeout);
        const bool ok = a.observation.origin == classify::Origin::Response && a.observation.status < 500;
        // The server's phase, seen from here, lines the simulation up with it: its first flip
        // happened between the last call that saw the old state and the first that saw the new,
        // so the midpoint is the estimate (a period begins there, healthy or failing).
        if (last_health && *last_health != ok && !flipped) {
          const Micros flip = (last_sent + sent) / 2;
          offset = flip - (ok ? Micros{0} : spec.toggle_period);
          flipped = true;
        }
        last_health = ok;
        last_sent = sent;
        return ok;
      });
      count(shown, at.count() / 1'000'000, r, b->state());
    }
  } else {
    shown = simulate(spec, options, false, duration, offset);
  }
  // The same traffic, simulated both ways, so the comparison is like with like.
  const Tally plain = simulate(spec, options, false, duration, offset);
  const Tally recursive = simulate(spec, options, true, duration, offset);

  SceneOutput out;
  nlohmann::json per_second = nlohmann::json::array();
  for (const auto& [sec, s] : shown.seconds) {
    char line[160];
    std::snprintf(line, sizeof line, "t=%2lld s  %3d calls  %3d answered  %3d default action  %s", sec, s.calls,
                  s.answered, s.fallback, s.state.c_str());
    out.lines.emplace_back(line);
    // The server's health at the second's middle, as the simulation has it (live: lined up with
    // the flip the calls saw).
    const bool up = healthy_at(Micros{sec * 1'000'000 + 500'000}, spec.toggle_period, offset);
    per_second.push_back({{"second", sec},
                          {"calls", s.calls},
                          {"answered", s.answered},
                          {"fallback", s.fallback},
                          {"state", s.state},
                          {"server", up ? "healthy" : "failing"}});
  }
  std::string transitions;
  for (const auto& t : shown.transitions) transitions += (transitions.empty() ? "" : ", ") + t;
  out.lines.push_back("transitions: " + (transitions.empty() ? std::string("none") : transitions));
  out.lines.push_back(std::to_string(shown.requests) + " requests made " + std::to_string(shown.backend_calls) +
                      " calls to the server (" + std::to_string(shown.answered) + " answered, " +
                      std::to_string(shown.fallbacks) + " got the default action)");
  char cmp[640];
  const double more = plain.backend_calls > 0
                          ? 100.0 * static_cast<double>(recursive.backend_calls - plain.backend_calls) /
                                static_cast<double>(plain.backend_calls)
                          : 0.0;
  std::snprintf(cmp, sizeof cmp,
                "a recursive retry, simulated on the same traffic: %lld calls to the server instead of %lld "
                "(%+.0f%%), %lld answers against %lld, and one request sent up to %d calls at once to a server that "
                "was failing (without the retry: %d). The retry is the harm: it spends the failing server's attempts "
                "in a burst from one caller, and the breaker trips on one request's retries instead of on the "
                "evidence of many. A breaker refuses rather than retries; retry outside it, with a growing delay, so "
                "each attempt is counted and an open breaker refuses the retries too.",
                recursive.backend_calls, plain.backend_calls, more, recursive.answered, plain.answered,
                recursive.largest_burst, plain.largest_burst);
  out.lines.emplace_back(cmp);
  out.data = {{"requests", shown.requests},
              {"backend_calls", shown.backend_calls},
              {"answered", shown.answered},
              {"fallbacks", shown.fallbacks},
              {"per_second", per_second},
              {"transitions", shown.transitions},
              {"simulated_plain_backend_calls", plain.backend_calls},
              {"simulated_recursive_backend_calls", recursive.backend_calls},
              {"simulated_recursive_answered", recursive.answered},
              {"simulated_plain_answered", plain.answered},
              {"simulated_recursive_largest_burst", recursive.largest_burst},
              {"simulated_plain_largest_burst", plain.largest_burst},
              {"live", how.live}};
  return out;
}

}  // namespace cb::lab

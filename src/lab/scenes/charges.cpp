// The payments story's "Predict first": charges one at a time, each in a timeout, through a breaker (or
// none), against payments that hang and recover. Simulated on a manual clock, or live against
// the flaky server (/fast when payments answer, /hang when they hang) with time scaled down.
#include <algorithm>
#include <type_traits>
#include <cstdio>
#include <thread>

#include "cb/breaker/breaker.h"
#include "cb/decimal_time.h"
#include "cb/breaker/reply.h"
#include "cb/lab/http_call.h"
#include "cb/lab/scenes.h"
#include "cb/flaky/endpoints.h"

namespace cb::lab {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Receipt {
  int charge = 0;
  std::string text;
};

// What became of one charge, as the scene reports it.
struct Row {
  int charge = 0;
  Micros sent{0};
  std::string happened;  // answered | waited out the timeout | refused at once | error
  bool trial = false;
  std::string state_after;
  Reply<Receipt> reply = FastError{""};
};

// What the caller is told. The kind says, in the type, that this is not payments' answer.
std::string told(const Reply<Receipt>& r) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Answered<Receipt>>) return "answer: " + v.value.text;
        if constexpr (std::is_same_v<T, Degraded<Receipt>>) return "degraded: " + v.value.text;
        if constexpr (std::is_same_v<T, Cached<Receipt>>) return "cached: " + v.value.text;
        if constexpr (std::is_same_v<T, FastError>) return "error: " + v.why;
      },
      r);
}

Reply<Receipt> fallback_for(const std::string& kind, int charge, TimePoint now) {
  if (kind == "cached") return Cached<Receipt>{{charge, "the last known value, as of its time"}, now};
  if (kind == "error") return FastError{"payments unavailable"};
  return Degraded<Receipt>{{charge, "order accepted, payment pending"},
                           "payments is not answering; settled from a queue later"};
}

std::string seconds(Micros t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(t.count()) / 1e6);
  return buf;
}

// One charge against the scripted payments, on the simulated clock: how long it takes and
// whether it failed.
struct Simulated {
  Micros took{0};
  bool failed = false;
  bool timed_out = false;
};
Simulated simulate_payments(const ChargesSpec& spec, Micros at) {
  const BackendPhase& p = phase_at(spec.backend, at);
  switch (p.answer) {
    case BackendPhase::Answer::Ok:
      if (p.latency < spec.timeout) return {p.latency, false, false};
      return {spec.timeout, true, true};
    case BackendPhase::Answer::Error: return {std::min(p.latency, spec.timeout), true, p.latency >= spec.timeout};
    case BackendPhase::Answer::Hang: return {spec.timeout, true, true};
  }
  return {};
}

}  // namespace

Result<SceneOutput> run_charges(const ChargesSpec& spec, const std::optional<BreakerOptions>& options,
                                const SceneRun& how) {
  ManualClock manual;
  SteadyClock::time_point live_start{};
  Micros scaled_timeout = spec.timeout;
  std::optional<ServerUrl> server;
  std::optional<BreakerOptions> live_options = options;
  if (how.live) {
    auto url = parse_url(how.server);
    if (!url) return url.error();
    server = *url;
    // Live: every duration of the scene shrinks by the scale, the breaker's included.
    auto scale = [&](Micros d) { return Micros{static_cast<Micros::rep>(static_cast<double>(d.count()) * how.scale)}; };
    scaled_timeout = scale(spec.timeout);
    if (live_options) {
      live_options->cooldown.base = scale(live_options->cooldown.base);
      live_options->half_open.max_wait = scale(live_options->half_open.max_wait);
    }
  }
  cb::SteadyClock steady;
  const Clock& clock = how.live ? static_cast<const Clock&>(steady) : static_cast<const Clock&>(manual);
  std::unique_ptr<CircuitBreaker> breaker;
  if (live_options) {
    auto b = CircuitBreaker::create(*live_options, clock);
    if (!b) return b.error();
    breaker = std::move(b).value();
  }
  // Scene time now: the manual clock's, or live time since the start, scaled back up.
  auto scene_now = [&]() -> Micros {
    if (!how.live) return manual.now().time_since_epoch();
    const auto real = std::chrono::duration_cast<Micros>(SteadyClock::now() - live_start);
    return Micros{static_cast<Micros::rep>(static_cast<double>(real.count()) / how.scale)};
  };
  live_start = SteadyClock::now();

  std::vector<Row> rows;
  Micros free_at{0};  // one at a time: a charge waits for the one before it
  for (std::size_t i = 0; i < spec.send_at.size(); ++i) {
    Row row;
    row.charge = static_cast<int>(i + 1);
    const Micros send = std::max(spec.send_at[i], free_at);
    if (how.live) {
      const auto due = live_start + Micros{static_cast<Micros::rep>(static_cast<double>(send.count()) * how.scale)};
      std::this_thread::sleep_until(due);
      row.sent = scene_now();
    } else {
      manual.set(TimePoint{send});
      row.sent = send;
    }
    std::optional<Admission> admission;
    if (breaker) {
      admission = breaker->try_acquire();
      if (!*admission) {
        row.happened = "refused at once";
        row.reply = fallback_for(spec.fallback, row.charge, clock.now());
        row.state_after = std::string(to_string(breaker->state()));
        free_at = how.live ? scene_now() : send;
        rows.push_back(std::move(row));
        continue;
      }
      row.trial = admission->ticket.admitted_in == State::HalfOpen;
    }
    bool failed = false;
    bool timed_out = false;
    Micros took{0};
    if (how.live) {
      // The scripted phase picks the endpoint; the real server and the real timeout decide.
      const BackendPhase& p = phase_at(spec.backend, row.sent);
      const std::string_view path = p.answer == BackendPhase::Answer::Ok     ? flaky::path::kFast
                                    : p.answer == BackendPhase::Answer::Hang ? flaky::path::kHang
                                                                             : flaky::path::kAlways500;
      const HttpAnswer a = http_request(*server, "GET", std::string(path),
                                        std::chrono::duration_cast<std::chrono::milliseconds>(scaled_timeout));
      timed_out = a.observation.origin == classify::Origin::Timeout;
      failed = classify::Classifier::http().classify(a.observation) == Verdict::Failure;
      took = std::chrono::duration_cast<Micros>(a.elapsed);
    } else {
      const Simulated sim = simulate_payments(spec, send);
      failed = sim.failed;
      timed_out = sim.timed_out;
      took = sim.took;
      manual.set(TimePoint{send + took});
    }
    if (breaker) (void)breaker->record(admission->ticket, {failed ? Verdict::Failure : Verdict::Success, took});
    row.happened = timed_out ? "waited out the timeout" : failed ? "error" : "answered";
    if (failed) {
      row.reply = fallback_for(spec.fallback, row.charge, clock.now());
    } else {
      row.reply = Answered<Receipt>{{row.charge, "charged"}};
    }
    row.state_after = breaker ? std::string(to_string(breaker->state())) : "-";
    free_at = how.live ? scene_now() : send + took;
    rows.push_back(std::move(row));
  }

  SceneOutput out;
  nlohmann::json charges = nlohmann::json::array();
  std::vector<int> waited;
  std::vector<int> refused;
  std::vector<int> answered;
  std::vector<int> trials;
  char header[128];
  std::snprintf(header, sizeof header, "%-7s %-8s %-34s %-10s %s", "charge", "sent", "what happened", "breaker",
                "the caller got");
  out.lines.emplace_back(header);
  for (const Row& r : rows) {
    if (r.happened == "waited out the timeout") waited.push_back(r.charge);
    if (r.happened == "refused at once") refused.push_back(r.charge);
    if (r.happened == "answered") answered.push_back(r.charge);
    if (r.trial) trials.push_back(r.charge);
    const std::string what = (r.trial ? "trial: " : "") + r.happened;
    char line[256];
    std::snprintf(line, sizeof line, "%-7d %-8s %-34s %-10s %s", r.charge, seconds(r.sent).c_str(), what.c_str(),
                  r.state_after.c_str(), told(r.reply).c_str());
    out.lines.emplace_back(line);
    charges.push_back({{"charge", r.charge},
                       {"sent_s", static_cast<double>(r.sent.count()) / 1e6},
                       {"happened", r.happened},
                       {"trial", r.trial},
                       {"state_after", r.state_after},
                       {"reply", kind_of(r.reply)}});
  }
  auto list = [](const std::vector<int>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(v[i]);
    return s.empty() ? std::string("none") : s;
  };
  out.lines.push_back(std::to_string(waited.size()) + " charge(s) waited out a full timeout (" + list(waited) + "); " +
                      std::to_string(refused.size()) + " refused at once (" + list(refused) + "); " +
                      std::to_string(answered.size()) + " answered (" + list(answered) + ")");
  out.data = {{"charges", charges},
              {"waited", waited},
              {"refused", refused},
              {"answered", answered},
              {"trials", trials},
              {"timeout_s", static_cast<double>(spec.timeout.count()) / 1e6},
              {"breaker", breaker ? nlohmann::json(spec.breaker) : nlohmann::json(nullptr)},
              {"live", how.live}};
  if (how.live) {
    // The live run must tell the same story as the simulation; say so, or say where it differs.
    SceneRun simulated;
    auto sim = run_charges(spec, options, simulated);
    if (!sim) return sim.error();
    const bool same = sim->data["waited"] == out.data["waited"] && sim->data["refused"] == out.data["refused"] &&
                      sim->data["answered"] == out.data["answered"];
    out.lines.push_back(same ? "the simulation agrees, charge for charge"
                             : "the simulation differs: it has waited " + sim->data["waited"].dump() + ", refused " +
                                   sim->data["refused"].dump() + ", answered " + sim->data["answered"].dump());
    out.data["agrees_with_simulation"] = same;
  }
  return out;
}

}  // namespace cb::lab

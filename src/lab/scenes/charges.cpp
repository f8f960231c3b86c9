// The payments story's "Predict first": charges one at a time, each in a timeout, through a breaker (or
// none), against payments that hang and recover. Simulated on a manual clock, or live against
// the flaky server (/fast when payments answer, /hang when they hang) with time scaled down.
// Live, the breaker still keeps the scene's time (a charge is at its scheduled moment, a timeout
// lasts exactly the timeout): what is real is each answer, so a slow machine, which sends late and
// cuts a hang late, never changes which charge is a trial or refused.
#include <algorithm>
#include <memory>
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

// The scene's clock and its breaker: a manual clock stepped charge by charge, in scene time. Live,
// the calls are real, each sent when its scene time comes round (scaled down) in a timeout scaled
// the same way, and the manual clock is stepped by the schedule and the answers, never read off
// the wall.
class ChargeRun {
 public:
  static Result<std::unique_ptr<ChargeRun>> make(const ChargesSpec& spec, const std::optional<BreakerOptions>& options,
                                                 const SceneRun& how) {
    std::unique_ptr<ChargeRun> run(new ChargeRun(spec, how));
    if (how.live) {
      auto url = parse_url(how.server);
      if (!url) return url.error();
      run->server_ = *url;
    }
    if (options) {
      auto b = CircuitBreaker::create(*options, run->manual_);
      if (!b) return b.error();
      run->breaker_ = std::move(b).value();
    }
    run->live_start_ = SteadyClock::now();
    return run;
  }

  [[nodiscard]] bool has_breaker() const { return breaker_ != nullptr; }

  // Every charge in turn, one at a time: a charge waits for the one before it.
  std::vector<Row> send_all() {
    std::vector<Row> rows;
    Micros free_at{0};
    for (std::size_t i = 0; i < spec_.send_at.size(); ++i) {
      rows.push_back(send(static_cast<int>(i + 1), std::max(spec_.send_at[i], free_at)));
      free_at = rows.back().sent + took_;
    }
    return rows;
  }

 private:
  ChargeRun(const ChargesSpec& spec, const SceneRun& how) : spec_(spec), how_(how) {}

  Micros scaled(Micros d) const {
    return Micros{static_cast<Micros::rep>(static_cast<double>(d.count()) * how_.scale)};
  }
  Micros unscaled(Micros d) const {
    return Micros{static_cast<Micros::rep>(static_cast<double>(d.count()) / how_.scale)};
  }

  // One charge, sent at scene time `at` (took_: how long it held the line).
  Row send(int charge, Micros at) {
    Row row;
    row.charge = charge;
    row.sent = at;
    took_ = Micros{0};
    if (how_.live) std::this_thread::sleep_until(live_start_ + scaled(at));
    manual_.set(TimePoint{at});
    std::optional<Admission> admission;
    if (breaker_) {
      admission = breaker_->try_acquire();
      if (!*admission) {
        row.happened = "refused at once";
        row.reply = fallback_for(spec_.fallback, row.charge, manual_.now());
        row.state_after = std::string(to_string(breaker_->state()));
        return row;
      }
      row.trial = admission->ticket.admitted_in == State::HalfOpen;
    }
    const Simulated outcome = how_.live ? call_payments(at) : simulate_payments(spec_, at);
    took_ = outcome.took;
    manual_.set(TimePoint{at + outcome.took});
    if (breaker_)
      (void)breaker_->record(admission->ticket, {outcome.failed ? Verdict::Failure : Verdict::Success, outcome.took});
    row.happened = outcome.timed_out ? "waited out the timeout" : outcome.failed ? "error" : "answered";
    row.reply = outcome.failed ? fallback_for(spec_.fallback, row.charge, manual_.now())
                               : Reply<Receipt>{Answered<Receipt>{{row.charge, "charged"}}};
    row.state_after = breaker_ ? std::string(to_string(breaker_->state())) : "-";
    return row;
  }

  // Live: the scripted phase picks the endpoint; the real server, in the real (scaled) timeout,
  // decides the answer. A timeout holds the line for the timeout exactly, however late the machine
  // cut it; an answer for its real time, scaled back up, and never longer than the timeout.
  Simulated call_payments(Micros at) const {
    const BackendPhase& p = phase_at(spec_.backend, at);
    const std::string_view path = p.answer == BackendPhase::Answer::Ok     ? flaky::path::kFast
                                  : p.answer == BackendPhase::Answer::Hang ? flaky::path::kHang
                                                                           : flaky::path::kAlways500;
    const HttpAnswer a = http_request(*server_, "GET", std::string(path),
                                      std::chrono::duration_cast<std::chrono::milliseconds>(scaled(spec_.timeout)));
    const bool timed_out = a.observation.origin == classify::Origin::Timeout;
    const Micros took =
        timed_out ? spec_.timeout : std::min(spec_.timeout, unscaled(std::chrono::duration_cast<Micros>(a.elapsed)));
    return {took, classify::Classifier::http().classify(a.observation) == Verdict::Failure, timed_out};
  }

  const ChargesSpec& spec_;
  const SceneRun& how_;
  std::optional<ServerUrl> server_;
  ManualClock manual_;
  std::unique_ptr<CircuitBreaker> breaker_;
  SteadyClock::time_point live_start_{};
  Micros took_{0};
};

std::string charge_list(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + std::to_string(v[i]);
  return s.empty() ? std::string("none") : s;
}

// The rows as the scene shows them (a table and a line of counts) and as its data.
SceneOutput charges_output(const std::vector<Row>& rows, const ChargesSpec& spec, bool with_breaker, bool live) {
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
  out.lines.push_back(std::to_string(waited.size()) + " charge(s) waited out a full timeout (" + charge_list(waited) +
                      "); " + std::to_string(refused.size()) + " refused at once (" + charge_list(refused) + "); " +
                      std::to_string(answered.size()) + " answered (" + charge_list(answered) + ")");
  out.data = {{"charges", charges},
              {"waited", waited},
              {"refused", refused},
              {"answered", answered},
              {"trials", trials},
              {"timeout_s", static_cast<double>(spec.timeout.count()) / 1e6},
              {"breaker", with_breaker ? nlohmann::json(spec.breaker) : nlohmann::json(nullptr)},
              {"live", live}};
  return out;
}

}  // namespace

Result<SceneOutput> run_charges(const ChargesSpec& spec, const std::optional<BreakerOptions>& options,
                                const SceneRun& how) {
  auto run = ChargeRun::make(spec, options, how);
  if (!run) return run.error();
  SceneOutput out = charges_output((*run)->send_all(), spec, (*run)->has_breaker(), how.live);
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

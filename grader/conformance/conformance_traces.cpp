#include "cb/grade/conformance_traces.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <unordered_set>

namespace cb::grade::conformance {
namespace {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen_); }
  bool chance(int percent) { return between(1, 100) <= percent; }

 private:
  std::mt19937_64 gen_;
};

}  // namespace

// When each call of `t` finds the breaker OPEN under the rules, the instant its wait ends; -1
// for a call that finds it otherwise.
std::vector<double> wait_ends(const Trace& t) {
  Model m(t.settings);
  std::vector<double> out;
  double ends = -1;
  for (const Call& c : t.calls) {
    out.push_back(m.state() == State::Open ? ends : -1);
    const Step s = m.step(c);
    if (s.rule == Rule::Tripped || s.rule == Rule::ReopenedAfterTrials) ends = c.t_ms + t.settings.wait_in_open_ms;
  }
  return out;
}

void drop_orphan_ends(Trace& t) {
  Model m(t.settings);
  std::unordered_set<CallId> let_through;
  std::vector<Call> kept;
  kept.reserve(t.calls.size());
  for (const Call& c : t.calls) {
    if (c.phase == Phase::End && let_through.erase(c.id) == 0) continue;
    const Step s = m.step(c);
    if (c.phase == Phase::Begin && s.decision == Decision::Permitted) let_through.insert(c.id);
    kept.push_back(c);
  }
  t.calls = std::move(kept);
}

std::vector<bool> counted_since_closed(const Trace& t, std::size_t last) {
  Model m(t.settings);
  std::vector<bool> counted;
  for (std::size_t i = 0; i <= last && i < t.calls.size(); ++i) {
    const State before = m.state();
    const Step s = m.step(t.calls[i]);
    if (before != State::Closed)
      counted.clear();
    else if (t.calls[i].phase != Phase::Begin && s.rule != Rule::NotCounted && s.rule != Rule::LateResult)
      counted.push_back(t.calls[i].timed_out || t.calls[i].status >= 500);
  }
  return counted;
}

bool answered_as(const Trace& t, const Settings& settings, const std::vector<Answer>& answers, std::size_t last) {
  const auto end = t.calls.begin() + static_cast<std::ptrdiff_t>(std::min(last + 1, t.calls.size()));
  return !compare(Trace{settings, {t.calls.begin(), end}}, answers);
}

namespace {

// Settings drawn around the lab's (its own every 5th trace).
Settings draw_settings(Rng& r, int index) {
  Settings s = lab_settings();
  if (index % 5 != 0) {
    s.window = r.between(4, 20);
    s.minimum_calls = r.between(1, s.window);
    s.failure_rate_percent = r.between(10, 90);
    s.wait_in_open_ms = r.between(1, 50) * 100;
    s.permitted_in_half_open = r.between(1, 5);
  }
  return s;
}

// The next line's time: at the wait's end exactly or a hair before it while OPEN, now and then
// a quiet stretch, else a few milliseconds on.
double next_time(Rng& r, const Model& m, const Settings& s, double now, double opened_at) {
  const int edge = r.between(0, 9);
  if (m.state() == State::Open && opened_at >= 0 && edge <= 3)
    return std::max(now, opened_at + s.wait_in_open_ms - (edge == 0 ? 0.125 : 0.0));
  if (edge == 9) return now + r.between(1000, 10'000);
  return now + r.between(0, 50);
}

// A result for a call ending now: a 4xx more often among trials.
void draw_result(Rng& r, Call& c, bool trial) {
  const int kind = r.between(0, 99);
  if (trial && kind < 20)
    c.status = 400 + r.between(0, 29);
  else if (kind < 45)
    c.status = 500 + r.between(0, 4);
  else if (kind < 50)
    c.timed_out = true;
  else if (kind < 58)
    c.status = 400 + r.between(0, 29);
  else
    c.status = 200 + (r.chance(10) ? r.between(1, 99) : 0);
}

}  // namespace

Trace generate(std::uint64_t seed, int index) {
  Rng r(seed * 1'000'003U + static_cast<std::uint64_t>(static_cast<unsigned>(index)));
  Trace t;
  t.settings = draw_settings(r, index);
  // The model runs alongside so the edges are aimed at where the breaker is, not guessed.
  Model m(t.settings);
  double now = 0;
  double opened_at = -1;
  const int n = r.between(20, 120);
  for (int i = 0; i < n; ++i) {
    now = next_time(r, m, t.settings, now, opened_at);
    Call c{now, 200, false};
    draw_result(r, c, m.state() == State::HalfOpen);
    const Step s = m.step(c);
    if (s.rule == Rule::Tripped || s.rule == Rule::ReopenedAfterTrials) opened_at = now;
    t.calls.push_back(c);
  }
  return t;
}

Trace generate_in_flight(std::uint64_t seed, int index) {
  // Seeded apart from generate()'s traces of the same index.
  Rng r((seed * 1'000'003U + static_cast<std::uint64_t>(static_cast<unsigned>(index))) ^ 0x9e37'79b9'7f4a'7c15U);
  Trace t;
  t.settings = draw_settings(r, index);
  // Half of them with trials whose failure rate can land on the threshold exactly (2 at 50%, 4 at
  // 25-75%, 5 at 20-80%): no other draw of the settings makes the trials' >= meet its edge.
  if (r.chance(50)) {
    constexpr int kTrials[] = {2, 4, 5};
    const int trials = kTrials[r.between(0, 2)];
    t.settings.permitted_in_half_open = trials;
    t.settings.failure_rate_percent = 100 * r.between(1, trials - 1) / trials;
  }
  Model m(t.settings);
  double now = 0;
  double opened_at = -1;
  CallId next_id = 1;
  std::vector<CallId> in_flight;  // let through, not yet ended
  auto push = [&](const Call& c) {
    const Step s = m.step(c);
    if (c.phase == Phase::Begin && s.decision == Decision::Permitted) in_flight.push_back(c.id);
    if (s.rule == Rule::Tripped || s.rule == Rule::ReopenedAfterTrials) opened_at = c.t_ms;
    t.calls.push_back(c);
  };
  const int n = r.between(30, 120);
  for (int i = 0; i < n; ++i) {
    now = next_time(r, m, t.settings, now, opened_at);
    const int what = r.between(0, 9);
    // In HALF_OPEN, trials pile up (past the cap) before any ends; elsewhere calls overlap a few
    // at a time, and some are made whole between them.
    const std::size_t most =
        m.state() == State::HalfOpen ? static_cast<std::size_t>(t.settings.permitted_in_half_open) + 2 : 4;
    if (!in_flight.empty() && (in_flight.size() >= most || what < 4)) {
      const auto k = static_cast<std::size_t>(r.between(0, static_cast<int>(in_flight.size()) - 1));
      Call c{now, 200, false, Phase::End, in_flight[k]};
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
      draw_result(r, c, m.state() == State::HalfOpen);
      push(c);
    } else if (what < 8) {
      push(Call{now, 200, false, Phase::Begin, next_id++});
    } else {
      Call c{now, 200, false};
      draw_result(r, c, m.state() == State::HalfOpen);
      push(c);
    }
  }
  // Every call let through ends, in the order drawn.
  while (!in_flight.empty()) {
    now += r.between(0, 50);
    const auto k = static_cast<std::size_t>(r.between(0, static_cast<int>(in_flight.size()) - 1));
    Call c{now, 200, false, Phase::End, in_flight[k]};
    in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
    draw_result(r, c, m.state() == State::HalfOpen);
    push(c);
  }
  return t;
}

Trace generate_held_across(std::uint64_t seed, int index) {
  Rng r((seed * 1'000'003U + static_cast<std::uint64_t>(static_cast<unsigned>(index))) ^ 0x5851'f42d'4c95'7f2dU);
  Trace t;
  t.settings = draw_settings(r, index + 1);  // never the lab's own: one failure must trip it
  t.settings.minimum_calls = 1;
  Model m(t.settings);
  double now = 0;
  auto push = [&](Call c) {
    (void)m.step(c);
    t.calls.push_back(c);
  };
  // A few ordinary calls first, then the call that is held: let through in CLOSED.
  for (int i = r.between(0, 3); i > 0; --i) {
    now += r.between(0, 50);
    push(Call{now, 200, false});
  }
  now += r.between(0, 50);
  push(Call{now, 200, false, Phase::Begin, 1});
  // Failures until it trips (the calls before may hold the rate under the threshold for a few),
  // the wait passes, every trial succeeds: CLOSED again, with an empty window and a new
  // generation.
  for (int k = 0; k < 64 && m.state() != State::Open; ++k) {
    now += r.between(1, 50);
    push(Call{now, 500 + r.between(0, 4), false});
  }
  now += t.settings.wait_in_open_ms + (r.chance(50) ? 0 : r.between(1, 500));
  for (int k = 0; k < t.settings.permitted_in_half_open; ++k) {
    push(Call{now, 200, false});
    now += r.between(0, 20);
  }
  // The held call comes back, failed. Late: the rules count nothing of it, so CLOSED it stays; a
  // breaker that counts it (its permit the state's name, or no generation outside HALF_OPEN)
  // trips on it, its window holding that failure alone.
  now += r.between(0, 50);
  Call late{now, 500 + r.between(0, 4), r.chance(20), Phase::End, 1};
  if (late.timed_out) late.status = 200;
  push(late);
  // Then the ordinary traffic of any trace.
  for (int i = r.between(5, 30); i > 0; --i) {
    now = next_time(r, m, t.settings, now, -1);
    Call c{now, 200, false};
    draw_result(r, c, m.state() == State::HalfOpen);
    push(c);
  }
  return t;
}

Trace generate_rate_edge(std::uint64_t seed, int index) {
  Rng r((seed * 1'000'003U + static_cast<std::uint64_t>(static_cast<unsigned>(index))) ^ 0x2545'f491'4f6c'dd1dU);
  Trace t;
  t.settings = draw_settings(r, index + 1);  // its wait and trials drawn; never the lab's own
  // A full window of w calls, k of them failed, whose rate is exactly the threshold (the rules
  // open), or a fraction of a percent under it that rounds up to it (the rules stay CLOSED).
  const bool exact = (index / 4) % 2 == 0;
  for (;;) {
    const int w = r.between(3, 20);
    const int k = r.between(1, w - 1);
    const int rest = 100 * k % w;
    if (exact ? rest != 0 : 2 * rest < w) continue;
    const int percent = 100 * k / w + (exact ? 0 : 1);
    if (percent < 10 || percent > 90) continue;
    t.settings.window = w;
    t.settings.minimum_calls = w;  // nothing is decided before the window is full
    t.settings.failure_rate_percent = percent;
    std::vector<char> failed(static_cast<std::size_t>(w), 0);
    for (int placed = 0; placed < k;) {
      char& f = failed[static_cast<std::size_t>(r.between(0, w - 1))];
      placed += f != 0 ? 0 : 1;
      f = 1;
    }
    double now = 0;
    for (const char f : failed) {
      now += r.between(1, 50);
      t.calls.push_back(Call{now, f ? 500 + r.between(0, 4) : 200, false});
    }
    break;
  }
  // Then the ordinary traffic of any trace, from where the rules have it.
  Model m(t.settings);
  double opened_at = -1;
  for (const Call& c : t.calls)
    if (const Step s = m.step(c); s.rule == Rule::Tripped) opened_at = c.t_ms;
  double now = t.calls.back().t_ms;
  for (int i = r.between(10, 60); i > 0; --i) {
    now = next_time(r, m, t.settings, now, opened_at);
    Call c{now, 200, false};
    draw_result(r, c, m.state() == State::HalfOpen);
    if (const Step s = m.step(c); s.rule == Rule::Tripped || s.rule == Rule::ReopenedAfterTrials) opened_at = now;
    t.calls.push_back(c);
  }
  return t;
}

Trace trace_for(std::uint64_t seed, int index, bool in_flight, int generation) {
  const bool core = generation >= 2;
  if (core && index % 4 == 1 && index / 4 < kRateEdgeTraces) return generate_rate_edge(seed, index);
  if (!in_flight || index % 4 != 2) return generate(seed, index);
  return core && index / 4 < kHeldAcrossTraces ? generate_held_across(seed, index) : generate_in_flight(seed, index);
}

std::vector<Answer> model_answers(const Settings& settings, const std::vector<Call>& calls) {
  Model m(settings);
  std::vector<Answer> out;
  out.reserve(calls.size());
  for (const Call& c : calls) {
    const Step s = m.step(c);
    out.push_back({s.decision, s.state});
  }
  return out;
}

std::optional<Divergence> compare(const Trace& trace, const std::vector<Answer>& answers) {
  Model m(trace.settings);
  for (std::size_t i = 0; i < trace.calls.size(); ++i) {
    const Step want = m.step(trace.calls[i]);
    if (i >= answers.size()) return Divergence{i, want, std::nullopt};
    const bool clock_ahead =
        trace.calls[i].phase == Phase::End && answers[i].state == State::HalfOpen && m.wait_over(trace.calls[i].t_ms);
    if (answers[i].decision != want.decision || (answers[i].state != want.state && !clock_ahead))
      return Divergence{i, want, answers[i]};
  }
  return std::nullopt;
}

Explanation explain(const Divergence& d, const Trace& trace, const Replies& replies, bool blame_window) {
  if (!d.got) {
    std::string text = "gave no answer to this call";
    if (!replies.problem.empty()) text += ": " + replies.problem;
    return {"no_answer", text};
  }
  const bool trial = d.want.rule == Rule::FirstTrial || d.want.rule == Rule::TrialCounted;
  if (trial && d.got->decision == Decision::Permitted && d.got->state != State::HalfOpen) {
    const std::string n = std::to_string(trace.settings.permitted_in_half_open);
    return {std::string(id(Rule::TrialCounted)),
            d.got->state == State::Closed ? "closed before all " + n +
                                                " permitted trials were made: they are judged together (one lucky call "
                                                "must not close it)"
                                          : "reopened before all " + n +
                                                " permitted trials were made: they are judged together (one unlucky "
                                                "call must not reopen it)"};
  }
  // Refused a call the rules let through from OPEN, as a trial: whatever the trial then decided,
  // the mistake is where the wait ends.
  const double ends =
      d.got->decision == Decision::Rejected && d.want.decision == Decision::Permitted ? wait_ends(trace)[d.at] : -1;
  if (ends >= 0) {
    if (trace.calls[d.at].t_ms == ends)
      return {std::string(id(Rule::FirstTrial)),
              "refused the call at the wait's exact end (t=" + ms_text(ends) +
                  "), which the rules let through as the first trial; no experiment established why"};
    return {std::string(id(Rule::FirstTrial)),
            "still refused calls after the wait in OPEN was over (" + ms_text(trace.settings.wait_in_open_ms) +
                " ms from the call that opened it, here until t=" + ms_text(ends) + ")"};
  }
  const bool judged = d.want.rule == Rule::BelowThreshold || d.want.rule == Rule::Tripped;
  const std::vector<bool> counted = judged ? counted_since_closed(trace, d.at) : std::vector<bool>{};
  // Old calls kept: more counted calls than the window holds, and its answers to the whole trace
  // (not only up to here, where a rate at the threshold exactly could fit as well) are those of
  // a window that never lets a call go.
  Settings never_slides = trace.settings;
  never_slides.window = std::numeric_limits<int>::max();
  if (blame_window && static_cast<int>(counted.size()) > trace.settings.window &&
      replies.answers.size() == trace.calls.size() &&
      answered_as(trace, never_slides, replies.answers, trace.calls.size() - 1))
    return {"window_slides", "judged calls the window had already let go: it holds only the last " +
                                 std::to_string(trace.settings.window) + " counted calls, and older ones drop out"};
  if (d.want.rule == Rule::Tripped) {
    const auto calls = static_cast<int>(counted.size());
    const auto failures = static_cast<int>(std::count(counted.begin(), counted.end(), true));
    const std::string these = std::to_string(failures) + " of " + std::to_string(calls) + " calls in the window failed";
    const bool exactly = failures * 100 == trace.settings.failure_rate_percent * calls;
    return {std::string(id(d.want.rule)),
            exactly ? "did not open when the failure rate reached the threshold exactly (" + these + ", at " +
                          std::to_string(trace.settings.failure_rate_percent) +
                          "%), where the rules open; no experiment established why"
                    : "did not open though the failure rate was over the threshold (" + these + ", at " +
                          std::to_string(trace.settings.failure_rate_percent) + "%)"};
  }
  return {std::string(id(d.want.rule)), std::string(describe(d.want.rule))};
}

namespace {

// Shorter gaps before call i worth trying, shortest first: none at all, a round number of
// milliseconds under the gap, half of it, and the end of the wait when the gap crosses it.
std::vector<double> shorter_gaps(double gap, double to_wait_end) {
  std::vector<double> out{0};
  for (double unit : {1000.0, 100.0, 10.0, 1.0}) out.push_back(std::floor(gap / unit) * unit);
  out.push_back(std::round(gap * 4) / 8);  // half, on the 1/8 ms grid
  if (to_wait_end > 0 && to_wait_end < gap) {
    out.push_back(to_wait_end);
    out.push_back(to_wait_end - 0.125);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove_if(out.begin(), out.end(), [gap](double g) { return g < 0 || g >= gap; }), out.end());
  return out;
}

// Call i of t with a plainer result or a rounder time, each a candidate of its own.
std::vector<Call> plainer(const Trace& t, std::size_t i) {
  const Call c = t.calls[i];
  std::vector<Call> simpler;
  auto with = [&c](int status) {
    Call plain = c;
    plain.status = status;
    plain.timed_out = false;
    return plain;
  };
  if (c.phase != Phase::Begin) {  // a beginning has no result
    if (c.timed_out) simpler.push_back(with(500));
    if (!c.timed_out && c.status >= 500 && c.status != 500) simpler.push_back(with(500));
    if (is_4xx(c) && c.status != 400) simpler.push_back(with(400));
    if (!c.timed_out && c.status < 400 && c.status != 200) simpler.push_back(with(200));
  }
  // A rounder time, as long as the calls stay in time order.
  const double round = std::round(c.t_ms);
  const bool in_order =
      (i == 0 || t.calls[i - 1].t_ms <= round) && (i + 1 == t.calls.size() || round <= t.calls[i + 1].t_ms);
  if (round != c.t_ms && in_order) {
    Call rounder = c;
    rounder.t_ms = round;
    simpler.push_back(rounder);
  }
  return simpler;
}

// The settings with one of them set to the lab's, for each that differs.
std::vector<Settings> nearer_the_lab(const Settings& settings) {
  const Settings lab = lab_settings();
  std::vector<Settings> nearer;
  auto toward_lab = [&](auto member) {
    if (settings.*member == lab.*member) return;
    Settings s = settings;
    s.*member = lab.*member;
    nearer.push_back(s);
  };
  toward_lab(&Settings::window);
  toward_lab(&Settings::minimum_calls);
  toward_lab(&Settings::failure_rate_percent);
  toward_lab(&Settings::permitted_in_half_open);
  toward_lab(&Settings::wait_in_open_ms);
  return nearer;
}

}  // namespace

Shrunk shrink(const Trace& failing, const Program& program, ShrinkBudget budget, const ShrinkGoal& goal) {
  const auto until = std::chrono::steady_clock::now() + budget.time;
  Shrunk out{failing, 0, true};
  Trace& best = out.trace;
  // Every run of the program while shrinking, the goal's own included, counts against the budget.
  const Program counted = [&](const Trace& t) {
    ++out.runs;
    return program(t);
  };
  auto spent = [&] {
    if (out.runs < budget.runs && std::chrono::steady_clock::now() < until && !(budget.stop && budget.stop()))
      return false;
    out.complete = false;
    return true;
  };
  auto still = [&](Trace& candidate) {
    if (spent()) return false;
    drop_orphan_ends(candidate);
    if (candidate.calls.empty()) return false;
    const Replies r = counted(candidate);
    const auto d = compare(candidate, r.answers);
    return d && (!goal.same || goal.same(candidate, r, *d, counted));
  };
  bool changed = true;
  while (changed && !spent()) {
    changed = false;
    // Nothing after the first divergence matters.
    if (const auto d = compare(best, counted(best).answers); d && d->at + 1 < best.calls.size()) {
      best.calls.resize(d->at + 1);
      changed = true;
    }
    // Drop calls, from the last towards the first.
    for (std::size_t i = best.calls.size(); i-- > 0;) {
      if (i >= best.calls.size()) continue;  // a dropped beginning took its end along
      Trace candidate = best;
      candidate.calls.erase(candidate.calls.begin() + static_cast<std::ptrdiff_t>(i));
      if (still(candidate)) {
        best = std::move(candidate);
        changed = true;
      }
    }
    // The same trace started at 0: the rules see only differences of time.
    if (!best.calls.empty() && best.calls.front().t_ms != 0) {
      Trace candidate = best;
      const double t0 = best.calls.front().t_ms;
      for (Call& c : candidate.calls) c.t_ms -= t0;
      if (still(candidate)) {
        best = std::move(candidate);
        changed = true;
      }
    }
    // Shorter gaps: each call, and all after it, earlier by the same amount, so what follows
    // keeps its own gaps (a 6-call trace need not start its story at t=5228).
    std::vector<double> ends = wait_ends(best);  // anew whenever best changes
    for (std::size_t i = 1; i < best.calls.size(); ++i) {
      const double gap = best.calls[i].t_ms - best.calls[i - 1].t_ms;
      if (gap <= 0) continue;
      for (double shorter : shorter_gaps(gap, ends[i] < 0 ? -1 : ends[i] - best.calls[i - 1].t_ms)) {
        Trace candidate = best;
        for (std::size_t k = i; k < candidate.calls.size(); ++k) candidate.calls[k].t_ms -= gap - shorter;
        if (still(candidate)) {
          best = std::move(candidate);
          ends = wait_ends(best);
          changed = true;
          break;
        }
      }
    }
    // Plainer results and rounder times.
    for (std::size_t i = 0; i < best.calls.size(); ++i) {
      const std::vector<Call> simpler = plainer(best, i);
      for (const Call& s : simpler) {
        Trace candidate = best;
        candidate.calls[i] = s;
        if (still(candidate)) {
          best = std::move(candidate);
          changed = true;
          break;
        }
      }
    }
    if (goal.keep_settings) continue;
    // Settings nearer the lab's, one at a time.
    for (Settings s : nearer_the_lab(best.settings)) {
      if (s.minimum_calls > s.window) continue;
      Trace candidate = best;
      candidate.settings = s;
      if (still(candidate)) {
        best = std::move(candidate);
        changed = true;
      }
    }
  }
  return out;
}

}  // namespace cb::grade::conformance

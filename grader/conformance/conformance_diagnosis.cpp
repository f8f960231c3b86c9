#include "cb/grade/conformance_diagnosis.h"

#include "cb/grade/wording.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

namespace cb::grade::conformance {
namespace {

struct Field {
  const char* name;
  double Settings::*real;  // wait_in_open_ms
  int Settings::*whole;    // the others
  const char* unit;        // after a value, for a person
};
constexpr Field kFields[] = {
    {"window", nullptr, &Settings::window, ""},
    {"minimum_calls", nullptr, &Settings::minimum_calls, ""},
    {"failure_rate_percent", nullptr, &Settings::failure_rate_percent, "%"},
    {"wait_in_open_ms", &Settings::wait_in_open_ms, nullptr, " ms"},
    {"permitted_in_half_open", nullptr, &Settings::permitted_in_half_open, ""},
};

double get(const Settings& s, const Field& f) { return f.real ? s.*f.real : s.*f.whole; }
void set(Settings& s, const Field& f, double v) {
  if (f.real)
    s.*f.real = v;
  else
    s.*f.whole = static_cast<int>(v);
}

// Other values of a setting to probe with, far enough apart to change what the rules answer
// on most traces, and valid with the rest (the minimum never above the window).
std::vector<double> others(const Settings& s, const Field& f) {
  const std::string name = f.name;
  std::vector<double> v;
  if (name == "window") v = {static_cast<double>(s.minimum_calls), 20, 60};
  if (name == "minimum_calls") v = {1, static_cast<double>(s.window)};
  if (name == "failure_rate_percent") v = {10, 90};
  if (name == "wait_in_open_ms") v = {100, 5000, 20000};
  if (name == "permitted_in_half_open") v = {1, 5};
  std::vector<double> out;
  for (double x : v)
    if (x != get(s, f)) out.push_back(x);
  return out;
}

std::string value_text(const Field& f, double v) {
  std::ostringstream out;
  out << v << f.unit;
  return out.str();
}

// The trace's first `count` calls, each 4xx among them kept (status -1) or made `status`.
Trace with_4xx(const Trace& t, std::size_t count, int status) {
  Trace out{t.settings, {}};
  for (std::size_t i = 0; i < count && i < t.calls.size(); ++i) {
    Call c = t.calls[i];
    if (is_4xx(c) && status > 0) c.status = status;
    out.calls.push_back(c);
  }
  return out;
}

// The trace's first `count` calls without the 4xx the rules let through (whole calls) and without
// the trials the rules refused for want of a permit: with the 4xx gone, a permit it gave back is
// never taken, and a refused call would then take it.
Trace without_4xx(const Trace& t, std::size_t count) {
  count = std::min(count, t.calls.size());
  std::set<CallId> apart;  // 4xx calls that ended apart from their beginning
  for (std::size_t i = 0; i < count; ++i)
    if (t.calls[i].phase == Phase::End && is_4xx(t.calls[i])) apart.insert(t.calls[i].id);
  Model m(t.settings);
  Trace out{t.settings, {}};
  for (std::size_t i = 0; i < count; ++i) {
    const Call& c = t.calls[i];
    const Step step = m.step(c);
    const bool refused_trial = step.rule == Rule::TrialCap;
    // A 4xx the rules refused (OPEN) was never counted by them: it stays, or the experiment would
    // also take away a refusal (and a breaker whose refusals restart its wait would look 4xx-bound).
    const bool counted_4xx = is_4xx(c) && step.decision == Decision::Permitted;
    if (refused_trial || counted_4xx || (c.phase == Phase::Begin && apart.count(c.id))) continue;
    out.calls.push_back(c);
  }
  return out;
}

// Whether the rules decide the last call of `t` as they decided the call `want` was about: a
// trace changed for an experiment must still ask the same question at its end.
bool decides_last_as(const Trace& t, const Step& want) {
  Model m(t.settings);
  Step last;
  for (const Call& c : t.calls) last = m.step(c);
  return !t.calls.empty() && last.rule == want.rule && last.decision == want.decision && last.state == want.state;
}

// Whether `r`, the program's replies to `t`, answer every call as the rules do.
bool agrees(const Trace& t, const Replies& r) {
  return r.problem.empty() && !compare(t, r.answers);  // compare() finds a missing answer too
}
bool agrees(const Trace& t, const std::function<Replies(const Trace&)>& ask) { return agrees(t, ask(t)); }

// Did not open on a success that brought the window to its trip (gobreaker judges its rule only
// after a failure): the experiment is the same window with that success and the last failure
// before it swapped, so that a failure is what brings it there. This is that trace, where it asks
// the rules the same question at its end. A breaker comparing with > would stay closed on both
// orders, as the rate is the same.
std::optional<Trace> failure_last(const Trace& trace, const Divergence& d) {
  const Call& at = trace.calls[d.at];
  if (d.want.rule != Rule::Tripped || d.got->state != State::Closed || at.timed_out || at.status >= 400)
    return std::nullopt;
  for (std::size_t i = d.at; i-- > 0;) {
    const Call& c = trace.calls[i];
    if (is_4xx(c) || !(c.timed_out || c.status >= 500)) continue;
    Trace swapped{trace.settings, {trace.calls.begin(), trace.calls.begin() + static_cast<std::ptrdiff_t>(d.at + 1)}};
    std::swap(swapped.calls[i].status, swapped.calls[d.at].status);
    std::swap(swapped.calls[i].timed_out, swapped.calls[d.at].timed_out);
    if (!decides_last_as(swapped, d.want)) return std::nullopt;
    return swapped;
  }
  return std::nullopt;
}

// "f of n calls failed, at r%": the window the rules judged at the call `at`.
std::string rate_text(const Trace& trace, std::size_t at) {
  const auto counted = counted_since_closed(trace, at);
  const auto failures = std::count(counted.begin(), counted.end(), true);
  return std::to_string(failures) + " of " + std::to_string(counted.size()) + " calls failed, at " +
         std::to_string(trace.settings.failure_rate_percent) + "%";
}

std::string judged_late_text(const Trace& trace, std::size_t at) {
  return "did not open on a success that brought the window to the threshold (" + rate_text(trace, at) +
         "): it judges its rule only after a failure, and opens when a failure brings the same window there; the "
         "rule is judged after every counted call";
}

// The trace's calls up to and with `last`, under `settings`.
Trace prefix(const Trace& t, std::size_t last, const Settings& settings) {
  return {settings,
          {t.calls.begin(), t.calls.begin() + static_cast<std::ptrdiff_t>(std::min(last + 1, t.calls.size()))}};
}

// Stayed CLOSED at the threshold exactly: the same calls with the threshold a point lower (the
// window now over it, every earlier call decided as before) are answered as the rules do, so it
// opens over the threshold and not at it.
std::optional<Explanation> strict_threshold(const Trace& trace, const Divergence& d,
                                            const std::function<Replies(const Trace&)>& ask) {
  if (d.want.rule != Rule::Tripped || d.got->state != State::Closed || trace.settings.failure_rate_percent <= 1)
    return std::nullopt;
  const auto counted = counted_since_closed(trace, d.at);
  const auto calls = static_cast<int>(counted.size());
  const auto failures = static_cast<int>(std::count(counted.begin(), counted.end(), true));
  if (failures * 100 != trace.settings.failure_rate_percent * calls) return std::nullopt;
  Settings lower = trace.settings;
  --lower.failure_rate_percent;
  const Trace asked = prefix(trace, d.at, lower);
  const Trace same = prefix(trace, d.at, trace.settings);
  if (!decides_last_as(asked, d.want)) return std::nullopt;
  const auto before = model_answers(same.settings, same.calls);
  const auto now = model_answers(asked.settings, asked.calls);
  if (!std::equal(before.begin(), before.end() - 1, now.begin())) return std::nullopt;
  if (!agrees(asked, ask)) return std::nullopt;
  const std::string rate = std::to_string(trace.settings.failure_rate_percent);
  return Explanation{std::string(id(Rule::Tripped)),
                     "did not open when the failure rate reached the threshold exactly (" + std::to_string(failures) +
                         " of " + std::to_string(calls) + " calls in the window failed, at " + rate +
                         "%), and opened on the same calls with the threshold at " +
                         std::to_string(lower.failure_rate_percent) +
                         "%: it opens over the threshold but not at it (> where the rule is >=); the experiment: this "
                         "trace again, one point lower"};
}

// Stayed CLOSED with exactly the minimum number of calls counted. The experiment: failures in a
// row, all at one instant, under this trace's minimum and under one lower. A minimum compared by
// > stays CLOSED at each minimum and opens on the call after it; a window one call too small or
// one of seconds opens at the minimum, and a minimum typed in (the lab's 5) opens at its own
// number under both. (Below the window only: where the minimum is the whole window, a window one
// call short of it never opens, and the call after it is not in the window.)
std::optional<Explanation> strict_minimum(const Trace& trace, const Divergence& d,
                                          const std::function<Replies(const Trace&)>& ask) {
  const Settings& s = trace.settings;
  if (d.want.rule != Rule::Tripped || d.got->state != State::Closed || s.minimum_calls <= 1 ||
      s.minimum_calls >= s.window || static_cast<int>(counted_since_closed(trace, d.at).size()) != s.minimum_calls)
    return std::nullopt;
  const auto opens_one_late = [&](int minimum) {
    Trace failures{s, {}};
    failures.settings.minimum_calls = minimum;
    for (int i = 0; i <= minimum; ++i) failures.calls.push_back({0, 500, false});
    const Replies r = ask(failures);
    const auto m = static_cast<std::size_t>(minimum);
    if (!r.problem.empty() || r.answers.size() != m + 1) return false;
    for (std::size_t i = 0; i < m; ++i)
      if (r.answers[i] != Answer{Decision::Permitted, State::Closed}) return false;
    return r.answers[m] == Answer{Decision::Permitted, State::Open};
  };
  if (!opens_one_late(s.minimum_calls) || !opens_one_late(s.minimum_calls - 1)) return std::nullopt;
  const std::string n = std::to_string(s.minimum_calls);
  return Explanation{std::string(id(Rule::NotJudgedYet)),
                     "did not open with exactly minimum_calls (" + n +
                         ") calls counted: given failures in a row, it opened only on the call after the "
                         "minimum, with minimum_calls " +
                         n + " and with " + std::to_string(s.minimum_calls - 1) +
                         ": it judges the window once it holds more than the minimum, not once it holds it (> "
                         "where the rule is >=); the experiment: " +
                         std::to_string(s.minimum_calls + 1) + " failures in a row under each minimum"};
}

// Refused the call at the wait's exact end: the same call a millisecond later is let through as
// the rules do, so its wait ends after that instant, not at it.
std::optional<Explanation> strict_wait(const Trace& trace, const Divergence& d,
                                       const std::function<Replies(const Trace&)>& ask) {
  if (d.got->decision != Decision::Rejected || d.want.decision != Decision::Permitted) return std::nullopt;
  const double ends = wait_ends(trace)[d.at];
  if (ends < 0 || trace.calls[d.at].t_ms != ends) return std::nullopt;
  Trace later = prefix(trace, d.at, trace.settings);
  later.calls.back().t_ms += 1;
  if (!decides_last_as(later, d.want) || !agrees(later, ask)) return std::nullopt;
  return Explanation{std::string(id(Rule::FirstTrial)),
                     "refused the call at the wait's exact end (t=" + ms_text(ends) + ", " +
                         ms_text(trace.settings.wait_in_open_ms) +
                         " ms after it opened) and let the same call through 1 ms later: its wait ends after that "
                         "instant, not at it (> where the rule is >=); the experiment: this trace again with that "
                         "call 1 ms later"};
}

// Refused a call the rules let through long after the wait, and the probe showed it refuses one
// 100 s after opening: the trace's clock does not end its wait.
std::optional<Explanation> never_leaves_open(const Divergence& d, const SettingsProbe& probe) {
  if (probe.leaves_open || d.got->decision != Decision::Rejected || d.got->state != State::Open ||
      d.want.decision != Decision::Permitted)
    return std::nullopt;
  return Explanation{"wait_by_trace_clock",
                     "never let a call through after opening by the trace's clock: 100 s after it opened with a "
                     "wait of 1 s, it still refused a call (the experiment: a trace of two calls, that far apart); the "
                     "breaker's clock is each line's t_ms, and a breaker that reads the wall clock, or never "
                     "leaves OPEN, answers so"};
}

// Results the rules drop because their call began in a state since left: the same trace without
// those end lines (their calls simply never end) is answered as the rules do, so it counted one.
// Run before the 4xx experiments: a late 4xx dropped there would change the same thing.
std::optional<Explanation> late_counted(const Trace& trace, const Divergence& d,
                                        const std::function<Replies(const Trace&)>& ask) {
  Model m(trace.settings);
  Trace without{trace.settings, {}};
  std::string late;
  for (std::size_t i = 0; i <= d.at; ++i) {
    const Call& c = trace.calls[i];
    if (m.step(c).rule == Rule::LateResult && c.phase == Phase::End && i < d.at) {
      late += (late.empty() ? "call " : ", ") + std::to_string(c.id);
      continue;
    }
    without.calls.push_back(c);
  }
  if (late.empty() || !decides_last_as(without, d.want)) return std::nullopt;
  if (!agrees(without, ask)) return std::nullopt;
  return Explanation{std::string(id(Rule::LateResult)),
                     "counted a result that came back after the state its call began in had changed (" + late +
                         "): without those results it answers this call as the rules do; a result counts only in "
                         "the state its call began in"};
}

// A window the experiment showed never lets a call go (probe.slides): judged up to this call,
// where the window's rule decided it. (Without that experiment, explain() asks the whole trace
// to match a window that keeps every call; a later mistake of another kind spoils that match,
// and the trip was then put down to the rate alone.)
std::optional<Explanation> window_kept(const Trace& trace, const Replies& replies, const Divergence& d,
                                       const SettingsProbe& probe) {
  if (!probe.slides && (d.want.rule == Rule::BelowThreshold || d.want.rule == Rule::Tripped)) {
    Settings never_slides = trace.settings;
    never_slides.window = std::numeric_limits<int>::max();
    if (static_cast<int>(counted_since_closed(trace, d.at).size()) > trace.settings.window &&
        answered_as(trace, never_slides, replies.answers, d.at))
      return Explanation{"window_slides", "judged calls the window had already let go: it holds only the last " +
                                              std::to_string(trace.settings.window) +
                                              " counted calls, and older ones drop out"};
  }
  return std::nullopt;
}

// Two causes that combine (gobreaker: a 4xx counted as a success, and the rule judged only after
// a failure): neither experiment alone makes it answer as the rules do. Without the 4xx calls
// before it, it still departs here, and then the deciding success swapped with the last failure
// is answered as the rules do, where the same swap with the 4xx kept was not (the caller checked
// that): the rules answer both swaps alike, so the 4xx changed its answer, and the swap shows it
// judges only after a failure.
std::optional<Explanation> four_xx_and_judged_late(const Divergence& d, const Trace& without, const Replies& r,
                                                   const std::function<Replies(const Trace&)>& ask) {
  if (!r.problem.empty() || r.answers.size() != without.calls.size()) return std::nullopt;
  const auto dw = compare(without, r.answers);
  if (!dw || dw->at + 1 != without.calls.size() || !dw->got || *dw->got != *d.got) return std::nullopt;
  const std::optional<Trace> swapped = failure_last(without, *dw);
  if (!swapped || !agrees(*swapped, ask)) return std::nullopt;
  return Explanation{"4xx_and_opens_only_on_failure",
                     "two causes together: it counted a 4xx, the caller's mistake, and it judges its rule only "
                     "after a failure (did not open on a success that brought the window to the threshold, " +
                         rate_text(without, dw->at) +
                         "); the experiments: with the deciding success and the last failure before it swapped, it "
                         "answers as the rules do only once the 4xx calls before this one are gone, and without "
                         "them alone it still departs here; a 4xx is not counted at all"};
}

}  // namespace

SettingsProbe probe_settings(const Program& program, std::uint64_t seed, int first) {
  SettingsProbe out;
  // Per setting: decided (it changed the rules' answers on some probe) and read (it changed the
  // program's too). Every probe trace is asked: a breaker wrong in one way can make a setting
  // look unread on one trace (a wait it never gets to the end of says nothing of its trials).
  int decided[std::size(kFields)] = {};  // on how many base traces a probe changed the rules' answers
  bool read[std::size(kFields)] = {};
  for (int k = 0, index = first; k < 4; ++k, ++index) {
    if (index % 5 == 0) ++index;  // every fifth trace has the lab's settings: probe around others
    const Trace base = generate(seed, index);
    const Replies base_replies = program(base);
    ++out.runs;
    if (base_replies.unkept) continue;  // nothing to compare with
    const std::vector<Answer> base_model = model_answers(base.settings, base.calls);
    for (std::size_t f = 0; f < std::size(kFields); ++f) {
      if (read[f]) continue;
      bool decided_here = false;
      for (double v : others(base.settings, kFields[f])) {
        Trace probe = base;
        set(probe.settings, kFields[f], v);
        if (model_answers(probe.settings, probe.calls) == base_model) continue;
        if (!decided_here) ++decided[f];
        decided_here = true;
        const Replies r = program(probe);
        ++out.runs;
        if (r.unkept || r.answers != base_replies.answers || r.problem != base_replies.problem) {  // unkept: no claim
          read[f] = true;
          break;
        }
      }
    }
    if (std::all_of(std::begin(read), std::end(read), [](bool b) { return b; })) break;
  }
  for (std::size_t f = 0; f < std::size(kFields); ++f)
    if (decided[f] >= 2 && !read[f]) out.unread.emplace_back(kFields[f].name);  // one trace can miss by chance
  // Window 10, minimum 1, wait 1 s, one trial: a failure opens it, and a success 100 s later is
  // the trial that closes it. Any wait a breaker could hard-code is over by then.
  const Trace far{{10, 1, 50, 1000, 1}, {{0, 500, false}, {100000, 200, false}}};
  const Replies far_replies = program(far);
  ++out.runs;
  out.leaves_open = far_replies.answers.size() < 2 || far_replies.answers[1].decision == Decision::Permitted;
  if (!out.leaves_open)
    out.unread.erase(std::remove(out.unread.begin(), out.unread.end(), "wait_in_open_ms"), out.unread.end());
  // Window 5, minimum 1, 55%: twenty successes, then six failures. A sliding window of 5 opens at
  // the third failure (60%, by > as by >=), and so does a window of 10 (the lab's, typed in) by the
  // sixth; a window that keeps every call holds 6 of 26 at the end (23%: closed). Minimum 1 keeps
  // a minimum compared the wrong way, or the lab's 5 typed in, from keeping it closed.
  Trace sliding{{5, 1, 55, 3000, 3}, {}};
  for (int i = 0; i < 26; ++i) sliding.calls.push_back({static_cast<double>(i), i < 20 ? 200 : 500, false});
  const Replies r = program(sliding);
  ++out.runs;
  out.slides = r.unkept || (r.answers.size() == sliding.calls.size() && r.answers.back().state == State::Open);
  return out;
}

std::optional<Explanation> unread_settings(const Trace& trace, const Replies& replies, std::size_t upto,
                                           const SettingsProbe& probe) {
  if (replies.answers.size() <= upto) return std::nullopt;
  const Settings lab = lab_settings();
  const auto fits = [&](const Settings& s) { return answered_as(trace, s, replies.answers, upto); };
  // All the unread ones, or one.
  std::vector<std::vector<std::string>> guesses{probe.unread};
  if (probe.unread.size() > 1)
    for (const std::string& f : probe.unread) guesses.push_back({f});
  for (const auto& unread : probe.unread.empty() ? std::vector<std::vector<std::string>>{} : guesses) {
    Settings all_unread_as_lab = trace.settings;
    for (const Field& f : kFields)
      if (std::find(unread.begin(), unread.end(), f.name) != unread.end()) set(all_unread_as_lab, f, get(lab, f));
    Settings as_lab = trace.settings;
    std::string theirs;
    std::string ours;
    for (const Field& f : kFields) {
      if (std::find(unread.begin(), unread.end(), f.name) == unread.end()) continue;
      if (get(as_lab, f) == get(lab, f)) continue;
      // Named only where this trace depends on it: with the others at the lab's, its own value
      // still changes the rules' answers.
      Settings back = all_unread_as_lab;
      set(back, f, get(trace.settings, f));
      if (model_answers(back, trace.calls) == model_answers(all_unread_as_lab, trace.calls)) continue;
      set(as_lab, f, get(lab, f));
      theirs += std::string(theirs.empty() ? "" : ", ") + f.name + " " + value_text(f, get(trace.settings, f));
      ours += std::string(ours.empty() ? "" : ", ") + value_text(f, get(lab, f));
    }
    // Settings the lab refuses (a minimum above the window: a breaker that can never open) are
    // no explanation: any program that never opens would fit them by coincidence.
    if (theirs.empty() || as_lab.minimum_calls > as_lab.window || !fits(as_lab)) continue;
    // When the window is all it does not read, a window that never slides may fit as well (the
    // lab's window was never filled): that is the likelier mistake, and explain() names it.
    Settings unbounded = as_lab;
    unbounded.window = std::numeric_limits<int>::max();
    if (unread.size() == 1 && unread.front() == "window" && fits(unbounded)) break;
    const bool all = unread.size() == std::size(kFields);
    return Explanation{"settings_ignored",
                       std::string(all ? "did not read its settings" : "did not read all its settings") +
                           ": answered as the lab's own (" + ours + ") would, not this trace's (" + theirs +
                           "); changing them on the first line changes none of its answers"};
  }
  return std::nullopt;
}

Explanation diagnose(const Trace& trace, const Replies& replies, const Divergence& d, const Program& program,
                     const SettingsProbe& probe, int* runs) {
  if (!d.got) return explain(d, trace, replies);
  // Settings it never reads: its answers to the whole trace (not only up to the divergence: a
  // breaker that reads a setting but ignores the rule behind it may agree with the lab's number
  // for a while by chance) are the rules' with the lab's numbers in their place.
  if (replies.answers.size() == trace.calls.size())
    if (auto unread = unread_settings(trace, replies, trace.calls.size() - 1, probe)) return *unread;
  // A 4xx behind it: without the 4xx calls before it, it answers as the rules do; or it answers
  // the call itself wrongly only while that call is a 4xx.
  auto ask = [&](const Trace& t) {
    if (runs) ++*runs;
    return program(t);
  };
  const std::vector<Answer> mine(replies.answers.begin(),
                                 replies.answers.begin() + static_cast<std::ptrdiff_t>(d.at + 1));
  const std::string rest = "; a 4xx is not counted at all, in CLOSED or as a trial";
  auto four_xx = [&](const std::string& how_known) -> Explanation {
    const Trace as_success = with_4xx(trace, d.at + 1, 200);
    const Trace as_failure = with_4xx(trace, d.at + 1, 500);
    if (ask(as_success).answers == mine)
      return {std::string(id(Rule::NotCounted)),
              "took a 4xx, the caller's mistake, for a success: it answers the same "
              "with the 4xx made a 200, and " +
                  how_known + rest};
    if (ask(as_failure).answers == mine)
      return {std::string(id(Rule::NotCounted)),
              "took a 4xx, the caller's mistake, for a failure: it answers the same "
              "with the 4xx made a 500, and " +
                  how_known + rest};
    return {std::string(id(Rule::NotCounted)), "counted a 4xx, the caller's mistake: " + how_known + rest};
  };
  if (auto late = late_counted(trace, d, ask)) return *late;
  const Call& at = trace.calls[d.at];
  if (is_4xx(at)) {
    Trace plain = with_4xx(trace, d.at, -1);
    Call as_200 = at;  // an End stays the end of its call
    as_200.status = 200;
    plain.calls.push_back(as_200);
    const Replies r = ask(plain);
    if (!r.problem.empty() || r.answers.size() < plain.calls.size())
      return explain(d, trace, replies);  // shows nothing
    const auto still = compare(plain, r.answers);
    if (!still) return four_xx("answers this call as the rules do when it is a 200 instead");
    // Wrong as a 200 too: the 4xx is not what it got wrong here.
    return diagnose(plain, r, *still, program, probe, runs);
  }
  Trace without = without_4xx(trace, d.at);
  const bool has_4xx = without.calls.size() < d.at;
  without.calls.push_back(at);
  std::optional<Replies> without_replies;  // asked once: the two-causes experiment reads them again
  if (has_4xx && decides_last_as(without, d.want)) {
    without_replies = ask(without);
    if (agrees(without, *without_replies))
      return four_xx("without the 4xx calls before this one it answers as the rules do");
  }
  const std::optional<Trace> swapped = failure_last(trace, d);
  if (swapped && agrees(*swapped, ask)) return Explanation{"opens_only_on_failure", judged_late_text(trace, d.at)};
  if (swapped && without_replies)
    if (auto both = four_xx_and_judged_late(d, without, *without_replies, ask)) return *both;
  if (auto strict = strict_threshold(trace, d, ask)) return *strict;
  if (auto strict = strict_minimum(trace, d, ask)) return *strict;
  if (auto strict = strict_wait(trace, d, ask)) return *strict;
  if (auto stuck = never_leaves_open(d, probe)) return *stuck;
  if (auto kept = window_kept(trace, replies, d, probe)) return *kept;
  return explain(d, trace, replies, /*blame_window=*/!probe.slides);
}

}  // namespace cb::grade::conformance

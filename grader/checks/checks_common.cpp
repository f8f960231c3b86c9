// What the bodies of every step share: the file contract's check, state.json right after a
// step, the numbers a run follows, the log's stamps, and the words their messages use.
#include <algorithm>
#include <cstdio>

#include "cb/grade/variant.h"
#include "cb/grade/wording.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayNumbers =
    "{got}: these are the numbers of a different variant ({other}), not {numbers}; run the lab with the lab-settings.json made for this student (cb-lab variant writes it)";

std::string quoted(const std::string& s) { return "\"" + s.substr(0, 40) + "\""; }

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

std::string trials_text(std::size_t n) { return how_many(static_cast<long long>(n), "trial", "trials"); }

std::string precision_text(std::int64_t resolution_us) {
  switch (resolution_us) {
    case 1'000'000: return "whole seconds";
    case 100'000: return "tenths of a second";
    case 10'000: return "hundredths of a second";
    case 1'000: return "milliseconds";
    default: return std::to_string(resolution_us) + " us";
  }
}

int last_step_seen(const LabRun& run) {
  if (run.bad > 0) return step(StepRole::Ignore4xx);
  if (run.trials.size() > 1) return step(StepRole::Trials);
  if (!run.trials.empty()) return step(StepRole::Cooldown);
  if (run.count_calls.size() >= 2 || run.always500 > run.first_burst_500) return step(StepRole::Refused);
  if (!run.burst.empty()) return step(StepRole::Trip);
  if (run.fast_before_first_500 > 0) return step(StepRole::Fast);
  return step(StepRole::Server);
}

void contract_check(CheckVerdict& v, const Inputs& in, std::string_view role) {
  auto judge = [&](const auto& parsed) { parsed.ok ? v.pass() : v.fail(parsed.problem); };
  if (role == "state") return judge(in.state);
  if (role == "ignore") return judge(in.ignore);
  if (role == "fastfail") return judge(in.fastfail);
  if (in.transitions.ok && !in.stamp_problem.empty()) return v.fail(in.stamp_problem);
  // Empty while the state moved: the state was set somewhere other than the one place that
  // writes a line for each change.
  const std::string& log = in.spec.files.transitions;
  if (!in.transitions.ok && in.transitions.problem == log + " is empty" && in.run && !in.run->burst.empty() &&
      !never_opened(*in.run, in.spec))
    return v.fail(in.transitions.problem +
                  ", yet the record shows the breaker opened: a change of state set directly, not through the one "
                  "function that writes a line for it (move_to in the kits), is never recorded");
  judge(in.transitions);
}

void state_just_after(CheckVerdict& v, const Inputs& in, int step, const std::string& want) {
  // A program that ran on past step N rewrote state.json later: what is wrong is when it
  // stopped, not the breaker.
  const std::string& file = in.spec.files.state;
  std::string later;
  if (const int seen = in.run ? last_step_seen(*in.run) : 0; seen > step)
    later = ": " + file + " is from a later step, since the record shows the run went on to step " + str(seen) +
            "; stop the program after step " + str(step) + " (a starter kit: sh run.sh --until " + str(step) + ")";
  // CLOSED right after the first trial: the breaker closed on one success, where it permits more.
  else if (step == grade::step(StepRole::Cooldown) && want == "HALF_OPEN" && in.state.value->state == "CLOSED" &&
           in.spec.rules.trials > 1)
    later = ": the breaker closed on its first successful trial; it permits " + str(in.spec.rules.trials) +
            " trial calls in HALF_OPEN and closes only when they have all succeeded (" + file +
            " says permitted_in_half_open " + str(in.state.value->permitted_in_half_open) + ")";
  expect_state(v, *in.state.value, want, later);
}

std::string seconds_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", ms / 1000.0);
  return buf;
}

void expect_state(CheckVerdict& v, const StateFile& f, const std::string& want, const std::string& why_other) {
  // What was seen, after the title that says what was expected ("state.json: \"state\" is
  // \"OPEN\"": found \"CLOSED\"): the file's words again would read as a contradiction.
  std::string message = "found " + quoted(f.state);
  if (upper(f.state) == want) {
    message += "; states are upper case: \"" + want + "\"";
  } else if (f.state == "HALF-OPEN" || f.state == "HALFOPEN") {
    message += "; the state is spelled \"HALF_OPEN\"";
  } else {
    message += why_other;
  }
  v.expect(f.state == want, message, want, f.state);
}

bool never_opened(const LabRun& run, const LabSpec& spec) {
  return run.always500 >= run.first_burst_500 + static_cast<std::size_t>(spec.script.blocked);
}

bool never_left_closed(const Inputs& in) {
  if (!in.run || !never_opened(*in.run, in.spec)) return false;
  return !in.transitions.ok || find_transition(*in.transitions.value, "CLOSED", "OPEN") == nullptr;
}

std::string other_numbers(const Inputs& in) {
  if (!in.run || !in.state.ok) return {};
  const StateFile& f = *in.state.value;
  const LabSpec& spec = in.spec;
  if (f.window_size == spec.rules.window && f.permitted_in_half_open == spec.rules.trials) return {};
  const std::size_t trip = in.trip ? in.trip->reading : in.run->first_burst_500;
  // What shows in the run: the window and trials state.json reports, where the breaker opened,
  // and how many trials it closed after (when the log places it).
  auto shows = [&](const LabRules& r) {
    const auto trials = static_cast<std::size_t>(r.trials);
    return f.window_size == r.window && f.permitted_in_half_open == r.trials &&
           trip_point(r, spec.script.fast, spec.script.burst, false).at == static_cast<int>(trip) &&
           (!in.close || (in.close->low <= trials && trials <= in.close->high));
  };
  // (state.json already differs from this spec's window or trials, so a set that shows is another.)
  std::string other;
  if (shows(spec.handout)) {
    other = "the handout's: " + numbers_of(spec.handout).text();
  } else {
    for (const LabNumbers& n : variant_numbers(spec)) {
      if (!shows(rules_with(spec.rules, n))) continue;
      other = "window " + std::to_string(n.window) + ", opening on the " + nth(trip) + " failure, " +
              std::to_string(n.trials) + " trials";
      break;
    }
  }
  if (other.empty()) return {};
  return spec.fill(kSayNumbers, {{"got", spec.files.state + " reports window_size " + str(f.window_size) +
                                             " and permitted_in_half_open " + str(f.permitted_in_half_open) +
                                             ", and the breaker opened on the " + nth(trip) + " failure"},
                                 {"other", other}});
}

std::string stamp_problem(const std::vector<TransitionLine>& log) {
  for (const TransitionLine& l : log) {
    const std::string what = "line " + std::to_string(l.line) + " (" + l.from + "->" + l.to + ")";
    if (!l.at_us)
      return what +
             " has no time stamp: every line is stamped, to the millisecond or finer "
             "(2026-01-01T10:00:03.012Z CLOSED->OPEN), since the stamps are what prove when the breaker opened "
             "and closed";
    if (l.resolution_us > 1000)
      return what + " is stamped in " + precision_text(l.resolution_us) +
             ": stamp to the millisecond or finer (three digits after the second, or six), since a coarser stamp cannot "
             "place the transition among the calls";
  }
  return {};
}

}  // namespace cb::grade

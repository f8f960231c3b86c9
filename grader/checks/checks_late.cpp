// Steps 5-8: the cool-down, the trials that close the breaker, 4xx ignored, and the log. The
// log's lines are judged once, in step 8; steps 5 and 6 only read its stamps, and skip what
// they cannot judge without them. The table at the end registers each body under its id.
#include <algorithm>

#include "lab_checks.h"
#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

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

}  // namespace

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

namespace {

// ---- Step 5 ---------------------------------------------------------------------------------
void s5_state(CheckVerdict& v, const Inputs& in, bool) { state_just_after(v, in, 5, "HALF_OPEN"); }

void s5_failures(CheckVerdict& v, const Inputs& in, bool) {
  // HALF_OPEN judges its trials alone, and the one made so far succeeded: a count carried over
  // from the window that opened it would judge the trials by the outage.
  const auto failures = in.state.value->failures;
  v.expect(failures == 0,
           in.spec.say("s5.failures", {{"got", str(failures)}}) +
               (failures == in.spec.trip_failures ? in.spec.say("s5.failures.carried") : ""),
           0, failures);
}

void s5_log_wait(CheckVerdict& v, const Inputs& in, bool) {
  const auto& log = *in.transitions.value;
  const TransitionLine* opened = find_transition(log, "CLOSED", "OPEN");
  const TransitionLine* half = find_transition(log, "OPEN", "HALF_OPEN");
  const std::string& file = in.spec.files.transitions;
  if (!opened || !half)
    return v.skip(file + " has no CLOSED->OPEN and OPEN->HALF_OPEN to measure (step 8 judges its lines)");
  if (!opened->at_us || !half->at_us)
    return v.skip(
        "cannot be measured from the log: its lines have no stamps (step 8 says they are required); "
        "the server's record measures the wait (s5.waited)");
  const double ms = static_cast<double>(*half->at_us - *opened->at_us) / 1000.0;
  v.expect(ms >= in.spec.rules.wait_ms,
           in.spec.say("s5.log_wait", {{"line", str(half->line)}, {"got", seconds_text(ms)}}),
           ">= " + in.spec.values().at("wait"), seconds_text(ms));
}

void s5_waited(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  // A breaker that refused none of step 4's calls has shown no OPEN period to wait out: the
  // pause before the next call would then be the program's, not the breaker's (a breaker with no
  // rules at all would pass here). Step 3 or 4 is charged; this one is not judged.
  if (never_opened(run, in.spec))
    return v.skip(std::string(kNeverOpened) + ", and there was no cool-down to wait (steps 3 and 4 say why)");
  if (!run.gap_after_open_ms)
    return v.fail(run.last_500 ? "no call reached the server after the breaker opened" : "the breaker never opened");
  v.expect(*run.gap_after_open_ms >= in.spec.rules.wait_ms,
           in.spec.say("s5.waited", {{"got", seconds_text(*run.gap_after_open_ms)}}),
           ">= " + in.spec.values().at("wait"), seconds_text(*run.gap_after_open_ms));
}

// ---- Step 6 ---------------------------------------------------------------------------------
// state.json's permitted_in_half_open is a claim; the proof is in the time: HALF_OPEN->CLOSED
// may not come before the server answered the last permitted trial. A breaker that closes on the
// first success claims 3 and still shows 3 successful calls in the record (the program simply
// goes on calling once it is CLOSED), so the count of calls alone proves nothing.

// A breaker that never opened never left CLOSED: "CLOSED again" and its trials did not happen.
bool skipped_never_left(CheckVerdict& v, const Inputs& in) {
  if (!never_left_closed(in)) return false;
  v.skip(std::string(kNeverOpened) + " (nor does " + in.spec.files.transitions +
         "), so it never had trials to close it (steps 3 and 4 say why)");
  return true;
}

void s6_state(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  expect_state(v, in.spec.files.state, *in.state.value, "CLOSED");
}

void s6_permitted(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  const auto permitted = in.state.value->permitted_in_half_open;
  v.expect(permitted >= in.spec.rules.trials, in.spec.say("s6.permitted", {{"got", str(permitted)}}),
           ">= " + str(in.spec.rules.trials), permitted);
}

void s6_trials(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  const LabSpec& spec = in.spec;
  const auto trials = static_cast<std::size_t>(spec.rules.trials);
  const std::vector<const RecordEntry*> ok = successful_trials(*in.run);
  std::string few = spec.say("s6.trials", {{"got", std::to_string(ok.size())}});
  // Why there were fewer, where the files say: a close stamped after them (the program stops
  // calling once CLOSED), or a failed trial that reopened it.
  if (ok.size() < trials) {
    const std::size_t failed = in.run->trials.size() - ok.size();
    if (in.close && in.close->reading <= ok.size())
      few += spec.say("s6.trials.closed_early", {{"got_trials", trials_text(in.close->reading)}});
    else if (failed > 0)
      few += ": " + std::to_string(failed) + " trial(s) failed, and a failed trial reopens it";
    else
      few += spec.say("s6.trials.too_few");
  }
  v.expect(ok.size() >= trials, few, ">= " + str(spec.rules.trials), static_cast<std::uint64_t>(ok.size()));
}

void s6_closed_after_trials(CheckVerdict& v, const Inputs& in, bool) {
  const LabSpec& spec = in.spec;
  const TransitionLine* closed = last_transition(*in.transitions.value, "HALF_OPEN", "CLOSED");
  if (closed == nullptr)
    return v.skip(spec.files.transitions +
                  " has no HALF_OPEN->CLOSED to place among the trials (step 8 judges its lines)");
  const std::string line = str(closed->line);
  // Not proven is not passed: without a stamp that can place it, a breaker that closes on its
  // first lucky trial would pass step 6 on its files' word.
  if (!closed->at_us || closed->resolution_us > 1000)
    return v.fail(spec.say("s6.closed.unproven",
                           {{"line", line},
                            {"stamp", closed->at_us ? "is stamped in " + precision_text(closed->resolution_us)
                                                    : std::string("has no stamp")}}),
                  spec.rules.trials, nullptr);
  if (!in.close) return v.skip("the server's record has no wall-clock times to place the trials by");
  // Placed by placement.h: the count is what the stamp proves; the stamp's last digit may leave
  // the close after the last trial, and then it passes on the benefit of the doubt, with a note.
  const Placement& p = *in.close;
  const auto trials = static_cast<std::size_t>(spec.rules.trials);
  std::string message = spec.say("s6.closed.early", {{"line", line}, {"got_trials", trials_text(p.reading)}});
  if (p.high > p.reading)
    message += " (or " + std::to_string(p.high) +
               ", if the calls answered within the stamp's last digit came first: stamp to the microsecond to decide)";
  if (p.high >= trials && p.low < trials)
    return v.pass_noting(
        spec.say("s6.closed.doubt",
                 {{"line", line}, {"precision", precision_text(closed->resolution_us)}, {"low_nth", nth(p.low)}}),
        spec.rules.trials, static_cast<std::uint64_t>(p.reading));
  v.expect(p.high >= trials, message + ", so one lucky call can close it and it flaps", spec.rules.trials,
           static_cast<std::uint64_t>(p.reading));
}

// ---- Step 7 ---------------------------------------------------------------------------------
void s7_state(CheckVerdict& v, const Inputs& in, bool) {
  expect_state(v, in.spec.files.ignore, *in.ignore.value, "CLOSED");
}

void s7_failures(CheckVerdict& v, const Inputs& in, bool) {
  const auto failures = in.ignore.value->failures;
  v.expect(failures == 0,
           "failures=" + str(failures) +
               ": a 400 is the caller's mistake, not the dependency's; 4xx must not count as failures",
           0, failures);
}

void s7_bad_all(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  const auto bad = static_cast<std::size_t>(in.spec.script.bad);
  std::string message = in.spec.say("s7.bad_all", {{"got", std::to_string(run.bad)}});
  if (run.bad < bad && run.bad > 0)
    message += ": the breaker refused the rest, so it opened on 400s (4xx counted as failures)";
  v.expect(run.bad == bad, message, in.spec.script.bad, static_cast<std::uint64_t>(run.bad));
}

// ---- Step 8 ---------------------------------------------------------------------------------
void s8_order(CheckVerdict& v, const Inputs& in, bool) {
  const auto& t = *in.transitions.value;
  std::vector<std::string> got;
  for (const auto& l : t) got.push_back(l.from + "->" + l.to);
  const std::vector<std::string>& want = in.spec.transitions;
  std::string message;
  if (got.size() != want.size()) {
    message = in.spec.say("s8.order.count", {{"got", std::to_string(got.size())}});
  } else {
    for (std::size_t i = 0; i < want.size() && message.empty(); ++i)
      if (got[i] != want[i]) message = "line " + str(t[i].line) + " is " + got[i] + ", expected " + want[i];
  }
  v.expect(message.empty(), message, want, got);
}

bool stamped(const std::vector<TransitionLine>& log) {
  return std::all_of(log.begin(), log.end(), [](const TransitionLine& l) { return l.at_us.has_value(); });
}

void s8_increasing(CheckVerdict& v, const Inputs& in, bool) {
  const auto& l = *in.transitions.value;
  if (!stamped(l)) return v.skip(in.spec.files.transitions + " has no timestamps (the contract requires them)");
  // The cool-down between the first two is step 5's rule, judged there; here only the log's own
  // consistency.
  bool increasing = true;
  for (std::size_t i = 1; i < l.size(); ++i) increasing = increasing && *l[i - 1].at_us <= *l[i].at_us;
  v.expect(increasing, "the timestamps go backwards", "increasing", increasing ? "increasing" : "backwards");
}

void s8_seen(CheckVerdict& v, const Inputs& in, bool) {
  const auto& l = *in.transitions.value;
  if (!stamped(l)) return v.skip(in.spec.files.transitions + " has no timestamps (the contract requires them)");
  const LabRun& run = *in.run;
  // The log's times against the server's: CLOSED->OPEN within a second of the burst's last
  // /always500, HALF_OPEN->CLOSED no earlier than the first trial. A second of slack covers
  // clocks read at slightly different moments; a log from another run is off by far more.
  if (!run.trip || run.trials.empty() || !run.lab[*run.trip]->wall_us || !run.trials.front()->wall_us)
    return v.fail("the server's record has no tripping " + kFailingPath +
                  " followed by trial calls for these transitions");
  const std::int64_t trip = *run.lab[*run.trip]->wall_us;
  const std::int64_t first_trial = *run.trials.front()->wall_us;
  constexpr std::int64_t kSlackUs = 1'000'000;
  const TransitionLine& opened = l.front();
  const TransitionLine& closed = l.back();
  const bool open_ok = *opened.at_us >= trip - kSlackUs && *opened.at_us <= trip + kSlackUs;
  const bool close_ok =
      *closed.at_us + closed.resolution_us >= first_trial && *closed.at_us <= first_trial + 60 * kSlackUs;
  v.expect(open_ok && close_ok,
           !open_ok
               ? "CLOSED->OPEN is stamped " + seconds_text(static_cast<double>(*opened.at_us - trip) / 1000.0) +
                     " away from the " + kFailingPath + " that opened it: the log is not from the run the server saw"
               : "HALF_OPEN->CLOSED is stamped outside the trial calls the server saw: the log is not from this run",
           nullptr, nullptr);
}

constexpr CheckEntry kLate[] = {
    {"s5.state", s5_state},           {"s5.failures", s5_failures},
    {"s5.log_wait", s5_log_wait},     {"s5.waited", s5_waited},
    {"s6.state", s6_state},           {"s6.permitted", s6_permitted},
    {"s6.trials", s6_trials},         {"s6.closed_after_trials", s6_closed_after_trials},
    {"s7.state", s7_state},           {"s7.failures", s7_failures},
    {"s7.bad_all", s7_bad_all},       {"s8.order", s8_order},
    {"s8.increasing", s8_increasing}, {"s8.seen", s8_seen},
};

}  // namespace

std::span<const CheckEntry> late_checks() noexcept { return kLate; }

}  // namespace cb::grade

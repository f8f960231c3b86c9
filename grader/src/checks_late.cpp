// Steps 5-8: the cool-down, the trials that close the breaker, 4xx ignored, and the log. The
// log's lines are judged once, in step 8; steps 5 and 6 only read its stamps, and skip what
// they cannot judge without them.
#include <algorithm>

#include "cb/grade/lab_spec.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

std::string trials_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " trial" : " trials"); }

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

// ---- Step 5 ---------------------------------------------------------------------------------
void step5(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    state_just_after(s, in, 5, "HALF_OPEN");
    // HALF_OPEN judges its trials alone, and the one made so far succeeded: a count carried over
    // from the window that opened it would judge the trials by the outage.
    if (in.state.ok && s.ready("s5.failures")) {
      const auto failures = in.state.value->failures;
      s.expect(failures == 0, "s5.failures",
               "state.json: \"failures\" is " + std::to_string(failures) +
                   " in HALF_OPEN: HALF_OPEN counts only its trials, and the one made so far succeeded" +
                   (failures == lab::kTripAt
                        ? " (3 is the window that opened it, carried over: entering HALF_OPEN empties it)"
                        : ""),
               0, failures);
    }
  } else if (s.ready("s5.log_wait")) {
    const auto& log = *in.transitions.value;
    const TransitionLine* opened = find_transition(log, "CLOSED", "OPEN");
    const TransitionLine* half = find_transition(log, "OPEN", "HALF_OPEN");
    if (!opened || !half) {
      s.skip("s5.log_wait",
             "transitions.log has no CLOSED->OPEN and OPEN->HALF_OPEN to measure (step 8 judges its lines)");
    } else if (!opened->at_us || !half->at_us) {
      s.skip("s5.log_wait",
             "cannot be measured from the log: its lines have no stamps (step 8 says they are required); "
             "the server's record measures the wait (s5.waited)");
    } else {
      const double ms = static_cast<double>(*half->at_us - *opened->at_us) / 1000.0;
      s.expect(ms >= lab::kWaitMs, "s5.log_wait",
               "OPEN->HALF_OPEN (line " + std::to_string(half->line) + ") is " + seconds_text(ms) +
                   " after CLOSED->OPEN: the breaker must stay OPEN for its 3 s cool-down",
               ">= 3 s", seconds_text(ms));
    }
  }
  if (!s.ready("s5.waited")) return;
  const LabRun& run = *in.run;
  // A breaker that refused none of step 4's calls has shown no OPEN period to wait out: the
  // pause before the next call would then be the program's, not the breaker's (a breaker with no
  // rules at all would pass here). Step 3 or 4 is charged; this one is not judged.
  if (never_opened(run)) {
    s.skip("s5.waited", std::string(kNeverOpened) + ", and there was no cool-down to wait (steps 3 and 4 say why)");
    return;
  }
  if (!run.gap_after_open_ms) {
    s.fail("s5.waited",
           run.last_500 ? "no call reached the server after the breaker opened" : "the breaker never opened");
    return;
  }
  s.expect(*run.gap_after_open_ms >= lab::kWaitMs, "s5.waited",
           "the next call reached the server " + seconds_text(*run.gap_after_open_ms) +
               " after the breaker opened: the 3 s cool-down was not waited",
           ">= 3 s", seconds_text(*run.gap_after_open_ms));
}

// ---- Step 6 ---------------------------------------------------------------------------------
// state.json's permitted_in_half_open is a claim; the proof is in the time: HALF_OPEN->CLOSED
// may not come before the server answered the 3rd trial. A breaker that closes on the first
// success claims 3 and still shows 3 successful calls in the record (the program simply goes on
// calling once it is CLOSED), so the count of calls alone proves nothing.
void step6(StepBuilder& s, const Inputs& in, bool just_after) {
  // A breaker that never opened never left CLOSED: "CLOSED again" and its trials did not happen.
  if (never_left_closed(in)) {
    (void)s.file(in.state, "s6.state_contract");
    const std::string why = std::string(kNeverOpened) +
                            " (nor does transitions.log), so it never had trials to close it (steps 3 and 4 say why)";
    for (const char* id : {"s6.state", "s6.permitted", "s6.trials"}) s.skip(id, why);
    return;
  }
  if (const StateFile* f = s.file(in.state, "s6.state_contract")) {
    expect_state(s, "s6.state", "state.json", *f, "CLOSED");
    s.expect(f->permitted_in_half_open >= lab::kTrials, "s6.permitted",
             "permitted_in_half_open=" + std::to_string(f->permitted_in_half_open) +
                 ": with fewer than 3 trials, one lucky call closes the breaker and it flaps",
             ">= 3", f->permitted_in_half_open);
  }
  if (!s.ready("s6.trials")) return;
  const std::vector<const RecordEntry*> ok = successful_trials(*in.run);
  std::string few =
      std::to_string(ok.size()) + " successful call(s) reached the server after the cool-down, expected 3 trials";
  // Why there were fewer, where the files say: a close stamped after them (the program stops
  // calling once CLOSED), or a failed trial that reopened it.
  if (ok.size() < static_cast<std::size_t>(lab::kTrials)) {
    const std::size_t failed = in.run->trials.size() - ok.size();
    if (in.close && in.close->reading <= ok.size())
      few += ": the breaker closed after " + trials_text(in.close->reading) +
             " (transitions.log's HALF_OPEN->CLOSED), so the program stopped calling; a breaker closes only on the "
             "judgement of all 3 permitted trials";
    else if (failed > 0)
      few += ": " + std::to_string(failed) + " trial(s) failed, and a failed trial reopens it";
    else
      few += ": the program must make at least 3 calls while HALF_OPEN, one at a time";
  }
  s.expect(ok.size() >= static_cast<std::size_t>(lab::kTrials), "s6.trials", few, ">= 3",
           static_cast<std::uint64_t>(ok.size()));
  // Ready only when s6.trials passed: there are at least 3 successful trials to place the close among.
  if (just_after || !s.ready("s6.closed_after_trials")) return;

  const TransitionLine* closed = last_transition(*in.transitions.value, "HALF_OPEN", "CLOSED");
  if (closed == nullptr) {
    s.skip("s6.closed_after_trials",
           "transitions.log has no HALF_OPEN->CLOSED to place among the trials (step 8 judges its lines)");
    return;
  }
  // Not proven is not passed: without a stamp that can place it, a breaker that closes on its
  // first lucky trial would pass step 6 on its files' word.
  if (!closed->at_us || closed->resolution_us > 1000) {
    s.fail(
        "s6.closed_after_trials",
        "not proven: HALF_OPEN->CLOSED (line " + std::to_string(closed->line) + ") " +
            (closed->at_us ? "is stamped in " + precision_text(closed->resolution_us) : std::string("has no stamp")) +
            ", so nothing shows whether the breaker closed after the 3rd trial or after the 1st (state.json's "
            "permitted_in_half_open is only a claim); stamp transitions.log to the millisecond or finer",
        lab::kTrials, nullptr);
    return;
  }
  if (!in.close) {
    s.skip("s6.closed_after_trials", "the server's record has no wall-clock times to place the trials by");
    return;
  }
  // Placed by placement.h: the count is what the stamp proves; the stamp's last digit may leave
  // the close after the 3rd, and then it passes on the benefit of the doubt, with a note saying so.
  const Placement& p = *in.close;
  const auto trials = static_cast<std::size_t>(lab::kTrials);
  std::string message = "HALF_OPEN->CLOSED (line " + std::to_string(closed->line) +
                        ") is stamped before the server answered the 3rd trial: it closed after " +
                        trials_text(p.reading);
  if (p.high > p.reading)
    message += " (or " + std::to_string(p.high) +
               ", if the calls answered within the stamp's last digit came first: stamp to the microsecond to decide)";
  if (p.high >= trials && p.low < trials) {
    s.pass_noting("s6.closed_after_trials",
                  "passed on the benefit of the doubt: HALF_OPEN->CLOSED (line " + std::to_string(closed->line) +
                      ") is stamped in " + precision_text(closed->resolution_us) +
                      ", which allows the close after the " + nth(trials) + " trial but also after the " + nth(p.low) +
                      " (answered within the stamp's last digit); stamp to the microsecond to decide",
                  lab::kTrials, static_cast<std::uint64_t>(p.reading));
    return;
  }
  s.expect(p.high >= trials, "s6.closed_after_trials", message + ", so one lucky call can close it and it flaps",
           lab::kTrials, static_cast<std::uint64_t>(p.reading));
}

// ---- Step 7 ---------------------------------------------------------------------------------
void step7(StepBuilder& s, const Inputs& in, bool) {
  if (const StateFile* f = s.file(in.ignore, "s7.ignore_contract")) {
    expect_state(s, "s7.state", "ignore4xx.json", *f, "CLOSED");
    s.expect(f->failures == 0, "s7.failures",
             "failures=" + std::to_string(f->failures) +
                 ": a 400 is the caller's mistake, not the dependency's; 4xx must not count as failures",
             0, f->failures);
  }
  if (!s.ready("s7.bad_all")) return;
  const LabRun& run = *in.run;
  std::string message = std::to_string(run.bad) + " /bad reached the server, expected all 10";
  if (run.bad < static_cast<std::size_t>(lab::kBad) && run.bad > 0)
    message += ": the breaker refused the rest, so it opened on 400s (4xx counted as failures)";
  s.expect(run.bad == static_cast<std::size_t>(lab::kBad), "s7.bad_all", message, lab::kBad,
           static_cast<std::uint64_t>(run.bad));
}

// ---- Step 8 ---------------------------------------------------------------------------------
void step8(StepBuilder& s, const Inputs& in, bool) {
  if (in.transitions.ok && !in.stamp_problem.empty()) {
    s.fail("s8.log_contract", in.stamp_problem);
    return;
  }
  const auto* t = s.file(in.transitions, "s8.log_contract");
  if (t == nullptr) return;
  std::vector<std::string> got;
  for (const auto& l : *t) got.push_back(l.from + "->" + l.to);
  const std::vector<std::string> want{"CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED"};
  std::string message;
  if (got.size() != want.size()) {
    message = std::to_string(got.size()) + " transition(s), expected 3";
  } else {
    for (std::size_t i = 0; i < want.size() && message.empty(); ++i)
      if (got[i] != want[i])
        message = "line " + std::to_string((*t)[i].line) + " is " + got[i] + ", expected " + want[i];
  }
  s.expect(message.empty(), "s8.order", message, want, got);
  if (!s.ready("s8.increasing")) return;
  const auto& l = *t;
  if (!l[0].at_us || !l[1].at_us || !l[2].at_us) {
    s.skip("s8.increasing", "transitions.log has no timestamps (the contract requires them)");
    s.skip("s8.seen", "transitions.log has no timestamps (the contract requires them)");
    return;
  }
  // The cool-down between the first two is step 5's rule, judged there; here only the log's own
  // consistency.
  const bool increasing = *l[0].at_us <= *l[1].at_us && *l[1].at_us <= *l[2].at_us;
  s.expect(increasing, "s8.increasing", "the timestamps go backwards", "increasing",
           increasing ? "increasing" : "backwards");

  if (!s.ready("s8.seen")) return;
  const LabRun& run = *in.run;
  // The log's times against the server's: CLOSED->OPEN within a second of the burst's last
  // /always500, HALF_OPEN->CLOSED no earlier than the first trial. A second of slack covers
  // clocks read at slightly different moments; a log from another run is off by far more.
  if (!run.trip || run.trials.empty() || !run.lab[*run.trip]->wall_us || !run.trials.front()->wall_us) {
    s.fail("s8.seen", "the server's record has no tripping /always500 followed by trial calls for these transitions");
    return;
  }
  const std::int64_t trip = *run.lab[*run.trip]->wall_us;
  const std::int64_t first_trial = *run.trials.front()->wall_us;
  constexpr std::int64_t kSlackUs = 1'000'000;
  const bool open_ok = *l[0].at_us >= trip - kSlackUs && *l[0].at_us <= trip + kSlackUs;
  const bool close_ok = *l[2].at_us + l[2].resolution_us >= first_trial && *l[2].at_us <= first_trial + 60 * kSlackUs;
  s.expect(open_ok && close_ok, "s8.seen",
           !open_ok
               ? "CLOSED->OPEN is stamped " + seconds_text(static_cast<double>(*l[0].at_us - trip) / 1000.0) +
                     " away from the /always500 that opened it: the log is not from the run the server saw"
               : "HALF_OPEN->CLOSED is stamped outside the trial calls the server saw: the log is not from this run");
}

}  // namespace cb::grade

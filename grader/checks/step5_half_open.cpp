// Step 5: the cool-down, and the first trial in HALF_OPEN.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayFailures =
    "{state_file}: \"failures\" is {got} in HALF_OPEN: HALF_OPEN counts only its trials, and the one made so far succeeded";
constexpr std::string_view kSayFailuresCarried =
    " ({trip_failures} is the window that opened it, carried over: entering HALF_OPEN empties it)";
constexpr std::string_view kSayLogWait =
    "OPEN->HALF_OPEN (line {line}) is {got} after CLOSED->OPEN: the breaker must stay OPEN for its {wait} cool-down";
constexpr std::string_view kSayLogWaitDoubt =
    "passed on the benefit of the doubt: CLOSED->OPEN (line {open_line}) and OPEN->HALF_OPEN (line {line}) are stamped in {precision}, which allows anything from {low} to {high} between them, so the {wait} cool-down may have been waited; stamp {transitions_file} to the millisecond or finer to decide";
constexpr std::string_view kSayWaited =
    "the next call reached the server {got} after the breaker opened: the {wait} cool-down was not waited";

constexpr CheckDef kStateContract{
    "s5.state_contract", When::JustAfter, "{state_file} follows the contract", nullptr, {}, FileRole::State};

void s5_state(CheckVerdict& v, const Inputs& in, bool) {
  state_just_after(v, in, step(StepRole::Cooldown), "HALF_OPEN");
}
constexpr CheckDef kState{
    "s5.state", When::JustAfter, "{state_file}: \"state\" is \"HALF_OPEN\"", s5_state, {after(kStateContract)}};

void s5_failures(CheckVerdict& v, const Inputs& in, bool) {
  // HALF_OPEN judges its trials alone, and the one made so far succeeded: a count carried over
  // from the window that opened it would judge the trials by the outage.
  const auto failures = in.state.value->failures;
  v.expect(failures == 0,
           in.spec.fill(kSayFailures, {{"got", str(failures)}}) +
               (failures == in.spec.trip_failures ? in.spec.fill(kSayFailuresCarried) : ""),
           0, failures);
}
constexpr CheckDef kFailures{"s5.failures",
                             When::JustAfter,
                             "{state_file}: \"failures\" is 0 (HALF_OPEN counts its trials only)",
                             s5_failures,
                             {after(kStateContract)}};

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
  // A stamp is the interval its last digit covers ([at, at + resolution)), not a point: the wait
  // is judged on every reading the two stamps allow, so where in its second a whole-second stamp
  // fell cannot change the verdict. Fails only when no reading waits long enough.
  const std::int64_t low_us = *half->at_us - (*opened->at_us + opened->resolution_us - 1);
  const std::int64_t high_us = *half->at_us + half->resolution_us - 1 - *opened->at_us;
  const auto wait_us = static_cast<std::int64_t>(in.spec.rules.wait_ms * 1000.0);
  const double ms = static_cast<double>(*half->at_us - *opened->at_us) / 1000.0;
  const std::string expected = ">= " + in.spec.values().at("wait");
  if (ms < in.spec.rules.wait_ms && high_us >= wait_us)
    return v.pass_noting(
        in.spec.fill(kSayLogWaitDoubt,
                     {{"open_line", str(opened->line)},
                      {"line", str(half->line)},
                      {"precision", precision_text(std::max(opened->resolution_us, half->resolution_us))},
                      {"low", seconds_text(static_cast<double>(std::max<std::int64_t>(low_us, 0)) / 1000.0)},
                      {"high", seconds_text(static_cast<double>(high_us) / 1000.0)}}),
        expected, seconds_text(ms));
  v.expect(ms >= in.spec.rules.wait_ms,
           in.spec.fill(kSayLogWait, {{"line", str(half->line)}, {"got", seconds_text(ms)}}), expected,
           seconds_text(ms));
}
constexpr CheckDef kLogWait{"s5.log_wait",
                            When::Finished,
                            "{transitions_file}: OPEN->HALF_OPEN at least {wait} after CLOSED->OPEN",
                            s5_log_wait,
                            {file(FileRole::Transitions), kNumbers}};

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
           in.spec.fill(kSayWaited, {{"got", seconds_text(*run.gap_after_open_ms)}}),
           ">= " + in.spec.values().at("wait"), seconds_text(*run.gap_after_open_ms));
}
constexpr CheckDef kWaited{"s5.waited",
                           When::Always,
                           "the first call after the breaker opened came at least {wait} later",
                           s5_waited,
                           {kRecord, kNumbers}};

constexpr const CheckDef* kStep[] = {&kStateContract, &kState, &kFailures, &kLogWait, &kWaited};

}  // namespace

std::span<const CheckDef* const> step5_checks() noexcept { return kStep; }

}  // namespace cb::grade

// Step 6: the trials that close the breaker again.
//
// state.json's permitted_in_half_open is a claim; the proof is in the time: HALF_OPEN->CLOSED
// may not come before the server answered the last permitted trial. A breaker that closes on the
// first success claims 3 and still shows 3 successful calls in the record (the program simply
// goes on calling once it is CLOSED), so the count of calls alone proves nothing.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayClosedDoubt =
    "passed on the benefit of the doubt: HALF_OPEN->CLOSED (line {line}) is stamped in {precision}, which allows the close after the {trials_nth} trial but also after the {low_nth} (answered within the stamp's last digit); stamp to the microsecond to decide";
constexpr std::string_view kSayClosedEarly =
    "HALF_OPEN->CLOSED (line {line}) is stamped before the server answered the {trials_nth} trial: it closed after {got_trials}";
constexpr std::string_view kSayClosedUnproven =
    "not proven: HALF_OPEN->CLOSED (line {line}) {stamp}, so nothing shows whether the breaker closed after the {trials_nth} trial or after the 1st ({state_file}'s permitted_in_half_open is only a claim); stamp {transitions_file} to the millisecond or finer";
constexpr std::string_view kSayPermitted =
    "permitted_in_half_open={got}: with fewer than {trials} trials, one lucky call closes the breaker and it flaps";
constexpr std::string_view kSayTrials =
    "{got} successful call(s) reached the server after the cool-down, expected {trials} trials";
constexpr std::string_view kSayTrialsClosedEarly =
    ": the breaker closed after {got_trials} ({transitions_file}'s HALF_OPEN->CLOSED), so the program stopped calling; a breaker closes only on the judgement of all {trials} permitted trials";
constexpr std::string_view kSayTrialsTooFew =
    ": the program must make at least {trials} calls while HALF_OPEN, one at a time";

constexpr CheckDef kStateContract{"s6.state_contract", When::Always, "{state_file} follows the contract", nullptr, {},
                                  FileRole::State};

// A breaker that never opened never left CLOSED: "CLOSED again" and its trials did not happen.
bool skipped_never_left(CheckVerdict& v, const Inputs& in) {
  if (!never_left_closed(in)) return false;
  v.skip(std::string(kNeverOpened) + " (nor does " + in.spec.files.transitions +
         "), so it never had trials to close it (steps 3 and 4 say why)");
  return true;
}

void s6_state(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  expect_state(v, *in.state.value, "CLOSED");
}
constexpr CheckDef kState{
    "s6.state", When::Always, "{state_file}: \"state\" is \"CLOSED\"", s6_state, {after(kStateContract)}};

void s6_permitted(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  const auto permitted = in.state.value->permitted_in_half_open;
  v.expect(permitted >= in.spec.rules.trials, in.spec.fill(kSayPermitted, {{"got", str(permitted)}}),
           ">= " + str(in.spec.rules.trials), permitted);
}
constexpr CheckDef kPermitted{"s6.permitted",
                              When::Always,
                              "{state_file}: \"permitted_in_half_open\" >= {trials}",
                              s6_permitted,
                              {after(kStateContract), kNumbers}};

void s6_trials(CheckVerdict& v, const Inputs& in, bool) {
  if (skipped_never_left(v, in)) return;
  const LabSpec& spec = in.spec;
  const auto trials = static_cast<std::size_t>(spec.rules.trials);
  const std::vector<const RecordEntry*> ok = successful_trials(*in.run);
  std::string few = spec.fill(kSayTrials, {{"got", std::to_string(ok.size())}});
  // Why there were fewer, where the files say: a close stamped after them (the program stops
  // calling once CLOSED), or a failed trial that reopened it.
  if (ok.size() < trials) {
    const std::size_t failed = in.run->trials.size() - ok.size();
    if (in.close && in.close->reading <= ok.size())
      few += spec.fill(kSayTrialsClosedEarly, {{"got_trials", trials_text(in.close->reading)}});
    else if (failed > 0)
      few += ": " + std::to_string(failed) + " trial(s) failed, and a failed trial reopens it";
    else
      few += spec.fill(kSayTrialsTooFew);
  }
  v.expect(ok.size() >= trials, few, ">= " + str(spec.rules.trials), static_cast<std::uint64_t>(ok.size()));
}
constexpr CheckDef kTrials{"s6.trials",
                           When::Always,
                           "at least {trials} successful trial calls reached the server",
                           s6_trials,
                           {kRecord, kNumbers}};

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
    return v.fail(spec.fill(kSayClosedUnproven,
                            {{"line", line},
                             {"stamp", closed->at_us ? "is stamped in " + precision_text(closed->resolution_us)
                                                     : std::string("has no stamp")}}),
                  spec.rules.trials, nullptr);
  if (!in.close) return v.skip("the server's record has no wall-clock times to place the trials by");
  // Placed by placement.h: the count is what the stamp proves; the stamp's last digit may leave
  // the close after the last trial, and then it passes on the benefit of the doubt, with a note.
  const Placement& p = *in.close;
  const auto trials = static_cast<std::size_t>(spec.rules.trials);
  std::string message = spec.fill(kSayClosedEarly, {{"line", line}, {"got_trials", trials_text(p.reading)}});
  if (p.high > p.reading)
    message += " (or " + std::to_string(p.high) +
               ", if the calls answered within the stamp's last digit came first: stamp to the microsecond to decide)";
  if (p.high >= trials && p.low < trials)
    return v.pass_noting(
        spec.fill(kSayClosedDoubt,
                  {{"line", line}, {"precision", precision_text(closed->resolution_us)}, {"low_nth", nth(p.low)}}),
        spec.rules.trials, static_cast<std::uint64_t>(p.reading));
  v.expect(p.high >= trials, message + ", so one lucky call can close it and it flaps", spec.rules.trials,
           static_cast<std::uint64_t>(p.reading));
}
constexpr CheckDef kClosedAfterTrials{"s6.closed_after_trials",
                                      When::Finished,
                                      "HALF_OPEN->CLOSED came after the server answered the {trials_nth} trial",
                                      s6_closed_after_trials,
                                      {after(kTrials), file(FileRole::Transitions), kRecord, kNumbers}};

constexpr const CheckDef* kStep[] = {&kStateContract, &kState, &kPermitted, &kTrials, &kClosedAfterTrials};

}  // namespace

std::span<const CheckDef* const> step6_checks() noexcept { return kStep; }

}  // namespace cb::grade

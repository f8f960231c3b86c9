// Step 4: the refusals while OPEN.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayBlocked =
    "blocked={got}: the lab makes {blocked} calls while OPEN, and all {blocked} must be refused";
constexpr std::string_view kSayMaxMs = "max_ms={got} is not < {max_refusal_ms}: a refusal must not wait on the network";

constexpr CheckDef kFastfailContract{
    "s4.fastfail_contract", When::Always, "{fastfail_file} follows the contract", nullptr, {}, FileRole::Fastfail};
constexpr CheckDef kStateContract{
    "s4.state_contract", When::JustAfter, "{state_file} follows the contract", nullptr, {}, FileRole::State};

void s4_state(CheckVerdict& v, const Inputs& in, bool) { state_just_after(v, in, step(StepRole::Refused), "OPEN"); }
constexpr CheckDef kState{
    "s4.state", When::JustAfter, "{state_file}: \"state\" is \"OPEN\"", s4_state, {after(kStateContract)}};

void s4_blocked(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  v.expect(f.blocked == in.spec.script.blocked, in.spec.fill(kSayBlocked, {{"got", str(f.blocked)}}),
           in.spec.script.blocked, f.blocked);
}
constexpr CheckDef kBlocked{
    "s4.blocked", When::Always, "{fastfail_file}: blocked={blocked}", s4_blocked, {after(kFastfailContract)}};

void s4_before_after(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  const auto leaked = f.after - f.before;
  v.expect(leaked == 0,
           "before=" + str(f.before) + " after=" + str(f.after) + ": " + str(leaked) +
               " call(s) reached the server while the breaker was OPEN",
           f.before, f.after);
}
constexpr CheckDef kBeforeAfter{"s4.before_after",
                                When::Always,
                                "{fastfail_file}: before equals after",
                                s4_before_after,
                                {after(kFastfailContract)}};

void s4_max_ms(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  char ms[64];
  std::snprintf(ms, sizeof ms, "%g", f.max_ms);
  v.expect(f.max_ms < in.spec.max_refusal_ms, in.spec.fill(kSayMaxMs, {{"got", ms}}),
           "< " + in.spec.values().at("max_refusal_ms"), f.max_ms);
}
constexpr CheckDef kMaxMs{
    "s4.max_ms", When::Always, "{fastfail_file}: max_ms < {max_refusal_ms}", s4_max_ms, {after(kFastfailContract)}};

void s4_counts_real(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  // Two /count answers, before then after (one answer cannot be quoted twice). Equal answers
  // mean nothing was counted between them: the count never goes down.
  std::vector<std::int64_t> answers;
  for (const RecordEntry* c : in.run->count_calls)
    if (c->count) answers.push_back(*c->count);
  bool found = false;
  for (std::size_t i = 0; i < answers.size() && !found; ++i)
    if (answers[i] == f.before)
      for (std::size_t j = i + 1; j < answers.size() && !found; ++j) found = answers[j] == f.after;
  std::string list;
  for (std::size_t i = 0; i < answers.size() && i < 12; ++i) list += (i ? ", " : "") + str(answers[i]);
  v.expect(found,
           answers.empty() ? "the server never answered " + kCountPath + ": before and after were not measured"
                           : "the server answered " + kCountPath + " with " + list + "; " + in.spec.files.fastfail +
                                 " quotes before=" + str(f.before) + " then after=" + str(f.after),
           nlohmann::json{{"before", f.before}, {"after", f.after}}, answers);
}
constexpr CheckDef kCountsReal{"s4.counts_real",
                               When::Always,
                               "{fastfail_file}: before and after are {count_path} answers from the server",
                               s4_counts_real,
                               {after(kFastfailContract), kRecord}};

void s4_before_at_trip(CheckVerdict& v, const Inputs& in, bool) {
  // Taken after step 3: the count then is every lab request up to the end of the burst (the
  // /fast and the /always500 that reached the server in a correct run). A breaker that never
  // opened has no such moment.
  const FastFail& f = *in.fastfail.value;
  if (never_left_closed(in))
    return v.skip(std::string(kNeverOpened) + " (nor does " + in.spec.files.transitions +
                  "), so there was no moment it opened to take before at");
  if (!in.run->trip)
    return v.fail("no " + kFailingPath + " reached the server, so the record shows no moment the breaker opened");
  // The count includes what reached a kept server before the run.
  const auto expected_before = static_cast<std::int64_t>(in.run->before_run + *in.run->trip) + 1;
  v.expect(f.before == expected_before,
           "before=" + str(f.before) + ", but " + str(expected_before) +
               " lab requests had reached the server when the breaker opened",
           expected_before, f.before);
}
constexpr CheckDef kBeforeAtTrip{"s4.before_at_trip",
                                 When::Always,
                                 "{fastfail_file}: before was taken after the breaker opened",
                                 s4_before_at_trip,
                                 {after(kFastfailContract), kRecord}};

void s4_none_reached(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  // Calls that reached the server while OPEN: the burst's /always500 after the trip, where the
  // stamp and the record place it (placement.h; without a stamp, none is counted there: step 3
  // names both readings), and every /always500 after the burst (the trials are /fast, so none
  // belongs anywhere else in the script).
  const std::size_t in_burst = in.trip ? run.first_burst_500 - in.trip->reading : 0;
  const std::size_t after_burst = run.always500 - run.first_burst_500;
  std::string message =
      std::to_string(in_burst + after_burst) + " call(s) reached the server while the breaker was OPEN";
  if (in_burst > 0)
    message += ": " + std::to_string(in_burst) + " " + kFailingPath + " after the one that opened it (" +
               in.spec.files.transitions + "'s CLOSED->OPEN)";
  if (after_burst > 0)
    message +=
        std::string(in_burst > 0 ? ", and " : ": ") + std::to_string(after_burst) + " of the calls meant to be refused";
  v.expect(in_burst + after_burst == 0, message, 0, static_cast<std::uint64_t>(in_burst + after_burst));
}
constexpr CheckDef kNoneReached{"s4.none_reached",
                                When::Always,
                                "no call reached the server while the breaker was OPEN",
                                s4_none_reached,
                                {kRecord}};

constexpr const CheckDef* kStep[] = {&kStateContract, &kState,      &kFastfailContract, &kBlocked,    &kBeforeAfter,
                                     &kMaxMs,         &kCountsReal, &kBeforeAtTrip,     &kNoneReached};

}  // namespace

std::span<const CheckDef* const> step4_checks() noexcept { return kStep; }

}  // namespace cb::grade

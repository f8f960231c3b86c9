// Step 7: 4xx answers are not failures.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayBadAll = "{got} {bad_path} reached the server, expected all {bad}";

constexpr CheckDef kIgnoreContract{
    "s7.ignore_contract", When::Always, "{ignore_file} follows the contract", nullptr, {}, FileRole::Ignore};

void s7_state(CheckVerdict& v, const Inputs& in, bool) { expect_state(v, *in.ignore.value, "CLOSED"); }
constexpr CheckDef kState{
    "s7.state", When::Always, "{ignore_file}: \"state\" is \"CLOSED\"", s7_state, {after(kIgnoreContract)}};

void s7_failures(CheckVerdict& v, const Inputs& in, bool) {
  const auto failures = in.ignore.value->failures;
  v.expect(failures == 0,
           "failures=" + str(failures) +
               ": a 400 is the caller's mistake, not the dependency's; 4xx must not count as failures",
           0, failures);
}
constexpr CheckDef kFailures{
    "s7.failures", When::Always, "{ignore_file}: \"failures\" is 0", s7_failures, {after(kIgnoreContract)}};

void s7_bad_all(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  const auto bad = static_cast<std::size_t>(in.spec.script.bad);
  std::string message = in.spec.fill(kSayBadAll, {{"got", std::to_string(run.bad)}});
  if (run.bad < bad && run.bad > 0)
    message += ": the breaker refused the rest, so it opened on 400s (4xx counted as failures)";
  v.expect(run.bad == bad, message, in.spec.script.bad, static_cast<std::uint64_t>(run.bad));
}
constexpr CheckDef kBadAll{
    "s7.bad_all", When::Always, "the server received all {bad} {bad_path}", s7_bad_all, {kRecord}};

constexpr const CheckDef* kStep[] = {&kIgnoreContract, &kState, &kFailures, &kBadAll};

}  // namespace

std::span<const CheckDef* const> step7_checks() noexcept { return kStep; }

}  // namespace cb::grade

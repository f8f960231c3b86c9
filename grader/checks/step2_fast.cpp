// Step 2: the calls that leave the breaker CLOSED.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayFailures = "{state_file}: \"failures\" is {got} after {fast} successful calls";
constexpr std::string_view kSayFastFirst =
    "{got} {fast_path} answered 200 reached the server before the first {fail_path}";
constexpr std::string_view kSayWindow = "{state_file}: \"window_size\" is {got}; the lab's window is {window} calls";

constexpr CheckDef kStateContract{
    "s2.state_contract", When::JustAfter, "{state_file} follows the contract", nullptr, {}, FileRole::State};

void s2_state(CheckVerdict& v, const Inputs& in, bool) { expect_state(v, *in.state.value, "CLOSED"); }
constexpr CheckDef kState{
    "s2.state", When::JustAfter, "{state_file}: \"state\" is \"CLOSED\"", s2_state, {after(kStateContract)}};

void s2_failures(CheckVerdict& v, const Inputs& in, bool) {
  const auto failures = in.state.value->failures;
  v.expect(failures == 0, in.spec.fill(kSayFailures, {{"got", str(failures)}}), 0, failures);
}
constexpr CheckDef kFailures{
    "s2.failures", When::JustAfter, "{state_file}: \"failures\" is 0", s2_failures, {after(kStateContract)}};

void s2_window(CheckVerdict& v, const Inputs& in, bool) {
  const auto window = in.state.value->window_size;
  v.expect(window == in.spec.rules.window, in.spec.fill(kSayWindow, {{"got", str(window)}}), in.spec.rules.window,
           window);
}
constexpr CheckDef kWindow{"s2.window",
                           When::JustAfter,
                           "{state_file}: \"window_size\" is {window}",
                           s2_window,
                           {after(kStateContract), kNumbers}};

void s2_fast_first(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  const auto fast = run.fast_before_first_500;
  std::string message = in.spec.fill(kSayFastFirst, {{"got", std::to_string(fast)}});
  if (fast == 0 && run.lab.empty())
    message = "the server saw no lab request at all: were the files written without calling it?";
  if (run.other_before_first_500 > 0)
    message += "; and " + std::to_string(run.other_before_first_500) + " other request(s) before it";
  v.expect(fast == static_cast<std::size_t>(in.spec.script.fast) && run.other_before_first_500 == 0, message,
           in.spec.script.fast, static_cast<std::uint64_t>(fast));
}
constexpr CheckDef kFastFirst{
    "s2.fast_first", When::Always, "the server received {fast} {fast_path} first", s2_fast_first, {kRecord}};

constexpr const CheckDef* kStep[] = {&kStateContract, &kState, &kFailures, &kWindow, &kFastFirst};

}  // namespace

std::span<const CheckDef* const> step2_checks() noexcept { return kStep; }

}  // namespace cb::grade

// Step 3: the trip.
//
// Judged at the trip point, which the spec works out from the numbers. The lab's: after 3
// successes, failure 1 is 1 of 4 calls (under the minimum of 5, not judged), failure 2 is 2 of
// 5 = 40%, failure 3 is 3 of 6 = 50% >= 50%: it opens there, and the 4th and 5th are refused.
// What reached the server after the trip is step 4's rule (nothing reaches the server while
// OPEN), so a breaker that opened on the 3rd but let the 4th through passes here and fails
// there. The log's CLOSED->OPEN stamp, read with the whole record (placement.h), tells those
// apart from a breaker that opened late; without one, the message names both. A lab run is one
// run: it shows where the breaker opened, never why, so the messages say what it did against
// what the rules do and leave the mechanism (a > for >=, a count in a row) to the conformance
// part, whose experiments can show one.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayFailures =
    "{state_file}: \"failures\" is {got} in OPEN: the window that opened it held {trip_failures} failures of {trip_calls} calls (report those, or 0 if opening empties the window); a refused call is not a failure";
constexpr std::string_view kSayTripDigit =
    "(The stamp's last digit alone would allow the {trip_at_nth}, but then the {trip_next_nth} reached the server while OPEN and the next did not: the record reads the {got_nth}.)";
constexpr std::string_view kSayTripEarly =
    "it opened before the rules do (at {trip_failures} of {trip_calls} calls, {failure_rate}%, with at least {minimum_calls} in the window)";
constexpr std::string_view kSayTripEitherGt =
    "either it stayed CLOSED at {trip_failures} of {trip_calls} (exactly {failure_rate}%, where the rules open) and opened on the {trip_next_nth}, or it opened on the {trip_at_nth} and let the {trip_next_nth} through while OPEN; a stamped {transitions_file} would tell which";
constexpr std::string_view kSayTripEitherNever =
    "either it never opened, or it opened and let calls through while OPEN; a stamped {transitions_file} would tell which";
constexpr std::string_view kSayTripGt =
    "it stayed CLOSED at {trip_failures} of {trip_calls}, exactly {failure_rate}%, where the rules open (at or over the threshold), and opened on the next failure";
constexpr std::string_view kSayTripLate =
    "it opened later than the rules do (at {trip_failures} of {trip_calls} calls, {failure_rate}%)";
constexpr std::string_view kSayTripStamped =
    "{transitions_file} stamps CLOSED->OPEN after the server answered the {got_nth} {fail_path}, expected the {trip_at_nth}";
constexpr std::string_view kSayTripUnstamped =
    "{got} {fail_path} reached the server before the breaker refused one, expected {trip_at} of the {burst}";

constexpr CheckDef kStateContract{
    "s3.state_contract", When::JustAfter, "{state_file} follows the contract", nullptr, {}, FileRole::State};

void s3_state(CheckVerdict& v, const Inputs& in, bool) { state_just_after(v, in, step(StepRole::Trip), "OPEN"); }
constexpr CheckDef kState{
    "s3.state", When::JustAfter, "{state_file}: \"state\" is \"OPEN\"", s3_state, {after(kStateContract)}};

void s3_failures(CheckVerdict& v, const Inputs& in, bool) {
  // OPEN records nothing: what it reports is the window that opened it, or nothing if the
  // breaker empties its window on opening. Anything else counted what came after, the refused
  // calls among them.
  const auto failures = in.state.value->failures;
  const int want = in.spec.trip_failures;
  v.expect(failures == want || failures == 0, in.spec.fill(kSayFailures, {{"got", str(failures)}}),
           nlohmann::json::array({0, want}), failures);
}
constexpr CheckDef kFailures{"s3.failures",
                             When::JustAfter,
                             "{state_file}: \"failures\" is the window's {trip_failures} that opened it (or 0)",
                             s3_failures,
                             {after(kStateContract), kNumbers}};

void s3_trip(CheckVerdict& v, const Inputs& in, bool) {
  const LabSpec& spec = in.spec;
  const auto n = in.run->first_burst_500;
  const auto want = static_cast<std::size_t>(spec.trip_at);
  // Where a breaker comparing with > would open, when the numbers tell it apart from >=.
  const auto gt = static_cast<std::size_t>(spec.trip_at_gt);
  if (const auto& place = in.trip) {
    const std::size_t after = place->reading;
    if (after == want) return v.pass(spec.trip_at, static_cast<std::uint64_t>(n));
    std::string message = spec.fill(kSayTripStamped, {{"got_nth", nth(after)}});
    if (after == gt)
      message += ": " + spec.fill(kSayTripGt);
    else if (after > want)
      message += ": " + spec.fill(kSayTripLate);
    else
      message += ": " + spec.fill(kSayTripEarly);
    if (place->low <= want && want < after) message += ". " + spec.fill(kSayTripDigit, {{"got_nth", nth(after)}});
    return v.fail(message, spec.trip_at, static_cast<std::uint64_t>(after));
  }
  std::string message = spec.fill(kSayTripUnstamped, {{"got", std::to_string(n)}});
  if (n == want + 1 && gt == want + 1)
    message += ": " + spec.fill(kSayTripEitherGt);
  else if (n == static_cast<std::size_t>(spec.script.burst))
    message += ": " + spec.fill(kSayTripEitherNever);
  else if (n > want)
    message += ": calls kept reaching the server after it should have opened";
  else if (n > 0)
    message += ": " + spec.fill(kSayTripEarly);
  else
    message = "no " + kFailingPath + " reached the server";
  v.expect(n == want, message, spec.trip_at, static_cast<std::uint64_t>(n));
}
constexpr CheckDef kTrip{
    "s3.trip", When::Always, "the breaker opened on the {trip_at_nth} {fail_path}", s3_trip, {kRecord, kNumbers}};

constexpr const CheckDef* kStep[] = {&kStateContract, &kState, &kFailures, &kTrip};

}  // namespace

std::span<const CheckDef* const> step3_checks() noexcept { return kStep; }

}  // namespace cb::grade

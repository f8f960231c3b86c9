#pragma once
// The lab's breaker rules as the grader holds them, independent of the project's engine (the
// grader does not link it): the reference a student's breaker is compared with, call by call,
// when it is driven with generated traces. Pure: no clock, no I/O; time is the call's own t.
//
// The rules are docs/CONTRACTS.md's ("The rules a program is compared with"), which the students
// read and this code follows, word for word; what the handout leaves open is decided there.
// Opening is decided by the call that completes, at its t. A call is let through (or not) when it
// begins and counted when it ends; the protocol's old lines are calls that begin and end at one
// t, and its calls in flight begin and end apart, with others begun and ended between: that is
// where HALF_OPEN's cap on trials and a result that comes back too late are decided.

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <string_view>

#include "cb/grade/lab_spec.h"

namespace cb::grade::conformance {

struct Settings {
  int window = 0;
  int minimum_calls = 0;
  int failure_rate_percent = 0;
  double wait_in_open_ms = 0;
  int permitted_in_half_open = 0;
};

// The lab's own settings, from its spec.
[[nodiscard]] Settings lab_settings(const LabSpec& spec = lab_spec());

enum class State : std::uint8_t { Closed, Open, HalfOpen };
enum class Decision : std::uint8_t { Permitted, Rejected };

// A call in flight, as the trace numbers it.
using CallId = std::uint32_t;

// How a line of a trace takes part in its call: the whole call at one t (the protocol's first
// form), or only its beginning or its end (calls in flight, with other lines between the two).
enum class Phase : std::uint8_t { Whole, Begin, End };

struct Call {
  double t_ms = 0;
  int status = 200;  // ignored when timed_out, and for a Begin
  bool timed_out = false;
  Phase phase = Phase::Whole;
  CallId id = 0;  // a Begin's and its End's
};

// A 4xx: the caller's mistake, neither a success nor a failure.
[[nodiscard]] constexpr bool is_4xx(const Call& c) noexcept {
  return !c.timed_out && c.status >= 400 && c.status < 500;
}

// Which rule decided a call: what a divergence there is about.
enum class Rule : std::uint8_t {
  NotJudgedYet,         // CLOSED, counted, the window below the minimum
  BelowThreshold,       // CLOSED, judged, the rate under the threshold
  Tripped,              // CLOSED -> OPEN: the rate reached the threshold
  NotCounted,           // a 4xx (in CLOSED; in HALF_OPEN it also gives its slot back)
  RejectedInWait,       // OPEN, before the wait's end
  FirstTrial,           // OPEN -> HALF_OPEN: at or after the wait's end
  TrialCounted,         // HALF_OPEN, a trial counted, not yet all
  ClosedAfterTrials,    // HALF_OPEN -> CLOSED: the trials' rate under the threshold
  ReopenedAfterTrials,  // HALF_OPEN -> OPEN: the trials' rate reached it
  // Only where calls are in flight:
  Admitted,       // CLOSED: a call begins, let through
  TrialAdmitted,  // HALF_OPEN: a trial begins, a permit free
  TrialCap,       // HALF_OPEN: every permit taken by trials in flight or counted: refused
  LateResult,     // a result of a call let through before the state last changed: not counted
};

struct Step {
  Decision decision = Decision::Permitted;
  State state = State::Closed;  // right after the call
  Rule rule = Rule::NotJudgedYet;
};

class Model {
 public:
  explicit Model(const Settings& s) : s_(s) {}
  // A call that begins and ends at c.t_ms: the decision at its beginning, the state after its end.
  [[nodiscard]] Step call(const Call& c);
  // A call begins at t_ms: let through or refused, and the state after that.
  [[nodiscard]] Step begin(CallId id, double t_ms);
  // The call `id`, let through by begin(), ends with c (at c.t_ms): the state after it is
  // counted, or not (LateResult). An id never let through is the caller's bug: not counted.
  [[nodiscard]] Step end(CallId id, const Call& c);
  // A line of a trace, whatever its phase: call(), begin() or end(). An End's decision is always
  // Permitted (its call was let through when it began); what it is compared on is the state.
  [[nodiscard]] Step step(const Call& c);
  [[nodiscard]] State state() const noexcept { return state_; }
  // OPEN with its wait over at t_ms: no call has come to find it HALF_OPEN yet, so an end line
  // here may be answered either way (a breaker whose state follows its clock says HALF_OPEN).
  [[nodiscard]] bool wait_over(double t_ms) const noexcept {
    return state_ == State::Open && t_ms >= opened_at_ + s_.wait_in_open_ms;
  }

 private:
  enum class Kind : std::uint8_t { Success, Failure, Ignored };
  [[nodiscard]] static Kind kind_of(const Call& c) noexcept;
  [[nodiscard]] bool reaches(int failures, int calls) const noexcept;
  void move_to(State s, double t_ms);

  Settings s_;
  State state_ = State::Closed;
  std::deque<bool> window_;  // CLOSED: recent counted calls, true for a failure
  double opened_at_ = 0;
  int admitted_ = 0;  // HALF_OPEN: permits taken, by trials in flight or counted
  int trials_ = 0;    // HALF_OPEN: trials counted
  int trial_failures_ = 0;
  // A state's generation: a result counts only in the generation its call was let through in.
  std::uint64_t generation_ = 0;
  std::unordered_map<CallId, std::uint64_t> in_flight_;  // let through, not yet ended
  CallId next_own_id_ = 0x8000'0000u;                    // call()'s, apart from a trace's ids
};

[[nodiscard]] std::string_view to_string(State s) noexcept;     // "CLOSED", "OPEN", "HALF_OPEN"
[[nodiscard]] std::string_view to_string(Decision d) noexcept;  // "permitted", "rejected"
// What a program that disagrees at this call most likely got wrong, for a person.
[[nodiscard]] std::string_view describe(Rule r) noexcept;
// The rule's stable id, for tools: "minimum_calls", "trip_at_threshold", ...
[[nodiscard]] std::string_view id(Rule r) noexcept;

}  // namespace cb::grade::conformance

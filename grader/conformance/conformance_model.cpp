#include "cb/grade/conformance_model.h"

namespace cb::grade::conformance {

Settings lab_settings(const LabSpec& spec) {
  return {spec.rules.window, spec.rules.minimum_calls, static_cast<int>(spec.rules.failure_rate), spec.rules.wait_ms,
          spec.rules.trials};
}

Model::Kind Model::kind_of(const Call& c) noexcept {
  if (c.timed_out || c.status >= 500) return Kind::Failure;
  if (is_4xx(c)) return Kind::Ignored;
  return Kind::Success;
}

// Integers only: 3 of 6 at 50% is exactly the threshold, and floating point must not decide it.
bool Model::reaches(int failures, int calls) const noexcept {
  return static_cast<long long>(failures) * 100 >= static_cast<long long>(s_.failure_rate_percent) * calls;
}

void Model::move_to(State s, double t_ms) {
  state_ = s;
  ++generation_;
  if (s == State::Open) opened_at_ = t_ms;
  if (s == State::HalfOpen) admitted_ = trials_ = trial_failures_ = 0;
  window_.clear();  // opening empties it, and CLOSED is entered only with an empty one
}

Step Model::call(const Call& c) {
  const CallId id = next_own_id_++;
  const Step admitted = begin(id, c.t_ms);
  if (admitted.decision == Decision::Rejected) return admitted;
  Step ended = end(id, c);
  ended.decision = Decision::Permitted;
  return ended;
}

Step Model::step(const Call& c) {
  switch (c.phase) {
    case Phase::Whole: return call(c);
    case Phase::Begin: return begin(c.id, c.t_ms);
    case Phase::End: return end(c.id, c);
  }
  return call(c);
}

Step Model::begin(CallId id, double t_ms) {
  if (state_ == State::Open) {
    if (t_ms < opened_at_ + s_.wait_in_open_ms) return {Decision::Rejected, State::Open, Rule::RejectedInWait};
    move_to(State::HalfOpen, t_ms);
  }
  Rule rule = Rule::Admitted;
  if (state_ == State::HalfOpen) {
    if (admitted_ >= s_.permitted_in_half_open) return {Decision::Rejected, State::HalfOpen, Rule::TrialCap};
    rule = admitted_ == 0 && trials_ == 0 ? Rule::FirstTrial : Rule::TrialAdmitted;
    ++admitted_;
  }
  in_flight_[id] = generation_;
  return {Decision::Permitted, state_, rule};
}

Step Model::end(CallId id, const Call& c) {
  const auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return {Decision::Permitted, state_, Rule::LateResult};
  const bool late = it->second != generation_;
  in_flight_.erase(it);
  if (late) return {Decision::Permitted, state_, Rule::LateResult};
  const Kind kind = kind_of(c);
  if (state_ == State::HalfOpen) {
    if (kind == Kind::Ignored) {
      --admitted_;  // the trial told nothing: its permit is free again
      return {Decision::Permitted, State::HalfOpen, Rule::NotCounted};
    }
    ++trials_;
    if (kind == Kind::Failure) ++trial_failures_;
    if (trials_ < s_.permitted_in_half_open) {
      return {Decision::Permitted, State::HalfOpen, trials_ == 1 ? Rule::FirstTrial : Rule::TrialCounted};
    }
    if (reaches(trial_failures_, trials_)) {
      move_to(State::Open, c.t_ms);
      return {Decision::Permitted, State::Open, Rule::ReopenedAfterTrials};
    }
    move_to(State::Closed, c.t_ms);
    return {Decision::Permitted, State::Closed, Rule::ClosedAfterTrials};
  }
  // CLOSED (a result in OPEN is always late: its call was let through before it opened)
  if (kind == Kind::Ignored) return {Decision::Permitted, State::Closed, Rule::NotCounted};
  window_.push_back(kind == Kind::Failure);
  while (static_cast<int>(window_.size()) > s_.window) window_.pop_front();
  const int calls = static_cast<int>(window_.size());
  if (calls < s_.minimum_calls) return {Decision::Permitted, State::Closed, Rule::NotJudgedYet};
  int failures = 0;
  for (bool f : window_) failures += f ? 1 : 0;
  if (!reaches(failures, calls)) return {Decision::Permitted, State::Closed, Rule::BelowThreshold};
  move_to(State::Open, c.t_ms);
  return {Decision::Permitted, State::Open, Rule::Tripped};
}

std::string_view to_string(State s) noexcept {
  switch (s) {
    case State::Closed: return "CLOSED";
    case State::Open: return "OPEN";
    case State::HalfOpen: return "HALF_OPEN";
  }
  return "?";
}

std::string_view to_string(Decision d) noexcept { return d == Decision::Permitted ? "permitted" : "rejected"; }

std::string_view describe(Rule r) noexcept {
  switch (r) {
    case Rule::NotJudgedYet: return "judged before the window held the minimum number of calls";
    case Rule::BelowThreshold: return "opened though the calls in the window failed under the threshold";
    case Rule::Tripped: return "did not open when the failure rate in the window reached the threshold";
    case Rule::NotCounted: return "answered a 4xx, which the rules do not count, as if it had counted it";
    case Rule::RejectedInWait: return "let a call through before the wait in OPEN was over";
    case Rule::FirstTrial: return "did not let the first call at or after the end of the wait through as a trial";
    case Rule::TrialCounted: return "judged the trials before all the permitted ones were made";
    case Rule::ClosedAfterTrials: return "did not close after the permitted trials succeeded enough";
    case Rule::ReopenedAfterTrials: return "did not reopen when the trials' failure rate reached the threshold";
    case Rule::Admitted: return "refused a call while CLOSED";
    case Rule::TrialAdmitted: return "refused a trial while HALF_OPEN had a permit free";
    case Rule::TrialCap: return "let more trials through in HALF_OPEN than it permits at once";
    case Rule::LateResult:
      return "counted a result that came back after the state its call was let through in had changed";
  }
  return "";
}

std::string_view id(Rule r) noexcept {
  switch (r) {
    case Rule::NotJudgedYet: return "minimum_calls";
    case Rule::BelowThreshold: return "below_threshold";
    case Rule::Tripped: return "trip_at_threshold";
    case Rule::NotCounted: return "4xx_not_counted";
    case Rule::RejectedInWait: return "rejected_in_wait";
    case Rule::FirstTrial: return "first_trial_at_wait_end";
    case Rule::TrialCounted: return "trials_judged_together";
    case Rule::ClosedAfterTrials: return "closed_after_trials";
    case Rule::ReopenedAfterTrials: return "reopened_after_trials";
    case Rule::Admitted: return "closed_permits";
    case Rule::TrialAdmitted: return "trial_permitted";
    case Rule::TrialCap: return "half_open_cap";
    case Rule::LateResult: return "late_result";
  }
  return "";
}

}  // namespace cb::grade::conformance

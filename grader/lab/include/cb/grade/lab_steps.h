#pragma once
// The lab's eight steps by what each does. The grader's code names a step by its role, never by
// its place: the place is the spec's (scenarios/lab.json lists the steps in this order, by these
// ids, and a spec that does not is refused), so a reader of `step(StepRole::Trip)` knows what is
// meant where a `3` would have to be looked up.

#include <array>
#include <string_view>

namespace cb::grade {

enum class StepRole : int { Server = 1, Fast, Trip, Refused, Cooldown, Trials, Ignore4xx, Log };

// The steps the grader has checks for: a spec may add steps for the runner, not for the grader.
inline constexpr int kGradedSteps = 8;

// The step's number in the lab's script, from 1.
[[nodiscard]] constexpr int step(StepRole role) noexcept { return static_cast<int>(role); }
// Its place in the spec's list of steps, from 0.
[[nodiscard]] constexpr std::size_t step_index(StepRole role) noexcept { return static_cast<std::size_t>(role) - 1; }

// The ids the spec gives the steps, in their order.
inline constexpr std::array<std::string_view, kGradedSteps> kStepIds{"server",   "fast",   "trip",      "refused",
                                                                     "cooldown", "trials", "ignore4xx", "log"};

}  // namespace cb::grade

// The spellings of the engine's enums, in one place.
#include <array>
#include <utility>

#include "cb/breaker/breaker.h"
#include "cb/breaker/outcome.h"
#include "cb/breaker/state.h"
#include "cb/breaker/transition.h"

namespace cb {
namespace {

constexpr std::array kStates{
    std::pair{State::Closed, std::string_view{"CLOSED"}},
    std::pair{State::Open, std::string_view{"OPEN"}},
    std::pair{State::HalfOpen, std::string_view{"HALF_OPEN"}},
};
constexpr std::array kModes{
    std::pair{Mode::Normal, std::string_view{"normal"}},
    std::pair{Mode::ForcedOpen, std::string_view{"forced-open"}},
    std::pair{Mode::ForcedClosed, std::string_view{"forced-closed"}},
    std::pair{Mode::Disabled, std::string_view{"disabled"}},
};
constexpr std::array kReasons{
    std::pair{Reason::ConsecutiveFailures, std::string_view{"consecutive failures"}},
    std::pair{Reason::FailureRate, std::string_view{"failure rate"}},
    std::pair{Reason::SlowCallRate, std::string_view{"slow-call rate"}},
    std::pair{Reason::CooldownElapsed, std::string_view{"cool-down elapsed"}},
    std::pair{Reason::TrialFailed, std::string_view{"trial failed"}},
    std::pair{Reason::TrialFailureRate, std::string_view{"trial failure rate"}},
    std::pair{Reason::TrialSlowCallRate, std::string_view{"trial slow-call rate"}},
    std::pair{Reason::HalfOpenTimeout, std::string_view{"half-open max wait"}},
    std::pair{Reason::TrialsSucceeded, std::string_view{"trials succeeded"}},
    std::pair{Reason::ForcedOpen, std::string_view{"forced open"}},
    std::pair{Reason::ForcedClosed, std::string_view{"forced closed"}},
    std::pair{Reason::Disabled, std::string_view{"disabled"}},
    std::pair{Reason::Reset, std::string_view{"reset"}},
};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) noexcept {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text) noexcept {
  for (const auto& [e, name] : table) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(State s) noexcept { return name_of(kStates, s); }
std::optional<State> parse_state(std::string_view text) noexcept { return value_of(kStates, text); }
std::string_view to_string(Mode m) noexcept { return name_of(kModes, m); }
std::optional<Mode> parse_mode(std::string_view text) noexcept { return value_of(kModes, text); }

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::Success: return "success";
    case Verdict::Failure: return "failure";
    case Verdict::Ignored: return "ignored";
  }
  return "?";
}

std::string_view to_string(Decision d) noexcept {
  switch (d) {
    case Decision::Permitted: return "permitted";
    case Decision::RefusedOpen: return "refused-open";
    case Decision::RefusedHalfOpenFull: return "refused-half-open-full";
    case Decision::RefusedForcedOpen: return "refused-forced-open";
  }
  return "?";
}

std::string_view to_string(Reason r) noexcept { return name_of(kReasons, r); }
std::optional<Reason> parse_reason(std::string_view text) noexcept { return value_of(kReasons, text); }

}  // namespace cb

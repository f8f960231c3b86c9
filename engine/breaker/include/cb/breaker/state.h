#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cb {

// In a circuit, closed means current flows: a CLOSED breaker lets calls through.
enum class State : std::uint8_t { Closed, Open, HalfOpen };

// Manual overrides. Normal is the state machine; the others pin it until reset().
enum class Mode : std::uint8_t {
  Normal,
  ForcedOpen,    // refuses every call, whatever the time
  ForcedClosed,  // lets every call through and keeps metrics, but never trips
  Disabled,      // lets every call through and records nothing
};

// "CLOSED", "OPEN", "HALF_OPEN": the spelling of the lab's files and transitions.log.
[[nodiscard]] std::string_view to_string(State s) noexcept;
[[nodiscard]] std::optional<State> parse_state(std::string_view text) noexcept;
[[nodiscard]] std::string_view to_string(Mode m) noexcept;
[[nodiscard]] std::optional<Mode> parse_mode(std::string_view text) noexcept;

}  // namespace cb

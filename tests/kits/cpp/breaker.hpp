// The reference rules for the C++ kit (not shipped in it): kit + this file scores 8/8.
#pragma once

#include <chrono>
#include <ctime>
#include <deque>
#include <optional>
#include <string>
#include <vector>

enum class Outcome { Success, Failure, Ignored };

inline Outcome classify(std::optional<int> status) {
  if (!status || *status >= 500) return Outcome::Failure;
  if (*status >= 400) return Outcome::Ignored;  // the caller's mistake, not the server's
  return Outcome::Success;
}

class Breaker {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr int window_size = 10;
  static constexpr int minimum_calls = 5;
  static constexpr double failure_rate = 0.5;
  static constexpr std::chrono::milliseconds wait_in_open{3000};
  static constexpr int permitted_in_half_open = 3;

  std::string state = "CLOSED";
  std::deque<bool> window;
  std::vector<std::string> transitions;
  Clock::time_point opened_at{};
  int admitted = 0;
  std::vector<bool> trials;

  int failures() const {
    int n = 0;
    if (state == "HALF_OPEN") {
      for (bool failed : trials) n += failed ? 1 : 0;
    } else {
      for (bool failed : window) n += failed ? 1 : 0;
    }
    return n;
  }

  void move_to(const std::string& to) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&secs, &utc);
    char stamp[40];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    char full[48];
    std::snprintf(full, sizeof full, "%s.%03dZ", stamp, static_cast<int>(ms));
    transitions.push_back(std::string(full) + " " + state + "->" + to);
    state = to;
  }

  void open() {
    move_to("OPEN");
    opened_at = Clock::now();
  }

  bool allow() {
    if (state == "OPEN") {
      if (Clock::now() - opened_at < wait_in_open) return false;
      move_to("HALF_OPEN");
      admitted = 0;
      trials.clear();
    }
    if (state == "HALF_OPEN") {
      if (admitted >= permitted_in_half_open) return false;
      ++admitted;
    }
    return true;
  }

  void record(Outcome outcome) {
    if (outcome == Outcome::Ignored) {
      if (state == "HALF_OPEN") --admitted;  // the trial told nothing; another may go
      return;
    }
    const bool failed = outcome == Outcome::Failure;
    if (state == "HALF_OPEN") {
      trials.push_back(failed);
      if (static_cast<int>(trials.size()) == permitted_in_half_open) {
        int n = 0;
        for (bool f : trials) n += f ? 1 : 0;
        if (n >= failure_rate * static_cast<double>(trials.size())) {
          open();
        } else {
          move_to("CLOSED");
          window.clear();
        }
      }
      return;
    }
    window.push_back(failed);
    if (window.size() > window_size) window.pop_front();
    if (static_cast<int>(window.size()) >= minimum_calls && failures() >= failure_rate * static_cast<double>(window.size()))
      open();
  }
};

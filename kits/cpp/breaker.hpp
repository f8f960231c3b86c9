// Your circuit breaker. lab.cpp runs the lab's steps through it; the rules are yours.
//
// Everything you write is in the three places marked YOUR PART. The numbers are the lab's.
#pragma once

#include <chrono>
#include <ctime>
#include <deque>
#include <optional>
#include <string>
#include <vector>

enum class Outcome { Success, Failure, Ignored };

// How an answer counts. status is empty when no answer came (refused, reset, timed out).
// YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
// server's fault, and which are the caller's?
inline Outcome classify(std::optional<int> status) {
  return status == 200 ? Outcome::Success : Outcome::Failure;
}

class Breaker {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr int window_size = 10;            // the last 10 calls are judged...
  static constexpr int minimum_calls = 5;           // ...once there are at least 5 of them...
  static constexpr double failure_rate = 0.5;       // ...and it opens when at least half failed
  static constexpr std::chrono::milliseconds wait_in_open{3000};  // OPEN refuses for this long
  static constexpr int permitted_in_half_open = 3;  // HALF_OPEN's trial calls, judged together

  std::string state = "CLOSED";
  std::deque<bool> window;               // the recent results, true for a failure
  std::vector<std::string> transitions;  // transitions.log's lines, written by move_to
  // Add what else your rules need to remember (when it opened, the trials so far, ...).

  // The failures state.json reports: those in the window.
  int failures() const {
    int n = 0;
    for (bool failed : window) n += failed ? 1 : 0;
    return n;
  }

  // Every change of state goes through here, so transitions.log has it, stamped.
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

  // May this call go to the server? false refuses it at once (it must not reach the server).
  // YOUR PART (steps 4-6): as shipped, every call goes through.
  bool allow() { return true; }

  // The outcome of a call allow() let through.
  // YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
  void record(Outcome outcome) {
    window.push_back(outcome == Outcome::Failure);
    if (window.size() > window_size) window.pop_front();
  }
};

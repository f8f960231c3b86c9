// Your circuit breaker. lab.cpp runs the lab's steps through it (by breaker.cpp); the rules are
// yours. Settings, Outcome and Permit are in harness.hpp.
//
// Everything you write is in the three places marked YOUR PART. The numbers are the lab's.
#pragma once

#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"

// How an answer counts. status is empty when no answer came (refused, reset, timed out).
// YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
// server's fault, and which are the caller's?
inline Outcome classify(std::optional<int> status) { return status == 200 ? Outcome::Success : Outcome::Failure; }

// Milliseconds on a monotonic clock.
inline double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Breaker {
 public:
  explicit Breaker(Settings s = {}, std::function<double()> clock = steady_ms) : settings(s), clock(std::move(clock)) {}

  Settings settings;              // read the numbers from here, never write them into the rules
  std::function<double()> clock;  // milliseconds, monotonic (replay.cpp gives the trace's own times)
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
    // To the microsecond: the grader places each stamp among the server's requests, which it
    // stamps to the microsecond.
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm utc{};
    gmtime_r(&secs, &utc);
    char stamp[40];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    char full[64];  // the stamp (up to 39), ".", six digits, "Z": GCC checks the worst case
    std::snprintf(full, sizeof full, "%s.%06dZ", stamp, static_cast<int>(us));
    transitions.push_back(std::string(full) + " " + state + "->" + to);
    state = to;
  }

  // May this call go to the server, and with which permit? std::nullopt refuses it at once (it
  // must not reach the server).
  // YOUR PART (steps 4-6): as shipped, every call goes through.
  std::optional<Permit> allow() { return Permit{0}; }

  // The outcome of a call allow() let through, with the permit allow() gave it.
  // YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
  void record(Outcome outcome, Permit /*permit*/) {
    window.push_back(outcome == Outcome::Failure);
    if (static_cast<int>(window.size()) > settings.window_size) window.pop_front();
  }
};

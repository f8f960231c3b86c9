// The breaker as lab.cpp and replay.cpp see it. They are compiled against this file alone, never
// against breaker.hpp, so their objects do not change when your rules do: an edit of breaker.hpp
// compiles breaker.cpp again and nothing else (build.sh). Nothing to change here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

enum class Outcome { Success, Failure, Ignored };

// The settings, given by lab.cpp (lab-settings.json) or replay.cpp (each trace's own).
struct Settings {
  int window_size = 0;             // the last window_size calls are judged...
  int minimum_calls = 0;           // ...once there are at least minimum_calls of them...
  int failure_rate_percent = 0;    // ...and it opens when failures x 100 >= failure_rate_percent x calls
  double wait_in_open_ms = 0;      // OPEN refuses every call for this long, then HALF_OPEN
  int permitted_in_half_open = 0;  // HALF_OPEN's trial calls, judged together
};

// What allow() gives a call it lets through; the caller gives it back to record() with the
// call's outcome. Calls may overlap (cb-grade --conformance begins several before the first
// ends), so a permit is how record() tells a result that comes back after the state has changed
// (it must count nothing) from one of the state it was let through in.
using Permit = std::uint64_t;

class Breaker;  // yours, in breaker.hpp

// One Breaker of breaker.hpp, reached through breaker.cpp.
class BreakerHandle {
 public:
  // `clock`: milliseconds, monotonic; empty: the breaker's own (a steady clock).
  explicit BreakerHandle(Settings settings, std::function<double()> clock = {});
  BreakerHandle(BreakerHandle&&) noexcept;
  BreakerHandle& operator=(BreakerHandle&&) noexcept;
  ~BreakerHandle();

  std::optional<Permit> allow();
  void record(Outcome outcome, Permit permit);
  const std::string& state() const;
  int failures() const;
  const Settings& settings() const;
  const std::vector<std::string>& transitions() const;

 private:
  std::unique_ptr<Breaker> breaker_;
};

// breaker.hpp's classify(): how an answer counts (no status: no answer came).
Outcome classify_answer(std::optional<int> status);

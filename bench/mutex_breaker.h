#pragma once
// The common design, as gobreaker has it: one mutex around the counts, and the clock read on
// every call (before it, to check the state's expiry, and after it, to check the result's
// generation), so the breaker is right without any atomics of its own. It keeps the same
// rules as our profiles, so the comparison is of designs and not of work: a consecutive-failure
// count (`balancer`), or a count window with a minimum and a failure rate (`lab`).
// bench/ measures ours against it in the same run.

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace cb::bench {

class MutexBreaker {
 public:
  struct Options {
    int consecutive_failures = 0;  // 0: not a rule
    int window = 0;                // 0: no count window
    int minimum_calls = 0;
    int failure_percent = 0;
    std::chrono::steady_clock::duration cooldown{};
    int trials = 1;
  };
  // Our profiles' rules: the lab's count window (10 calls, judged from 5, trips at 50%) and the
  // balancer's five failures in a row.
  static Options lab_rule(std::chrono::steady_clock::duration cooldown) {
    Options o;
    o.window = 10;
    o.minimum_calls = 5;
    o.failure_percent = 50;
    o.cooldown = cooldown;
    return o;
  }
  static Options balancer_rule(std::chrono::steady_clock::duration cooldown) {
    Options o;
    o.consecutive_failures = 5;
    o.cooldown = cooldown;
    return o;
  }
  explicit MutexBreaker(const Options& o) : o_(o) {}

  // The generation the call was let through in, or 0 when refused.
  std::uint64_t before() {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    expire(now);
    if (state_ == State::Open) return 0;
    if (state_ == State::HalfOpen && trials_ >= o_.trials) return 0;
    if (state_ == State::HalfOpen) ++trials_;
    return generation_;
  }

  void after(std::uint64_t generation, bool ok) {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    expire(now);
    if (generation != generation_) return;
    if (state_ == State::HalfOpen) {
      ok ? close() : open(now);
      return;
    }
    consecutive_ = ok ? 0 : consecutive_ + 1;
    if (o_.window > 0) {
      const auto slot = static_cast<std::size_t>(next_);
      if (filled_ == o_.window)
        failures_ -= ring_[slot];
      else
        ++filled_;
      ring_[slot] = ok ? 0 : 1;
      failures_ += ring_[slot];
      next_ = (next_ + 1) % o_.window;
    }
    if (o_.consecutive_failures > 0 && consecutive_ >= o_.consecutive_failures)
      open(now);
    else if (o_.window > 0 && filled_ >= o_.minimum_calls && failures_ * 100 >= o_.failure_percent * filled_)
      open(now);
  }

 private:
  enum class State : std::uint8_t { Closed, Open, HalfOpen };
  void expire(std::chrono::steady_clock::time_point now) {
    if (state_ == State::Open && now - opened_at_ >= o_.cooldown) {
      state_ = State::HalfOpen;
      trials_ = 0;
      ++generation_;
    }
  }
  void open(std::chrono::steady_clock::time_point now) {
    state_ = State::Open;
    opened_at_ = now;
    ++generation_;
  }
  void close() {
    state_ = State::Closed;
    consecutive_ = filled_ = failures_ = next_ = 0;
    ++generation_;
  }

  std::mutex mu_;
  Options o_;
  State state_ = State::Closed;
  std::uint64_t generation_ = 1;
  std::chrono::steady_clock::time_point opened_at_{};
  int trials_ = 0;
  int consecutive_ = 0;
  std::array<int, 64> ring_{};
  int next_ = 0;
  int filled_ = 0;
  int failures_ = 0;
};

}  // namespace cb::bench

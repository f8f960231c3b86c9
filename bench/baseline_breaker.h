#pragma once
// The yardstick: the breaker a careful beginner writes. One mutex around a consecutive-failure
// count, the real clock read on every call, no profiles, no listeners, no generations.
// bench/ measures ours against it in the same run.

#include <chrono>
#include <mutex>

namespace cb::bench {

class BaselineBreaker {
 public:
  BaselineBreaker(int threshold, std::chrono::steady_clock::duration cooldown)
      : threshold_(threshold), cooldown_(cooldown) {}

  bool allow() {
    std::lock_guard lock(mu_);
    if (!open_) return true;
    if (std::chrono::steady_clock::now() - opened_at_ >= cooldown_) {
      open_ = false;  // a lone probe, as the replay exercise's reference
      return true;
    }
    return false;
  }

  void report(bool ok) {
    std::lock_guard lock(mu_);
    if (ok) {
      failures_ = 0;
      return;
    }
    if (++failures_ >= threshold_) {
      open_ = true;
      opened_at_ = std::chrono::steady_clock::now();
    }
  }

 private:
  std::mutex mu_;
  int threshold_;
  std::chrono::steady_clock::duration cooldown_;
  int failures_ = 0;
  bool open_ = false;
  std::chrono::steady_clock::time_point opened_at_{};
};

}  // namespace cb::bench

#pragma once
// The sliding window a CLOSED breaker judges its rates on. Both kinds are a ring of buckets
// with running totals, so recording and judging are O(1):
//   Count: one bucket per call, the last `size` calls.
//   Time:  one bucket per second of the timeline, the calls of the last `size` seconds.

#include <cstdint>
#include <vector>

#include "cb/breaker/options.h"
#include "cb/result.h"
#include "cb/breaker/time.h"

namespace cb {

struct WindowBucket {
  std::int64_t second = 0;  // Time windows: which second of the timeline; Count windows: 0
  std::uint32_t calls = 0;
  std::uint32_t failures = 0;
  std::uint32_t slow = 0;
  friend bool operator==(const WindowBucket&, const WindowBucket&) = default;
};

struct WindowTotals {
  std::uint32_t calls = 0;
  std::uint32_t failures = 0;
  std::uint32_t slow = 0;
  friend bool operator==(const WindowTotals&, const WindowTotals&) = default;
};

class SlidingWindow {
 public:
  explicit SlidingWindow(const WindowOptions& options);

  [[nodiscard]] bool uses_time() const noexcept { return kind_ == WindowOptions::Kind::Time; }

  // `now` matters only for Time windows.
  void record(bool failure, bool slow, TimePoint now);
  // Drops what has aged out of a Time window; a no-op for Count windows.
  void expire(TimePoint now);
  [[nodiscard]] const WindowTotals& totals() const noexcept { return totals_; }
  void clear();

  // Oldest first, empty buckets left out: what a snapshot stores.
  [[nodiscard]] std::vector<WindowBucket> buckets() const;
  // Refills the window from buckets(); rejects contents this window could not have held.
  [[nodiscard]] Result<void> restore(const std::vector<WindowBucket>& buckets);

 private:
  void advance_to(std::int64_t second);
  void add(WindowBucket& b, bool failure, bool slow);
  void subtract(const WindowBucket& b);

  WindowOptions::Kind kind_;
  std::vector<WindowBucket> ring_;
  std::size_t next_ = 0;     // Count: where the next call goes (the oldest call when full)
  std::size_t filled_ = 0;   // Count: how many calls are held
  std::int64_t latest_ = 0;  // Time: the newest second the ring covers
  bool started_ = false;     // Time: whether latest_ means anything yet
  WindowTotals totals_;
};

}  // namespace cb

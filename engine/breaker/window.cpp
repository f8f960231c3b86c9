#include "cb/breaker/window.h"

#include <algorithm>
#include <string>

namespace cb {
namespace {

// Seconds on the timeline, rounded toward minus infinity so that -0.5 s is second -1, not 0.
std::int64_t second_of(TimePoint t) {
  const auto us = t.time_since_epoch().count();
  return us >= 0 ? us / 1'000'000 : -((-us + 999'999) / 1'000'000);
}

std::size_t ring_index(std::int64_t second, std::size_t size) {
  const auto n = static_cast<std::int64_t>(size);
  return static_cast<std::size_t>(((second % n) + n) % n);
}

}  // namespace

SlidingWindow::SlidingWindow(const WindowOptions& options)
    : kind_(options.kind), ring_(static_cast<std::size_t>(options.size)) {}

void SlidingWindow::add(WindowBucket& b, bool failure, bool slow) {
  const std::uint32_t f = failure ? 1U : 0U;
  const std::uint32_t s = slow ? 1U : 0U;
  b.calls += 1;
  b.failures += f;
  b.slow += s;
  totals_.calls += 1;
  totals_.failures += f;
  totals_.slow += s;
}

void SlidingWindow::subtract(const WindowBucket& b) {
  totals_.calls -= b.calls;
  totals_.failures -= b.failures;
  totals_.slow -= b.slow;
}

void SlidingWindow::record(bool failure, bool slow, TimePoint now) {
  if (kind_ == WindowOptions::Kind::Count) {
    // When full, next_ points at the oldest call, which the new one replaces.
    WindowBucket& b = ring_[next_];
    subtract(b);
    b = WindowBucket{};
    add(b, failure, slow);
    if (++next_ == ring_.size()) next_ = 0;  // not %: a division costs more than the rest of a call
    if (filled_ < ring_.size()) ++filled_;
    return;
  }
  const std::int64_t s = second_of(now);
  advance_to(s);
  // A clock that stepped back by less than the window still lands in a live bucket; one that
  // stepped back further has nothing left to count it in, so the call is dropped.
  if (s <= latest_ - static_cast<std::int64_t>(ring_.size())) return;
  WindowBucket& b = ring_[ring_index(s, ring_.size())];
  if (b.second != s) {  // the slot last held an older second (or none): start it afresh
    subtract(b);
    b = WindowBucket{s, 0, 0, 0};
  }
  add(b, failure, slow);
}

void SlidingWindow::advance_to(std::int64_t second) {
  const auto size = static_cast<std::int64_t>(ring_.size());
  if (!started_) {
    started_ = true;
    latest_ = second;
    return;
  }
  if (second <= latest_) return;
  // Each second between the newest covered one and `second` gets a fresh bucket; beyond a
  // whole window's worth of seconds, every bucket is fresh.
  const std::int64_t first = std::max(latest_ + 1, second - size + 1);
  for (std::int64_t k = first; k <= second; ++k) {
    WindowBucket& b = ring_[ring_index(k, ring_.size())];
    subtract(b);
    b = WindowBucket{k, 0, 0, 0};
  }
  latest_ = second;
}

void SlidingWindow::expire(TimePoint now) {
  if (kind_ == WindowOptions::Kind::Time && started_) advance_to(second_of(now));
}

void SlidingWindow::clear() {
  for (auto& b : ring_) b = WindowBucket{};
  next_ = 0;
  filled_ = 0;
  latest_ = 0;
  started_ = false;
  totals_ = WindowTotals{};
}

std::vector<WindowBucket> SlidingWindow::buckets() const {
  std::vector<WindowBucket> out;
  if (kind_ == WindowOptions::Kind::Count) {
    out.reserve(filled_);
    const std::size_t oldest = (next_ + ring_.size() - filled_) % ring_.size();
    for (std::size_t i = 0; i < filled_; ++i) out.push_back(ring_[(oldest + i) % ring_.size()]);
    return out;
  }
  if (!started_) return out;
  const auto size = static_cast<std::int64_t>(ring_.size());
  for (std::int64_t k = latest_ - size + 1; k <= latest_; ++k) {
    const WindowBucket& b = ring_[ring_index(k, ring_.size())];
    if (b.second == k && b.calls > 0) out.push_back(b);
  }
  return out;
}

Result<void> SlidingWindow::restore(const std::vector<WindowBucket>& buckets) {
  auto bad = [](std::size_t i, const std::string& why) { return Error{"window[" + std::to_string(i) + "]: " + why}; };
  if (buckets.size() > ring_.size())
    return Error{"window: holds " + std::to_string(buckets.size()) + " buckets, more than its size " +
                 std::to_string(ring_.size())};
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const auto& b = buckets[i];
    if (b.failures > b.calls || b.slow > b.calls) return bad(i, "failures and slow calls cannot exceed calls");
    if (kind_ == WindowOptions::Kind::Count && b.calls != 1) return bad(i, "a count window holds one call per bucket");
    if (kind_ == WindowOptions::Kind::Time && i > 0 && b.second <= buckets[i - 1].second)
      return bad(i, "seconds must increase");
  }
  if (kind_ == WindowOptions::Kind::Time && !buckets.empty() &&
      buckets.back().second - buckets.front().second >= static_cast<std::int64_t>(ring_.size()))
    return Error{"window: spans more seconds than its size " + std::to_string(ring_.size())};

  clear();
  if (kind_ == WindowOptions::Kind::Count) {
    for (const auto& b : buckets) record(b.failures > 0, b.slow > 0, TimePoint{});
    return {};
  }
  if (buckets.empty()) return {};
  advance_to(buckets.back().second);
  for (const auto& b : buckets) {
    WindowBucket& slot = ring_[ring_index(b.second, ring_.size())];
    slot = b;
    totals_.calls += b.calls;
    totals_.failures += b.failures;
    totals_.slow += b.slow;
  }
  return {};
}

}  // namespace cb

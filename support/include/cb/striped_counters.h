#pragma once
// Counters that many threads bump on every call and one thread now and then adds up (the
// breaker's lock-free paths, the shared breaker's counts for the fleet). One shared atomic
// would be written by every thread on every call, and its cache line would move between the
// cores each time: with two threads that costs more than the whole call (the engine measured
// 2x its one-thread time before it had stripes). So each thread bumps its own stripe, a cache
// line of its own, and a reader adds the stripes up. Threads are dealt stripes in turn; past
// kStripes threads two may share one, which stays correct (the bumps are atomic) and only costs
// some speed.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cb {

template <std::size_t Fields>
class StripedCounts {
 public:
  void bump(std::size_t f) noexcept { stripes_[stripe()].n[f].fetch_add(1, std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t sum(std::size_t f) const noexcept {
    std::uint64_t total = 0;
    for (const Stripe& s : stripes_) total += s.n[f].load(std::memory_order_relaxed);
    return total;
  }
  void clear() noexcept {
    for (Stripe& s : stripes_)
      for (auto& n : s.n) n.store(0, std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t kStripes = 16;
  struct alignas(64) Stripe {
    std::array<std::atomic<std::uint64_t>, Fields> n{};
  };
  static std::size_t stripe() noexcept {
    // Constant-initialised, so reading it needs no guard; dealt on a thread's first bump, and
    // shared by every StripedCounts the thread bumps (each has its own stripes).
    static constinit thread_local std::size_t mine = kStripes;
    if (mine == kStripes) [[unlikely]] {
      static std::atomic<std::size_t> dealt{0};
      mine = dealt.fetch_add(1, std::memory_order_relaxed) % kStripes;
    }
    return mine;
  }
  std::array<Stripe, kStripes> stripes_{};
};

}  // namespace cb

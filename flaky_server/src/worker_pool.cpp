#include "worker_pool.h"

namespace cb::flaky {

WorkerPool::WorkerPool(int threads) {
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(fn));
    waiting_.fetch_add(1, std::memory_order_relaxed);
  }
  cv_.notify_one();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void WorkerPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // shutting down, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      waiting_.fetch_sub(1, std::memory_order_relaxed);
    }
    job();
  }
}

}  // namespace cb::flaky

#pragma once
// httplib's task queue, with one thing its ThreadPool lacks: how many connections are waiting
// for a worker. A keep-alive connection that sits idle while others wait gives its thread up,
// which is what stops the "more keep-alive clients than threads" stall.

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cb::flaky {

class WorkerPool final : public httplib::TaskQueue {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;  // runs what is queued, then joins
  [[nodiscard]] int waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }

 private:
  void work();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::atomic<int> waiting_{0};
  std::vector<std::thread> threads_;
};

}  // namespace cb::flaky

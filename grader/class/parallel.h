#pragma once
// The class's submissions, `jobs` at a time (0: one per CPU this process may use, jobs.h): each worker takes the next
// index until none is left, so a slow submission holds one worker, not a round. `finished` is
// called after each one with its index, never two at once.

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "cb/grade/jobs.h"

namespace cb::grade {

inline void for_each_submission(
    std::size_t count, int jobs, const std::function<void(std::size_t)>& work,
    const std::function<void(std::size_t index, std::size_t done, std::size_t total)>& finished) {
  const auto workers_wanted = static_cast<std::size_t>(jobs > 0 ? jobs : computing_jobs(this_process()));
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex done_mu;
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < std::min(workers_wanted, count); ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < count; i = next++) {
        work(i);
        const std::lock_guard lock(done_mu);
        ++done;
        if (finished) finished(i, done, count);
      }
    });
  }
  for (auto& t : workers) t.join();
}

}  // namespace cb::grade

#pragma once
// Runs a scenario's steps against a real server, through the engine's breakers, and writes the
// lab's files. What it shows goes to a Reporter (the console, or nothing for --json).

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/lab/anchored_clock.h"
#include "cb/lab/http_call.h"
#include "cb/lab/scenario.h"
#include "cb/lab/session.h"

namespace cb::lab {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void action(const std::string& text) = 0;  // one line per action
  virtual void countdown(std::chrono::microseconds left, std::chrono::microseconds total) = 0;
};

// A lab file as the runner wrote it: the grader is handed these, not the disk.
struct WrittenFile {
  std::string bytes;
  std::int64_t wall_us = 0;  // when it was written
};

class Runner {
 public:
  Runner(const Scenario& scenario, std::string out_dir, ServerUrl server, std::chrono::milliseconds call_timeout,
         Reporter& reporter, const std::atomic<bool>& interrupted);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Continues from what step `after_step` left (see Session). Errors: a breaker steps 1..after_step
  // use that the state lacks (never replaced by a fresh one), or a snapshot this scenario's
  // breakers could not have made.
  [[nodiscard]] Result<void> restore(const StepState& state, int after_step);
  [[nodiscard]] StepState capture();

  // Step n, 1-based. Errors: interrupted, or a file that could not be written.
  [[nodiscard]] Result<void> run_step(int n);

  [[nodiscard]] CircuitBreaker& breaker(const std::string& name);
  [[nodiscard]] const std::vector<std::string>& lines() const noexcept { return lines_; }
  // The record's epoch after this run's reset_server, so the grader can tell whether anyone
  // reset it again during the run; nullopt before (or without) a reset.
  [[nodiscard]] std::optional<std::uint64_t> epoch() const noexcept { return epoch_; }
  // When each refused call was refused (microseconds on the Unix epoch, the record's clock): a
  // refusal never reaches the server, so only the program that made it can say.
  [[nodiscard]] const std::vector<std::int64_t>& refused_at() const noexcept { return refused_at_; }
  // Every file this runner wrote, by name, as it last wrote it.
  [[nodiscard]] const std::map<std::string, WrittenFile>& written() const noexcept { return written_; }

 private:
  struct Live;
  void make_breaker(const std::string& name);
  Result<void> call(const Action& a);
  Result<void> wait(const Action& a);
  Result<void> write(const std::string& file, const std::string& content);
  void say(const std::string& text);

  const Scenario& scenario_;
  std::string out_dir_;
  ServerUrl server_;
  std::chrono::milliseconds call_timeout_;
  Reporter& reporter_;
  const std::atomic<bool>& interrupted_;
  AnchoredClock clock_;
  std::map<std::string, std::unique_ptr<Live>> breakers_;
  std::map<std::string, double> values_;
  std::vector<std::string> lines_;
  std::optional<std::uint64_t> epoch_;
  std::vector<std::int64_t> refused_at_;
  std::map<std::string, WrittenFile> written_;
};

}  // namespace cb::lab

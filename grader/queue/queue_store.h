#pragma once
// Internal: one queue's keys in Redis and the calls of its functions (cb_queue.lua), on one
// connection (a QueueStore is one thread's). The library is loaded at the first call, and again
// when a restarted Redis has lost it.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cb/redis_link.h"
#include "cb/grade/batch.h"
#include "cb/result.h"

namespace cb::grade::queue {

// What every job of a queue is graded with: the class's stamp (class_stamp), and with a course
// key, a fingerprint of it (an HMAC of a fixed text: the key itself never reaches Redis), so a
// worker given another key is refused rather than grading on other numbers.
[[nodiscard]] nlohmann::json grading_stamp(const BatchOptions& options);

// What take() hands a worker.
struct Taken {
  std::string job;
  std::string lane;
  int delivery = 0;
};

// A worker's store rides out a Redis that is away (restarting, the connection lost): each call is
// asked again every `step` until it is answered or `wait` (which waits a step) says its thread is
// stopping. While Redis is away no other worker can take a job, and a Redis started again takes
// none back at once (cb_queue.lua), so waiting costs no job a delivery. `say` is told when Redis
// goes away, every `remind` it stays away, and when it is back. A store with no `wait` fails at
// once, as a command-line tool should.
struct Patience {
  std::chrono::milliseconds step{100};
  std::chrono::milliseconds remind{10'000};
  std::function<bool(std::chrono::milliseconds)> wait;
  std::function<void(const std::string&)> say;
};

class QueueStore {
 public:
  QueueStore(RedisAddress address, std::string name, Patience patience = {});

  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

  // A command of the queue's own (HGET, SET NX...): its reply, or the transport's error, or
  // Redis's error reply as an Error.
  [[nodiscard]] Result<RedisReply> command(const std::vector<std::string>& argv);
  // FCALL cb_queue_v1_NAME 1 PREFIX args...
  [[nodiscard]] Result<RedisReply> call(const std::string& function, const std::vector<std::string>& args);

  [[nodiscard]] Result<std::optional<std::string>> hget(const std::string& key, const std::string& field);
  // How the queue's pushes said to grade (grading_stamp); an Error naming the queue when nothing was
  // ever pushed to it, which is what a mistyped --queue looks like to every command.
  [[nodiscard]] Result<nlohmann::json> stamp();
  [[nodiscard]] Result<void> put_blob(const std::string& sha, const std::string& bytes);
  [[nodiscard]] Result<std::string> blob(const std::string& sha);

  [[nodiscard]] Result<std::optional<Taken>> take(const std::string& worker, long long reclaim_ms);

 private:
  [[nodiscard]] Result<void> load_library();
  // One command on the link; with a Patience, asked again while Redis is away.
  [[nodiscard]] Result<RedisReply> send(const std::vector<std::string>& argv);
  RedisLink link_;
  Patience patience_;
  std::string name_;
  std::string prefix_;
  bool loaded_ = false;
};

}  // namespace cb::grade::queue

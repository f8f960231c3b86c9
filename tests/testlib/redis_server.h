#pragma once
// Test-only: a real redis-server on a unix socket in a test's own directory (no port to clash
// with anything), started and stopped by pid. pause() and resume() are SIGSTOP and SIGCONT: a
// Redis that accepts connections and answers nothing, the worst case for a client. With
// `append_only`, every write is logged (appendfsync everysec, Redis's default) in the directory,
// and a Redis started again there, after a stop by SIGKILL, holds what the log holds.

#include <csignal>
#include <memory>
#include <stdexcept>
#include <string>

#include "process.h"

namespace cb::testing {

class RedisServer {
 public:
  explicit RedisServer(std::string dir, bool append_only = false) : dir_(std::move(dir)), append_only_(append_only) {
    start();
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  void start() {
    proc_ = std::make_unique<Process>(
        std::vector<std::string>{CB_REDIS_SERVER, "--port", "0", "--unixsocket", socket(), "--save", "", "--appendonly",
                                 append_only_ ? "yes" : "no", "--logfile", "", "--dir", dir_});
    // Redis says when it listens ("ready to accept connections at PATH"); reading its log is
    // waiting for that line, not for a time.
    while (auto line = proc_->read_line()) {
      if (line->find("eady to accept connections") != std::string::npos) return;
    }
    throw std::runtime_error("redis-server did not start: " + proc_->read_all_stderr());
  }
  void stop() {
    if (!proc_) return;
    proc_->signal(SIGCONT);
    proc_->signal(SIGKILL);
    (void)proc_->wait();
    proc_.reset();
  }
  void pause() const { proc_->signal(SIGSTOP); }
  void resume() const { proc_->signal(SIGCONT); }

  [[nodiscard]] std::string socket() const { return dir_ + "/redis.sock"; }
  [[nodiscard]] std::string address() const { return "unix://" + socket(); }

 private:
  std::string dir_;
  bool append_only_ = false;
  std::unique_ptr<Process> proc_;
};

}  // namespace cb::testing

#include "cb/flaky/server.h"

#include <unistd.h>

#include <mutex>
#include <thread>

#include "http_server.h"

namespace cb::flaky {

struct FlakyServer::Runner {
  explicit Runner(std::size_t capacity) : record(capacity) {}
  RequestRecord record;
  std::thread thread;
  std::mutex mu;
  bool stopped = false;
};

Result<std::unique_ptr<FlakyServer>> FlakyServer::start(const ServerOptions& options) {
  if (auto valid = validate(options); !valid) {
    if (options.listen_fd >= 0) ::close(options.listen_fd);
    return valid.error();
  }
  std::unique_ptr<FlakyServer> s(new FlakyServer());
  s->runner_ = std::make_unique<Runner>(options.record_capacity);
  s->http_ = std::make_unique<HttpServer>(options, s->runner_->record);
  auto port = s->http_->listen();
  if (!port) return port.error();
  s->port_ = *port;
  s->host_ = options.host;
  // The socket listens from here on; connections made before the loops run wait in the backlog,
  // so there is nothing to wait for.
  s->runner_->thread = std::thread([http = s->http_.get()] { http->run(); });
  return s;
}

FlakyServer::~FlakyServer() { stop(); }

void FlakyServer::stop() {
  if (!runner_) return;
  std::lock_guard lock(runner_->mu);
  if (runner_->stopped) return;
  runner_->stopped = true;
  http_->begin_stop();
  if (runner_->thread.joinable()) runner_->thread.join();
}

std::string FlakyServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

RequestRecord& FlakyServer::record() noexcept { return runner_->record; }

}  // namespace cb::flaky

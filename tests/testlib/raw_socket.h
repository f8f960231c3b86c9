#pragma once
// Test-only: a plain TCP client, for what an HTTP client library will not do (send garbage,
// hang up halfway, see a reset).

#include <string>

namespace cb::testing {

class RawSocket {
 public:
  explicit RawSocket(int port);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool send(const std::string& bytes);
  // Says it will send no more (a FIN), and can still read: a half-close.
  void shutdown_write();
  // Everything until the server closes, or `timeout_ms` passes. `error` is errno of a failed
  // read (ECONNRESET for a reset), 0 for a clean close, -1 on timeout.
  std::string receive_all(int timeout_ms, int* error = nullptr);
  // What one read brings within `timeout_ms`: empty on timeout, close or error.
  std::string receive_some(int timeout_ms);
  void close();

 private:
  int fd_ = -1;
};

}  // namespace cb::testing

#pragma once
// One accepted connection, on the worker thread that serves it: the socket, a buffered
// httplib::Stream over it with per-request limits, and how the connection should end.

#include <httplib.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace cb::flaky {

struct Connection {
  enum class Ending : std::uint8_t {
    KeepAlive,  // serve the next request
    Close,      // answer this one, then close
    Drop,       // write nothing and close (FIN): the client sees the connection end
    Reset,      // write nothing and reset the connection (RST)
    Garbage,    // write bytes that are not HTTP, then close
  };
  int fd = -1;
  Ending ending = Ending::KeepAlive;
  bool routed = false;  // our router saw the current request (else httplib answered it alone)
};

// What a handler can reach of the connection it runs on. Set by the connection loop for the
// life of the connection; worker threads serve one connection at a time.
Connection* current_connection() noexcept;
void set_current_connection(Connection* c) noexcept;

class SocketStream final : public httplib::Stream {
 public:
  SocketStream(Connection& conn, std::chrono::microseconds request_timeout, std::size_t max_request_bytes);

  // Starts the per-request budget: a request must arrive whole within request_timeout and
  // max_request_bytes, so a slow or endless client cannot hold a thread.
  void start_request();
  [[nodiscard]] bool has_buffered() const noexcept { return pos_ < len_; }
  // Sends what write() has held back; false if the peer could not take it all.
  bool flush();

  // Between requests: one blocking receive (bounded by the socket's SO_RCVTIMEO) straight into
  // the read buffer, instead of a poll and then a receive.
  enum class Arrival : std::uint8_t { Data, Quiet, Closed };
  Arrival await_request();

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return conn_.fd; }

 private:
  [[nodiscard]] int millis_left() const;

  Connection& conn_;
  std::chrono::microseconds request_timeout_;
  std::size_t max_request_bytes_;
  std::chrono::steady_clock::time_point deadline_{};
  std::size_t request_bytes_ = 0;
  std::array<char, 16384> buf_{};
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  static constexpr std::size_t kFlushAt = 64 * 1024;
  std::string out_;
  mutable std::string remote_ip_;
  mutable int remote_port_ = -1;
};

}  // namespace cb::flaky

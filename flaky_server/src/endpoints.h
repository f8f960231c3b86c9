#pragma once
// What each lab and scenario path answers. Admin paths are in http_server.cpp. An endpoint is a
// pure function of the request and the moment: the event loop does the waiting a /slow or /hang
// answer asks for, so no endpoint ever blocks a thread.

#include <chrono>
#include <cstdint>
#include <optional>

#include "cb/flaky/options.h"
#include "cb/flaky/record.h"
#include "http_message.h"

namespace cb::flaky {

// How the connection goes on after an answer.
enum class Ending : std::uint8_t {
  KeepAlive,  // serve the next request
  Close,      // answer this one, then close
  Drop,       // write nothing and close (FIN): the client sees the connection end
  Reset,      // write nothing and reset the connection (RST)
  Garbage,    // write bytes that are not HTTP, then close
};

struct Reply {
  Response response;
  Outcome outcome = Outcome::Answered;
  Ending ending = Ending::KeepAlive;
  // /slow and /hang: the reply stands only after this wait, if the client is still there and the
  // server is not stopping; when the wait is over the outcome is `outcome` (/hang: HangLimit,
  // with ending Drop).
  std::optional<std::chrono::microseconds> wait;
};

struct Moment {
  std::int64_t mono_us = 0;       // the server's clock, for /toggle's phase
  std::int64_t count_answer = 0;  // what /count answers (the record counted it on arrival)
};

// Answers a lab or scenario request (any path but /admin/*).
[[nodiscard]] Reply serve_endpoint(const Request& req, const ServerOptions& options, const Moment& at);

// What /garbage sends instead of a response.
inline constexpr std::string_view kGarbage = "GARBAGE 0xDEADBEEF this is not an HTTP response\r\n\r\n";

}  // namespace cb::flaky

#pragma once
// One HTTP request to the downstream, with a deadline, classified by how it ended: a status
// line, or a timeout, a refused or reset connection, or an answer that is not HTTP. A small
// client of our own because the classification is the point: a general client folds all of
// these into "request failed".

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "cb/classify/classifier.h"
#include "cb/result.h"

namespace cb::lab {

struct ServerUrl {
  std::string host;
  int port = 0;
  [[nodiscard]] std::string text() const;  // http://host:port
};

// "http://127.0.0.1:8110" (a trailing slash is fine). Only plain http: the downstream is local.
[[nodiscard]] Result<ServerUrl> parse_url(const std::string& url);

// Why `path` cannot go on a request line as it is, or nullopt when it can: it must start with
// '/', and hold no space, control character (CR and LF above all: a path with "\r\n" in it
// would write headers, or a second request, of its own) or DEL, and be at most 2048 bytes.
[[nodiscard]] std::optional<std::string> request_path_problem(std::string_view path);

struct HttpAnswer {
  classify::Observation observation;  // a status, or how the call failed
  std::string body;                   // when a status line came, the body (at most 64 KiB)
  std::chrono::nanoseconds elapsed{0};
  std::string detail;  // for people: "connection refused", "no answer after 2 s", ...
};

// A fresh connection per call (Connection: close): a request is never sent twice, and a call
// that fails says why. Never throws.
[[nodiscard]] HttpAnswer http_request(const ServerUrl& server, const std::string& method, const std::string& path,
                                      std::chrono::milliseconds timeout);

// "200", "timeout", "reset", "refused", "garbage": how a call ended, in one word.
[[nodiscard]] std::string outcome_word(const HttpAnswer& a);

}  // namespace cb::lab

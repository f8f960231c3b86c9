#pragma once
// HTTP/1.x as the flaky server speaks it: a request head parsed from bytes as they arrive, and a
// response written as bytes. Small on purpose: no endpoint reads a body, so a request is its head.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb::flaky {

struct Request {
  std::string method;
  std::string target;  // as sent: "/slow?ms=250"
  std::string path;    // the target before '?', percent-decoded
  std::string query;   // after '?', as sent
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent
  bool keep_alive = true;  // HTTP/1.1 unless Connection lists "close"; HTTP/1.0 only with "keep-alive"
  bool has_body = false;   // a Content-Length other than 0, or chunked

  // The first header of that name (case-insensitive), if any.
  [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
  // The query parameter's value, percent-decoded ("ms" of "?ms=250"), if it is there.
  [[nodiscard]] std::optional<std::string> param(std::string_view name) const;
};

struct HeadLimits {
  std::size_t max_head_bytes = 64 * 1024;  // empty lines before it, request line and headers together
  std::size_t max_target_bytes = 8 * 1024;
  std::size_t max_headers = 100;
};

// Where the parse of a head still arriving stopped, so that the next call goes on from there
// (as picohttpparser's last_len): one per connection, fresh for each request.
struct HeadScan {
  bool started = false;        // past the empty lines before the request line
  std::size_t skipped = 0;     // the bytes of those empty lines
  std::size_t line_start = 0;  // where the line not yet ended starts
  std::size_t searched = 0;    // how far it has been searched for its LF
};

struct Parsed {
  enum class Kind { NeedMore, Done, Bad };
  Kind kind = Kind::NeedMore;
  Request request;           // Done
  std::size_t consumed = 0;  // Done: the bytes of the head, its blank line included
  int status = 0;            // Bad: 400, 414, 431, 501 or 505
  std::string reason;        // Bad: for the log
};

// Parses the request head at the start of `bytes` (http_head.cpp): NeedMore until the empty line
// that ends it has arrived, Bad as soon as the limits are passed or it is not a request RFC 9112
// and llhttp both accept. `scan` carries what earlier calls on a prefix of `bytes` found.
[[nodiscard]] Parsed parse_request_head(std::string_view bytes, const HeadLimits& limits, HeadScan& scan);
[[nodiscard]] Parsed parse_request_head(std::string_view bytes, const HeadLimits& limits = {});

// ASCII case-insensitive equality, as header names and schemes compare.
[[nodiscard]] bool iequal(std::string_view a, std::string_view b) noexcept;

// "%2F" -> "/"; a '%' not followed by two hex digits stays as it is. `plus_is_space` for query
// values, where a form encodes a space as '+'.
[[nodiscard]] std::string percent_decode(std::string_view s, bool plus_is_space);

struct Response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the ones always written
};

// What the response says of the connection: nothing (HTTP/1.1 keeps it), that it closes, or that
// it is kept (an HTTP/1.0 client that asked for keep-alive must be told, RFC 9112 9.3).
enum class ConnectionHeader : std::uint8_t { None, Close, KeepAlive };

// The response as bytes: status line, Content-Type, Content-Length, the extra headers, the
// Connection header, and the body unless `head_only` (HEAD).
[[nodiscard]] std::string serialize(const Response& r, bool head_only, ConnectionHeader connection);

[[nodiscard]] std::string_view reason_phrase(int status) noexcept;

}  // namespace cb::flaky

#pragma once
// A GET to a flaky server, for the programs that read its record or ask its health: one request
// on a fresh connection, the whole exchange bounded in time and size. No HTTP library: the
// server speaks the small HTTP/1.1 this reads.

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cb/result.h"

namespace cb::flaky {

struct GetAnswer {
  int status = 0;
  std::string body;
};

// GET `target` ("/admin/record?since=0") from `url` ("http://127.0.0.1:8110"), with `headers`.
// Errors, one line each: not such a URL; nothing listens (connection refused); no whole answer
// within `timeout`; an answer that is not HTTP; a body over `max_body` bytes.
[[nodiscard]] Result<GetAnswer> http_get(const std::string& url, const std::string& target,
                                         std::chrono::milliseconds timeout,
                                         const std::vector<std::pair<std::string, std::string>>& headers = {},
                                         std::size_t max_body = 256u << 20);

}  // namespace cb::flaky

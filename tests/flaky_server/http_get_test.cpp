// The small client the grader reads the record with: what it returns, and each way it fails.
#include <doctest/doctest.h>

#include "cb/flaky/http_get.h"
#include "cb/flaky/server.h"

namespace cb::flaky {
namespace {

using namespace std::chrono_literals;

TEST_CASE("http_get: an answer, its status and its whole body") {
  ServerOptions o;
  o.port = 0;
  o.admin_token = "secret";
  const auto s = FlakyServer::start(o).value();
  const auto fast = http_get(s->url(), "/fast", 5s);
  REQUIRE(fast);
  CHECK(fast->status == 200);
  CHECK(fast->body == "fast\n");
  SUBCASE("headers go with it") {
    CHECK(http_get(s->url(), "/admin/health", 5s)->status == 403);
    const auto health = http_get(s->url() + "/", "/admin/health", 5s, {{"X-CB-Admin", "secret"}});
    REQUIRE(health);
    CHECK(health->status == 200);
    CHECK(health->body.find("\"status\":\"ok\"") != std::string::npos);
  }
  SUBCASE("an answer that is not HTTP") {
    const auto garbage = http_get(s->url(), "/garbage", 5s);
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().message == s->url() + " answered something that is not HTTP");
  }
  SUBCASE("a body over the bound") {
    const auto big = http_get(s->url(), "/admin/record", 5s, {{"X-CB-Admin", "secret"}}, 16);
    REQUIRE_FALSE(big);
    CHECK(big.error().message.find("larger than 16 bytes") != std::string::npos);
  }
  SUBCASE("no answer in time") {
    const auto hang = http_get(s->url(), "/hang", 100ms);
    REQUIRE_FALSE(hang);
    CHECK(hang.error().message ==
          "no flaky server answers at " + s->url() + " (no whole answer within the time limit)");
  }
}

TEST_CASE("http_get: what is not a server URL, and where nothing listens") {
  CHECK(http_get("127.0.0.1:8110", "/", 1s).error().message ==
        "'127.0.0.1:8110' is not a server URL like http://127.0.0.1:8110");
  CHECK(http_get("http://127.0.0.1", "/", 1s).error().message ==
        "'http://127.0.0.1' is not a server URL like http://127.0.0.1:8110");
  CHECK(http_get("http://[::1", "/", 1s).error().message ==
        "'http://[::1' is not a server URL like http://127.0.0.1:8110");
  CHECK(http_get("http://127.0.0.1:1", "/", 1s).error().message ==
        "no flaky server answers at http://127.0.0.1:1 (Connection refused)");
}

}  // namespace
}  // namespace cb::flaky

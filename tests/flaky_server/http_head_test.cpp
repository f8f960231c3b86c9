// The request head parser on its own: what it answers for each refusal, what it reads from the
// headers that decide framing, and that a head arriving in pieces is parsed as the whole would be,
// at the cost of its length once.
#include <doctest/doctest.h>

#include <string>

#include "http_message.h"

namespace cb::flaky {
namespace {

Parsed parse(const std::string& bytes, const HeadLimits& limits = {}) { return parse_request_head(bytes, limits); }

int status_of(const std::string& bytes) {
  const Parsed p = parse(bytes);
  return p.kind == Parsed::Kind::Bad ? p.status : p.kind == Parsed::Kind::Done ? 200 : 0;
}

TEST_CASE("http head: each refusal has the status the RFC gives it") {
  CHECK(status_of("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n") == 200);
  CHECK(status_of("BREW /fast HTTP/1.1\r\nHost: x\r\n\r\n") == 501);  // a token, not a method known here
  CHECK(status_of("G@T /fast HTTP/1.1\r\nHost: x\r\n\r\n") == 400);   // not a token
  CHECK(status_of("GET /fast HTTP/2.0\r\nHost: x\r\n\r\n") == 505);
  CHECK(status_of("GET /fast HTTP/1.2\r\nHost: x\r\n\r\n") == 505);
  CHECK(status_of("GET /fast HTTX/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501);
  CHECK(status_of("POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n") == 400);
  CHECK(status_of("GET /fast HTTP/1.1\r\n\r\n") == 400);
  CHECK(status_of("GET /fast HTTP/1.1\nHost: x\n\n") == 400);
  CHECK(status_of("GET /fast HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n") == 400);
  CHECK(status_of("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n") == 414);
  std::string many = "GET /fast HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100; ++i) many += "X: y\r\n";
  CHECK(status_of(many + "\r\n") == 431);
}

TEST_CASE("http head: the target in origin, absolute and asterisk form") {
  Parsed p = parse("GET http://127.0.0.1:8110/slow?ms=5 HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.kind == Parsed::Kind::Done);
  CHECK(p.request.path == "/slow");
  CHECK(p.request.param("ms") == "5");
  CHECK(p.request.target == "http://127.0.0.1:8110/slow?ms=5");
  p = parse("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.kind == Parsed::Kind::Done);
  CHECK(p.request.path == "*");
  CHECK(status_of("GET * HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(parse("GET /%66ast HTTP/1.0\r\n\r\n").request.path == "/fast");
}

TEST_CASE("http head: Connection is a list, over every line of it, and a body is a length or chunked") {
  CHECK_FALSE(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: TE, close\r\n\r\n").request.keep_alive);
  CHECK_FALSE(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: TE\r\nConnection: Close\r\n\r\n").request.keep_alive);
  CHECK(parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: TE\r\n\r\n").request.keep_alive);
  CHECK(parse("GET / HTTP/1.0\r\nConnection: TE, Keep-Alive\r\n\r\n").request.keep_alive);
  CHECK_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
  CHECK(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n").request.has_body);
  CHECK_FALSE(parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 00\r\n\r\n").request.has_body);
  CHECK(parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n").request.has_body);
}

TEST_CASE("http head: in pieces, a head parses as it does whole, and the parse goes on where it stopped") {
  const std::string head = "\r\n\r\nGET /fast?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\r\n\r\nGET /next";
  for (std::size_t cut = 0; cut <= head.size(); ++cut) {
    HeadScan scan;
    const Parsed first = parse_request_head(std::string_view(head).substr(0, cut), {}, scan);
    const Parsed rest = first.kind == Parsed::Kind::NeedMore ? parse_request_head(head, {}, scan) : first;
    REQUIRE_MESSAGE(rest.kind == Parsed::Kind::Done, "cut at " << cut);
    CHECK(rest.consumed == head.size() - 9);
    CHECK(rest.request.path == "/fast");
  }
  // A byte at a time: where each call's scan starts moves on with the bytes, never back to 0.
  const std::string slow = "GET /fast HTTP/1.1\r\nHost: x\r\nX-A: " + std::string(50000, 'a') + "\r\n\r\n";
  HeadScan scan;
  std::size_t last = 0;
  Parsed p;
  for (std::size_t n = 1; n <= slow.size(); ++n) {
    p = parse_request_head(std::string_view(slow).substr(0, n), {}, scan);
    if (p.kind != Parsed::Kind::NeedMore) break;
    REQUIRE(scan.searched >= last);
    REQUIRE(scan.searched == n);
    last = scan.searched;
  }
  CHECK(p.kind == Parsed::Kind::Done);
}

TEST_CASE("http head: empty lines before a request count toward the head's limit") {
  const HeadLimits limits{1024, 256, 100};
  CHECK(parse(std::string(1000, '\n') + "GET / HTTP/1.0\r\n\r\n", limits).kind == Parsed::Kind::Done);
  Parsed p = parse(std::string(1100, '\n'), limits);
  CHECK(p.kind == Parsed::Kind::Bad);
  CHECK(p.status == 431);
  p = parse(std::string(1000, '\n') + "GET / HTTP/1.0\r\nX-A: " + std::string(100, 'a') + "\r\n\r\n", limits);
  CHECK(p.status == 431);
}

}  // namespace
}  // namespace cb::flaky

// The balancer exercise's interpreter: its trace, and every kind of line it must cope with.
#include <doctest/doctest.h>

#include <sstream>

#include "cb/exercises/script.h"

namespace cb::exercises {
namespace {

std::string run(const std::string& script) {
  std::istringstream in(script);
  std::ostringstream out;
  REQUIRE(run_script(in, out, false).ok());
  return out.str();
}

TEST_CASE("balancer trace: the trace for one backend - as commands") {
  const std::string script =
      "POOL a b\n"
      "NOW 0\n"
      "CALL a 500\nCALL a TIMEOUT\nCALL a RESET\nCALL a HTTP/1.1 503 Service Unavailable\n"
      "CALL a 200\n"  // the run is broken
      "CALL a 500\nCALL a 500\nCALL a garbage\nCALL a REFUSED\nCALL a 502\n"
      "STATUS\n"
      "NOW 7\nCALL a 200\n"
      "NOW 30\nSTATUS\n"
      "CALL a 200\nCALL a HTTP/1.0 204 No Content\nCALL a 500\n"
      "STATUS\n";
  CHECK(run(script) ==
        "OK\nOK\n"
        "ERROR\nERROR\nERROR\nERROR\n"
        "OK\n"
        "ERROR\nERROR\nERROR\nERROR\nERROR\n"
        "a OPEN\nb CLOSED\n"
        "OK\nSHORT\n"
        "OK\na HALF_OPEN\nb CLOSED\n"
        "OK\nOK\nERROR\n"
        "a OPEN\nb CLOSED\n");
}

TEST_CASE("balancer trace: three successes in a row close a half-open backend") {
  CHECK(run("POOL x\nCALL x 500\nCALL x 500\nCALL x 500\nCALL x 500\nCALL x 500\nNOW 30\n"
            "CALL x 200\nCALL x 200\nSTATUS\nCALL x 200\nSTATUS\n") ==
        "OK\nERROR\nERROR\nERROR\nERROR\nERROR\nOK\nOK\nOK\nx HALF_OPEN\nOK\nx CLOSED\n");
}

TEST_CASE("balancer trace: a 404 is not an error and breaks a run of errors") {
  CHECK(run("POOL x\nCALL x 500\nCALL x 500\nCALL x 500\nCALL x 500\nCALL x 404\nCALL x 500\nSTATUS\n") ==
        "OK\nERROR\nERROR\nERROR\nERROR\nOK\nERROR\nx CLOSED\n");
}

TEST_CASE("balancer trace: backends have breakers of their own") {
  CHECK(run("POOL a b\nCALL a 500\nCALL a 500\nCALL a 500\nCALL a 500\nCALL a 500\nCALL b 200\nCALL a 200\n") ==
        "OK\nERROR\nERROR\nERROR\nERROR\nERROR\nOK\nSHORT\n");
}

TEST_CASE("what makes an answer well-formed") {
  using classify::Origin;
  CHECK(parse_answer("200").origin == Origin::Response);
  CHECK(parse_answer("599").status == 599);
  CHECK(parse_answer(" 404 ").status == 404);
  CHECK(parse_answer("HTTP/1.1 503 Service Unavailable").status == 503);
  CHECK(parse_answer("HTTP/1.1 200").status == 200);
  CHECK(parse_answer("HTTP/2 200").status == 200);
  CHECK(parse_answer("TIMEOUT").origin == Origin::Timeout);
  CHECK(parse_answer("RESET").origin == Origin::ConnectionReset);
  CHECK(parse_answer("REFUSED").origin == Origin::ConnectRefused);
  for (const char* bad : {"600", "099", "20", "2000", "abc", "", "HTTP/1.1", "HTTP/1.1 20", "HTTP/1.1 600 Nope",
                          "http/1.1 200 OK", "HTTP/1.1  200 OK", "HTTP/x 200", "404 Not Found", "-200"}) {
    CAPTURE(bad);
    CHECK(parse_answer(bad).origin == Origin::MalformedResponse);
  }
}

TEST_CASE("a line it cannot understand answers INVALID and the script goes on") {
  CHECK(run("FOO\nPOOL a\nSTATUS\n") ==
        "INVALID unknown command 'FOO' (expected POOL, NOW, CALL or STATUS)\nOK\na CLOSED\n");
  CHECK(run("call a 200\n") == "INVALID unknown command 'call' (expected POOL, NOW, CALL or STATUS)\n");
  CHECK(run("STATUS\n") == "INVALID STATUS before POOL: there are no backends yet\n");
  CHECK(run("CALL a 200\n") == "INVALID CALL before POOL: there are no backends yet\n");
  CHECK(run("POOL a\nCALL b 200\n") == "OK\nINVALID CALL to unknown backend 'b'\n");
  CHECK(run("POOL a\nCALL a\n") == "OK\nINVALID CALL takes a backend and an answer\n");
  CHECK(run("POOL\n") == "INVALID POOL needs at least one backend name\n");
  CHECK(run("POOL a a\n") == "INVALID POOL names backend 'a' twice\n");
  CHECK(run("NOW\n") == "INVALID NOW takes one number of seconds\n");
  CHECK(run("NOW soon\n") == "INVALID NOW: 'soon' is not a number of seconds\n");
  CHECK(run("NOW 1 2\n") == "INVALID NOW takes one number of seconds\n");
  CHECK(run("POOL a\nSTATUS now\n") == "OK\nINVALID STATUS takes no arguments\n");
}

TEST_CASE("blank lines - comments and CRLF line endings") {
  CHECK(run("# a comment\n\nPOOL a\r\n   \r\nSTATUS\r\n") == "OK\na CLOSED\n");
  CHECK(run("POOL a\nSTATUS") == "OK\na CLOSED\n");  // no final newline
}

TEST_CASE("a second POOL starts a fresh pool") {
  CHECK(run("POOL a\nCALL a 500\nCALL a 500\nCALL a 500\nCALL a 500\nCALL a 500\nPOOL a c\nSTATUS\n") ==
        "OK\nERROR\nERROR\nERROR\nERROR\nERROR\nOK\na CLOSED\nc CLOSED\n");
}

}  // namespace
}  // namespace cb::exercises

// The flaky server in-process on a free port, driven by real clients over loopback.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <future>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <thread>

#include "cb/flaky/server.h"
#include "raw_socket.h"

namespace cb::flaky {
namespace {

using namespace std::chrono_literals;
using cb::testing::RawSocket;
using json = nlohmann::json;

// A server on a free port; with `manual_clock`, one whose clock the test moves by hand.
struct TestServer {
  std::atomic<long long> now_us{0};
  std::unique_ptr<FlakyServer> server;

  explicit TestServer(ServerOptions o = {}, bool manual_clock = false) {
    o.port = 0;
    if (manual_clock) o.clock = [this] { return std::chrono::microseconds{now_us.load()}; };
    auto started = FlakyServer::start(o);
    REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().message));
    server = std::move(started).value();
  }
  [[nodiscard]] int port() const { return server->port(); }
  [[nodiscard]] httplib::Client client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(5, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
  json record(std::uint64_t since = 0) const {
    auto c = client();
    auto r = c.Get(("/admin/record?since=" + std::to_string(since)).c_str());
    REQUIRE(r);
    REQUIRE(r->status == 200);
    return json::parse(r->body);
  }
  std::uint64_t count() const {
    auto c = client();
    auto r = c.Get("/admin/health");
    REQUIRE(r);
    return json::parse(r->body)["count"].get<std::uint64_t>();
  }
};

int status_of(httplib::Client& c, const char* path) {
  auto r = c.Get(path);
  return r ? r->status : -1;
}

TEST_CASE("flaky server: the lab endpoints answer as the lab expects") {
  TestServer s;
  auto c = s.client();
  CHECK(status_of(c, "/fast") == 200);
  CHECK(status_of(c, "/always500") == 500);
  CHECK(status_of(c, "/bad") == 400);
  auto count = c.Get("/count");
  REQUIRE(count);
  CHECK(count->status == 200);
  CHECK(count->get_header_value("Content-Type") == "application/json");
  CHECK(json::parse(count->body) == json{{"count", 3}});
  SUBCASE("/count counts every request but itself and admin ones - whatever the path or method") {
    CHECK(status_of(c, "/nope") == 404);
    auto post = c.Post("/fast", "", "text/plain");
    REQUIRE(post);
    CHECK(post->status == 405);
    CHECK(post->get_header_value("Allow") == "GET, HEAD");
    CHECK(status_of(c, "/admin/health") == 200);
    CHECK(status_of(c, "/count") == 200);
    auto again = c.Get("/count");
    CHECK(json::parse(again->body)["count"] == 5);
  }
}

// A program stamps a transition after one answer and before its next request; with every lab
// answer at least a millisecond after its request arrived, a stamp to the millisecond cannot also
// hold the next answer, and the grader always knows which answer a transition followed.
TEST_CASE("flaky server: a lab request is answered no sooner than the answer floor after it arrived") {
  TestServer s;
  auto c = s.client();  // one kept connection: back to back, as fast as a client can ask
  for (const char* path : {"/fast", "/always500", "/bad", "/status/201", "/fast", "/count", "/nope"})
    CHECK(status_of(c, path) > 0);
  const json record = s.record();
  REQUIRE(record["entries"].size() == 7);
  for (const auto& e : record["entries"]) {
    CAPTURE(e.dump());
    if (e["path"] == "/count") continue;  // not a lab answer: nothing is placed by it
    CHECK(e["duration_ms"].get<double>() >= 1.0);
  }
  ServerOptions o;
  o.answer_floor = -1us;
  CHECK(validate(o).error().message == "--answer-floor: must be between 0 and 1s");
}

TEST_CASE("flaky server: HEAD works wherever GET does - with no body") {
  TestServer s;
  auto c = s.client();
  for (const char* path : {"/fast", "/always500", "/bad", "/count", "/status/503", "/admin/health"}) {
    CAPTURE(path);
    auto get = c.Get(path);
    auto head = c.Head(path);
    REQUIRE(get);
    REQUIRE(head);
    CHECK(head->status == get->status);
    CHECK(head->body.empty());
  }
  CHECK(s.count() == 8);  // 4 lab GETs and 4 lab HEADs; /count and admin not counted
}

TEST_CASE("flaky server: /status/NNN answers any final status") {
  TestServer s;
  auto c = s.client();
  CHECK(status_of(c, "/status/200") == 200);
  CHECK(status_of(c, "/status/429") == 429);
  CHECK(status_of(c, "/status/503") == 503);
  CHECK(status_of(c, "/status/599") == 599);
  CHECK(status_of(c, "/status/100") == 404);
  CHECK(status_of(c, "/status/600") == 404);
  CHECK(status_of(c, "/status/abc") == 404);
}

TEST_CASE("flaky server: /toggle is healthy then failing - every toggle period") {
  ServerOptions o;
  o.toggle_period = 4s;
  TestServer s(o, /*manual_clock=*/true);
  auto c = s.client();
  auto at = [&](long long seconds_us) {
    s.now_us = seconds_us;
    return status_of(c, "/toggle");
  };
  CHECK(at(0) == 200);
  CHECK(at(3'999'999) == 200);
  CHECK(at(4'000'000) == 500);
  CHECK(at(7'999'999) == 500);
  CHECK(at(8'000'000) == 200);
  CHECK(at(12'500'000) == 500);
}

TEST_CASE("flaky server: /slow answers after the delay it is asked for") {
  TestServer s;
  auto c = s.client();
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c.Get("/slow?ms=150");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 >= 150ms);  // a lower bound is behaviour, not speed
  CHECK(status_of(c, "/slow?ms=-1") == 400);
  CHECK(status_of(c, "/slow?ms=soon") == 400);
  const auto entry = s.record()["entries"][0];
  CHECK(entry["outcome"] == "answered");
  CHECK(entry["duration_ms"].get<double>() >= 150.0);
}

// Resolves when the server reports a request to `path` reaching an outcome other than Pending
// (or, with `pending`, when it arrives).
struct Await {
  std::promise<Outcome> promise;
  std::future<Outcome> future = promise.get_future();
  std::atomic<bool> done{false};
  void attach(ServerOptions& o, const std::string& path, bool pending = false) {
    o.observer = [this, path, pending](std::uint64_t, std::string_view p, Outcome outcome) {
      if (p == path && (outcome == Outcome::Pending) == pending && !done.exchange(true)) promise.set_value(outcome);
    };
  }
  Outcome get() {
    REQUIRE(future.wait_for(10s) == std::future_status::ready);  // a bound, not a pace
    return future.get();
  }
};

TEST_CASE("flaky server: /hang holds the request until the client gives up") {
  ServerOptions o;
  o.hang_limit = 60s;
  Await ended;
  ended.attach(o, "/hang");
  TestServer s(o);
  auto c = s.client();
  c.set_read_timeout(0, 200'000);
  auto r = c.Get("/hang");
  CHECK_FALSE(r);  // the client's timeout fired
  // The server notices the client leaving and frees its thread; the record says so.
  CHECK(ended.get() == Outcome::ClientGone);
  const json entries = s.record()["entries"];
  CHECK(entries[0]["outcome"] == "client-gone");
  CHECK(entries[0]["status"].is_null());
  SUBCASE("and is bounded: past --hang-limit the server closes a forgotten connection") {
    ServerOptions brief;
    brief.hang_limit = 100ms;
    TestServer b(brief);
    RawSocket raw(b.port());
    REQUIRE(raw.send("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n"));
    int error = 99;
    CHECK(raw.receive_all(5000, &error).empty());
    CHECK(error == 0);  // closed without a word
    CHECK(b.record()["entries"][0]["outcome"] == "hang-limit");
  }
}

TEST_CASE("flaky server: /reset resets the connection and /garbage answers with bytes that are not HTTP") {
  TestServer s;
  {
    RawSocket raw(s.port());
    REQUIRE(raw.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n"));
    int error = 0;
    CHECK(raw.receive_all(5000, &error).empty());
    CHECK(error == ECONNRESET);
  }
  {
    RawSocket raw(s.port());
    REQUIRE(raw.send("GET /garbage HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string reply = raw.receive_all(5000);
    CHECK(reply.rfind("GARBAGE", 0) == 0);
    CHECK(reply.find("HTTP/") == std::string::npos);
  }
  const json entries = s.record()["entries"];
  CHECK(entries[0]["outcome"] == "reset");
  CHECK(entries[1]["outcome"] == "garbage");
  CHECK(s.count() == 2);
}

TEST_CASE("flaky server: /count is exact with many concurrent clients") {
  ServerOptions o;
  o.record_capacity = 5000;
  TestServer s(o);
  constexpr int kThreads = 8;
  constexpr int kEach = 500;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = s.client();
      for (int i = 0; i < kEach; ++i) {
        const char* path = (i + t) % 3 == 0 ? "/fast" : (i + t) % 3 == 1 ? "/always500" : "/bad";
        auto r = c.Get(path);
        if (!r) {
          failed.fetch_add(1);
          MESSAGE("request failed: " << httplib::to_string(r.error()));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failed.load() == 0);
  CHECK(s.count() == kThreads * kEach);
  const json rec = s.record();
  CHECK(rec["entries"].size() == kThreads * kEach);
  std::uint64_t expected_seq = 1;
  for (const auto& e : rec["entries"]) CHECK(e["seq"].get<std::uint64_t>() == expected_seq++);
}

TEST_CASE("flaky server: the record keeps order - answers a cursor - and is bounded") {
  ServerOptions o;
  o.record_capacity = 10;
  TestServer s(o);
  auto c = s.client();
  for (int i = 0; i < 4; ++i) CHECK(status_of(c, "/fast") == 200);
  CHECK(status_of(c, "/count") == 200);
  SUBCASE("entries in arrival order - /count recorded with its answer but not counted") {
    const json rec = s.record();
    REQUIRE(rec["entries"].size() == 5);
    CHECK(rec["entries"][4]["path"] == "/count");
    CHECK(rec["entries"][4]["count"] == 4);
    CHECK(rec["entries"][4]["counted"] == false);
    CHECK(rec["entries"][0]["t_ms"].get<double>() <= rec["entries"][4]["t_ms"].get<double>());
    CHECK(rec["count"] == 4);
    CHECK(rec["gap"] == false);
  }
  SUBCASE("since takes only what is new") {
    const json rec = s.record(3);
    REQUIRE(rec["entries"].size() == 2);
    CHECK(rec["entries"][0]["seq"] == 4);
    CHECK(rec["next_seq"] == 6);
  }
  SUBCASE("a full ring drops the oldest and says so") {
    for (int i = 0; i < 10; ++i) CHECK(status_of(c, "/bad") == 400);
    const json rec = s.record();
    CHECK(rec["entries"].size() == 10);
    CHECK(rec["first_seq"] == 6);
    CHECK(rec["dropped"] == 5);
    CHECK(rec["gap"] == true);
    CHECK(rec["count"] == 14);  // the count is not bounded by the ring
    CHECK(s.record(5)["gap"] == false);
  }
  SUBCASE("limit pages through it, and the cursor reads on without a gap") {
    auto r = c.Get("/admin/record?since=0&limit=2");
    REQUIRE(r);
    const json first = json::parse(r->body);
    CHECK(first["entries"].size() == 2);
    CHECK(first["cursor"] == 2);
    CHECK(first["more"] == true);
    // next_seq is what the next request gets (6), not where to read on: from the cursor, the
    // next page starts at 3 (reading on from next_seq once skipped 3, 4 and 5).
    auto on = c.Get("/admin/record?since=2&limit=10");
    REQUIRE(on);
    const json second = json::parse(on->body);
    REQUIRE(second["entries"].size() == 3);
    CHECK(second["entries"][0]["seq"] == 3);
    CHECK(second["more"] == false);
    CHECK(second["cursor"] == 5);
    // A cursor past the end reads nothing (the largest since once wrapped and read everything).
    CHECK(s.record(18446744073709551615ULL)["entries"].empty());
    CHECK(s.record(5)["entries"].empty());
    CHECK(status_of(c, "/admin/record?limit=0") == 400);
    CHECK(status_of(c, "/admin/record?since=x") == 400);
  }
  SUBCASE("a page is at most 10000 entries: the loop that writes it serves no one else meanwhile") {
    CHECK(status_of(c, "/admin/record?limit=10000") == 200);
    auto r = c.Get("/admin/record?limit=10001");
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(r->body.find("from 1 to 10000") != std::string::npos);
  }
  SUBCASE("the text says every field as before, a path's odd bytes as U+FFFD and controls escaped") {
    RawSocket raw(s.port());
    REQUIRE(raw.send("GET /a%22b%5C%01%FF HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    (void)raw.receive_all(5000);
    auto r = c.Get("/admin/record?since=5");
    REQUIRE(r);
    CHECK(r->body.find(R"("path":"/a\"b\\\u0001)"
                       "\xef\xbf\xbd\"") != std::string::npos);
    const json page = json::parse(r->body);
    CHECK(page["entries"][0]["path"] == "/a\"b\\\x01\xef\xbf\xbd");
    CHECK(page["entries"][0]["status"] == 404);
    CHECK(page["entries"][0]["counted"] == true);
    CHECK(page["entries"][0]["duration_ms"].is_number());
    CHECK(page["entries"][0]["wall"].get<std::string>().size() == 27);
  }
}

TEST_CASE("flaky server: reset empties the count and the record and starts a new epoch") {
  TestServer s;
  auto c = s.client();
  CHECK(status_of(c, "/fast") == 200);
  const auto epoch = s.record()["epoch"].get<int>();
  CHECK(status_of(c, "/admin/reset") == 405);  // a GET must not reset anything
  auto r = c.Post("/admin/reset", "", "text/plain");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(json::parse(r->body)["epoch"] == epoch + 1);
  CHECK(s.count() == 0);
  CHECK(s.record()["entries"].empty());
  CHECK(status_of(c, "/fast") == 200);
  CHECK(s.record()["entries"][0]["seq"] == 1);
}

TEST_CASE("flaky server: garbage and half-sent requests neither crash it nor count") {
  TestServer s;
  SUBCASE("a request line that is not HTTP gets 400 and is not counted") {
    RawSocket raw(s.port());
    REQUIRE(raw.send("GARBAGE\r\n\r\n"));
    CHECK(raw.receive_all(5000).rfind("HTTP/1.1 400", 0) == 0);
  }
  SUBCASE("binary noise") {
    RawSocket raw(s.port());
    REQUIRE(raw.send(std::string("\x00\xff\x13\x37\r\n\r\n", 8)));
    (void)raw.receive_all(5000);
  }
  SUBCASE("a client that hangs up halfway") {
    RawSocket raw(s.port());
    REQUIRE(raw.send("GET /fa"));
    raw.close();
  }
  SUBCASE("an oversized request") {
    RawSocket raw(s.port());
    (void)raw.send("GET /fast HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(200'000, 'a') + "\r\n\r\n");
    (void)raw.receive_all(5000);
  }
  SUBCASE("a body on a lab request is answered and the connection closed - not read as a request") {
    RawSocket raw(s.port());
    REQUIRE(raw.send("POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 24\r\n\r\nGET /fast HTTP/1.1\r\n\r\n.."));
    const std::string reply = raw.receive_all(5000);
    CHECK(reply.rfind("HTTP/1.1 405", 0) == 0);
    CHECK(reply.find("HTTP/1.1", 5) == std::string::npos);  // one answer only
    CHECK(s.count() == 1);
  }
  auto c = s.client();
  CHECK(status_of(c, "/fast") == 200);
  const auto n = s.count();
  CHECK((n == 1 || n == 2));  // the good request, and the 405 of the body subcase
  CHECK(s.record()["entries"].back()["path"] == "/fast");
}

TEST_CASE("flaky server: a client that trickles its request is cut off at the request timeout") {
  ServerOptions o;
  o.request_timeout = 200ms;
  TestServer s(o);
  RawSocket slow(s.port());
  REQUIRE(slow.send("GET /fast HTTP/1.1\r\nHost: x\r\n"));  // ...and the rest never comes
  int error = 99;
  (void)slow.receive_all(5000, &error);
  CHECK(error != -1);  // the server closed it; the 5 s bound here is far above the 200 ms
  CHECK(s.count() == 0);
  auto c = s.client();
  CHECK(status_of(c, "/fast") == 200);
}

TEST_CASE("flaky server: more keep-alive clients than threads do not stall") {
  ServerOptions o;
  o.threads = 1;
  TestServer s(o);
  // Four keep-alive clients on one event loop, taking turns. A thread per connection (cpp-httplib's
  // own pool) would hold the first connection for its 5 s keep-alive and the others' 2 s read
  // timeout would fire.
  std::vector<httplib::Client> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back("127.0.0.1", s.port());
    clients.back().set_keep_alive(true);
    clients.back().set_read_timeout(2, 0);
  }
  int ok = 0;
  for (int round = 0; round < 5; ++round)
    for (auto& cl : clients) ok += status_of(cl, "/fast") == 200 ? 1 : 0;
  CHECK(ok == 20);
  CHECK(s.count() == 20);
}

TEST_CASE("flaky server: a port already in use is an error naming it") {
  TestServer first;
  ServerOptions o;
  o.port = first.port();
  auto second = FlakyServer::start(o);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().message ==
        "cannot listen on 127.0.0.1:" + std::to_string(first.port()) + ": address already in use");
}

TEST_CASE("flaky server: options are checked - and only loopback unless asked") {
  auto error = [](const ServerOptions& o) {
    auto v = validate(o);
    return v.ok() ? std::string("(accepted)") : v.error().message;
  };
  ServerOptions o;
  CHECK(error(o) == "(accepted)");
  o.host = "0.0.0.0";
  CHECK(error(o).rfind("--host: 0.0.0.0 is not a loopback address", 0) == 0);
  o.allow_remote = true;
  CHECK(error(o) == "(accepted)");
  CHECK(is_loopback("127.0.0.1"));
  CHECK(is_loopback("127.5.6.7"));
  CHECK(is_loopback("::1"));
  CHECK(is_loopback("localhost"));
  CHECK_FALSE(is_loopback("10.0.0.1"));
  CHECK_FALSE(is_loopback("example.com"));
  ServerOptions bad;
  bad.threads = 0;
  CHECK(error(bad) == "--threads: must be between 1 and 64, got 0");
  bad = {};
  bad.port = 70000;
  CHECK(error(bad) == "--port: must be between 0 and 65535, got 70000");
  bad = {};
  bad.toggle_period = 0s;
  CHECK(error(bad) == "--toggle-period: must be > 0");
}

TEST_CASE("flaky server: stop cuts a hanging request and returns promptly") {
  ServerOptions o;
  o.hang_limit = 60s;
  Await arrived;
  arrived.attach(o, "/hang", /*pending=*/true);
  TestServer s(o);
  RawSocket raw(s.port());
  REQUIRE(raw.send("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK(arrived.get() == Outcome::Pending);  // the request is in, and hanging
  s.server->stop();
  int error = 99;
  CHECK(raw.receive_all(2000, &error).empty());
  CHECK(error == 0);
  CHECK(s.server->record().read(0, 10).entries[0].outcome == Outcome::Cut);
}

}  // namespace
}  // namespace cb::flaky

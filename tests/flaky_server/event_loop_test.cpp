// The server's event loop: connections cost a descriptor and a timer, never a thread, so silent,
// slow and pipelining clients cannot keep anyone else waiting; its limits, and exact counting.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cb/flaky/server.h"
#include "raw_socket.h"

namespace cb::flaky {
namespace {

using namespace std::chrono_literals;
using cb::testing::RawSocket;
using json = nlohmann::json;

std::unique_ptr<FlakyServer> start(ServerOptions o = {}) {
  o.port = 0;
  auto s = FlakyServer::start(o);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  return std::move(s).value();
}

// A fresh client with a 2 s bound on every step: generous for one request on loopback, far
// below what a server stalled behind its silent connections takes (seconds per 64 of them).
httplib::Client client(const FlakyServer& s) {
  httplib::Client c("127.0.0.1", s.port());
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(2, 0);
  return c;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("event loop: 300 silent connections and 100 half-sent requests keep no one waiting") {
  const auto s = start();  // one loop
  std::vector<std::unique_ptr<RawSocket>> held;
  for (int i = 0; i < 300; ++i) held.push_back(std::make_unique<RawSocket>(s->port()));
  for (int i = 0; i < 100; ++i) {
    held.push_back(std::make_unique<RawSocket>(s->port()));
    REQUIRE(held.back()->send("GET /fa"));
  }
  auto c = client(*s);
  for (int i = 0; i < 20; ++i) {
    auto r = c.Get("/count");
    REQUIRE_MESSAGE(r, httplib::to_string(r.error()));
    CHECK(r->body == "{\"count\": 0}");  // the half-sent requests reached no endpoint
  }
  auto fast = c.Get("/fast");
  REQUIRE(fast);
  CHECK(fast->status == 200);
}

TEST_CASE("event loop: /slow and /hang wait on a timer, not a thread") {
  ServerOptions o;
  o.threads = 1;
  o.hang_limit = 60s;
  const auto s = start(o);
  RawSocket hanging(s->port());
  RawSocket slow(s->port());
  REQUIRE(hanging.send("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(slow.send("GET /slow?ms=60000 HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto c = client(*s);
  auto r = c.Get("/fast");
  REQUIRE_MESSAGE(r, httplib::to_string(r.error()));
  CHECK(r->status == 200);
}

TEST_CASE("event loop: pipelined requests are answered in order, on one connection, none cut short") {
  const auto s = start();
  std::vector<std::unique_ptr<RawSocket>> idle;  // others waiting must not shorten the pipeline
  for (int i = 0; i < 10; ++i) idle.push_back(std::make_unique<RawSocket>(s->port()));
  RawSocket raw(s->port());
  REQUIRE(
      raw.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /bad HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /slow?ms=50 HTTP/1.1\r\nHost: x\r\n\r\n"
               "HEAD /always500 HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string replies = raw.receive_all(5000);
  const auto at = [&](const char* what) { return replies.find(what); };
  REQUIRE(at("HTTP/1.1 200 OK\r\n") != std::string::npos);
  CHECK(at("HTTP/1.1 400") > at("HTTP/1.1 200"));
  CHECK(at("slow but fine") > at("HTTP/1.1 400"));
  CHECK(at("HTTP/1.1 500") > at("slow but fine"));
  CHECK(at("{\"count\": 4}") > at("HTTP/1.1 500"));
  CHECK(occurrences(replies, "HTTP/1.1 ") == 5);
  CHECK(occurrences(replies, "Connection: close") == 1);   // only where the client asked for it
  CHECK(replies.find("always 500") == std::string::npos);  // HEAD: no body
}

TEST_CASE("event loop: a client that pipelines more than it reads is slowed, and still gets every answer") {
  const auto s = start();
  constexpr int kRequests = 20'000;  // ~2 MiB of answers: past the 1 MiB the server queues per connection
  RawSocket raw(s->port());
  std::string requests;
  for (int i = 0; i < kRequests; ++i) requests += "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
  requests += "GET /count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  // Everything is sent before a byte is read, so the server's queue for this client fills and it
  // stops parsing; reading then drains the queue, and the server must go on by itself with the
  // requests it has already read. (Should the kernel's buffers not hold all the requests, the
  // send blocks until the read below starts: hence a thread, and a bound on waiting for it.)
  std::promise<bool> sent;
  auto sent_future = sent.get_future();
  std::thread sender([&] { sent.set_value(raw.send(requests)); });
  (void)sent_future.wait_for(5s);
  const std::string replies = raw.receive_all(30'000);
  sender.join();
  CHECK(sent_future.get());
  CHECK(occurrences(replies, "HTTP/1.1 200 OK") == kRequests + 1);
  CHECK(replies.find("{\"count\": " + std::to_string(kRequests) + "}") != std::string::npos);
}

TEST_CASE("event loop: past --max-connections a new connection is answered 503 and closed") {
  ServerOptions o;
  o.max_connections = 2;
  const auto s = start(o);
  RawSocket first(s->port());
  RawSocket second(s->port());
  REQUIRE(first.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));  // both accepted and held (keep-alive)
  REQUIRE(second.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));
  RawSocket third(s->port());
  const std::string refused = third.receive_all(5000);
  CHECK(refused.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(refused.find("Connection: close") != std::string::npos);
  CHECK(s->record().count() <= 2);  // a refusal reaches no endpoint
}

TEST_CASE("event loop: the count stays exact with keep-alive, one-shot and pipelining clients at once") {
  ServerOptions o;
  o.record_capacity = 10'000;
  o.threads = 2;  // two loops sharing one record
  const auto s = start(o);
  constexpr int kClients = 6;
  constexpr int kEach = 300;
  constexpr int kPipelined = 2;
  constexpr int kBatches = 30;
  constexpr int kPerBatch = 10;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      auto c = client(*s);
      c.set_keep_alive(t % 2 == 0);
      for (int i = 0; i < kEach; ++i)
        if (!c.Get((i + t) % 2 == 0 ? "/fast" : "/always500")) failed.fetch_add(1);
    });
  }
  for (int t = 0; t < kPipelined; ++t) {
    threads.emplace_back([&] {
      RawSocket raw(s->port());
      std::string batch;
      for (int i = 0; i < kPerBatch; ++i) batch += "GET /bad HTTP/1.1\r\nHost: x\r\n\r\n";
      for (int b = 0; b < kBatches; ++b)
        if (!raw.send(batch)) failed.fetch_add(1);
      if (!raw.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) failed.fetch_add(1);
      const std::string replies = raw.receive_all(10'000);
      if (occurrences(replies, "HTTP/1.1 ") != kBatches * kPerBatch + 1) failed.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failed.load() == 0);
  const std::uint64_t expected = kClients * kEach + kPipelined * (kBatches * kPerBatch + 1);
  CHECK(s->record().count() == expected);
  const Page page = s->record().read(0, 100'000);
  REQUIRE(page.entries.size() == expected);
  std::uint64_t seq = 1;
  for (const Entry& e : page.entries) CHECK(e.seq == seq++);
}

TEST_CASE("event loop: a client that half-closes after its requests still gets every answer") {
  const auto s = start();
  RawSocket raw(s->port());
  REQUIRE(
      raw.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /slow?ms=100 HTTP/1.1\r\nHost: x\r\n\r\n"
               "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));
  raw.shutdown_write();  // done sending, still reading (RFC 9112 9.6)
  int error = 99;
  const std::string replies = raw.receive_all(5000, &error);
  CHECK(error == 0);
  CHECK(occurrences(replies, "HTTP/1.1 200 OK") == 3);
  CHECK(replies.find("slow but fine") != std::string::npos);
  const Page page = s->record().read(0, 10);
  REQUIRE(page.entries.size() == 3);
  for (const Entry& e : page.entries) CHECK(to_string(e.outcome) == "answered");
  SUBCASE("a half-close while a /slow waits, the request sent whole before it") {
    RawSocket late(s->port());
    REQUIRE(late.send("GET /slow?ms=100 HTTP/1.1\r\nHost: x\r\n\r\n"));
    // The FIN reaches the server while the answer waits (100 ms is far longer than a loopback
    // segment takes), which once ended the wait as client-gone.
    late.shutdown_write();
    CHECK(late.receive_all(5000).find("slow but fine") != std::string::npos);
  }
}

TEST_CASE("event loop: an HTTP/1.0 client asking for keep-alive is told it is kept") {
  const auto s = start();
  RawSocket raw(s->port());
  REQUIRE(
      raw.send("GET /fast HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
               "GET /bad HTTP/1.0\r\n\r\n"));
  int error = 99;
  const std::string replies = raw.receive_all(5000, &error);
  CHECK(error == 0);  // closed by the server after the second: it did not ask to keep it
  const auto second = replies.find("HTTP/1.1 400");
  REQUIRE(second != std::string::npos);
  CHECK(replies.substr(0, second).find("Connection: keep-alive\r\n") != std::string::npos);
  CHECK(replies.substr(second).find("Connection: close\r\n") != std::string::npos);
}

TEST_CASE("event loop: empty lines before a request are held to the head limit, and answered 431") {
  ServerOptions o;
  o.max_request_bytes = 16 * 1024;
  const auto s = start(o);
  RawSocket raw(s->port());
  // 200 KB of empty lines: once held in full and rescanned from the start on every read.
  std::string crlfs;
  for (int i = 0; i < 100'000; ++i) crlfs += "\r\n";
  (void)raw.send(crlfs);
  const std::string reply = raw.receive_all(5000);
  CHECK(reply.rfind("HTTP/1.1 431 ", 0) == 0);
  CHECK(s->record().count() == 0);
}

TEST_CASE("event loop: with four loops, arrival times never go back in seq order") {
  ServerOptions o;
  o.threads = 4;
  o.record_capacity = 40'000;
  const auto s = start(o);
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&] {
      RawSocket raw(s->port());
      std::string batch;
      for (int i = 0; i < 1000; ++i) batch += "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
      for (int round = 0; round < 8; ++round) {
        (void)raw.send(batch);
        std::string got;
        while (occurrences(got, "HTTP/1.1 200") < 1000) {
          const std::string more = raw.receive_some(5000);
          if (more.empty()) return;
          got += more;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  const Page page = s->record().read(0, 40'000);
  CHECK(page.entries.size() == 32'000);
  std::size_t backwards = 0;
  for (std::size_t i = 1; i < page.entries.size(); ++i)
    if (page.entries[i].t_us < page.entries[i - 1].t_us) ++backwards;
  CHECK(backwards == 0);
}

}  // namespace
}  // namespace cb::flaky

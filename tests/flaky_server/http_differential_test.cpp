// flaky-server's HTTP framing against a strict parser: the same bytes go to flaky-server and to a
// Node server on llhttp with no lenient flag (llhttp_server.mjs), each over its own connection
// that the client half-closes after sending. What each one framed as requests is read from its
// own log (flaky-server's record; the Node server's list).
//
// Two rules, over a few hundred shapes of request (smuggling shapes, control characters,
// folding, target forms, versions, pipelining, half-close):
//   - flaky-server frames no request llhttp would not: its requests are a prefix of llhttp's
//     (it may stop sooner, say after a request with a body it does not read, never go further);
//   - the shapes the RFC requires a server to accept are framed, exactly, by both.
//
// CB_DUMP_HTTP_CORPUS=dir writes every shape up to 16 KiB to dir (the fuzz target's committed corpus in
// grader/fuzz/corpus/request_head is made so).
#include <doctest/doctest.h>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cb/flaky/server.h"
#include "http_message.h"
#include "process.h"
#include "raw_socket.h"

namespace cb::flaky {
namespace {

using cb::testing::RawSocket;
using json = nlohmann::json;
using Framed = std::vector<std::string>;  // "GET /fast", in order

struct Shape {
  std::string name;
  std::string bytes;
  std::optional<Framed> required;  // the RFC requires these to be framed, exactly
  bool trickle = false;            // sent one byte per write
};

const std::string kHost = "Host: 127.0.0.1\r\n";

std::string get(const std::string& path, const std::string& headers = kHost) {
  return "GET " + path + " HTTP/1.1\r\n" + headers + "\r\n";
}

std::string hex_byte(unsigned c) {
  char out[8];
  std::snprintf(out, sizeof out, "%02x", c);
  return out;
}

std::vector<Shape> corpus() {
  std::vector<Shape> s;
  auto must = [&s](std::string name, std::string bytes, Framed framed, bool trickle = false) {
    s.push_back({std::move(name), std::move(bytes), std::move(framed), trickle});
  };
  auto may = [&s](std::string name, std::string bytes) { s.push_back({std::move(name), std::move(bytes), {}, false}); };

  // ---- What a server must accept --------------------------------------------------------------
  must("plain GET", get("/fast"), {"GET /fast"});
  must("a head sent a byte at a time", get("/fast"), {"GET /fast"}, true);
  must("HTTP/1.0 needs no Host", "GET /fast HTTP/1.0\r\n\r\n", {"GET /fast"});
  must("one empty line before the request", "\r\n" + get("/fast"), {"GET /fast"});
  must("three empty lines before the request", "\r\n\r\n\r\n" + get("/fast"), {"GET /fast"});
  must("absolute-form", "GET http://127.0.0.1/fast HTTP/1.1\r\n" + kHost + "\r\n", {"GET /fast"});
  must("absolute-form with a port and a query", "GET http://127.0.0.1:8110/slow?ms=0 HTTP/1.1\r\n" + kHost + "\r\n",
       {"GET /slow"});
  must("absolute-form, scheme in capitals", "GET HTTP://LOCALHOST/fast HTTP/1.1\r\n" + kHost + "\r\n", {"GET /fast"});
  must("absolute-form, https", "GET https://x/fast HTTP/1.1\r\n" + kHost + "\r\n", {"GET /fast"});
  must("absolute-form without a path", "GET http://127.0.0.1 HTTP/1.1\r\n" + kHost + "\r\n", {"GET /"});
  must("Host with a port", get("/fast", "Host: 127.0.0.1:8110\r\n"), {"GET /fast"});
  must("Host as an IPv6 literal", get("/fast", "Host: [::1]:8110\r\n"), {"GET /fast"});
  must("an empty Host", get("/fast", "Host:\r\n"), {"GET /fast"});
  must("header names in any case", get("/fast", "hOsT: x\r\nCONTENT-length: 0\r\n"), {"GET /fast"});
  must("no space after the colon", get("/fast", "Host:x\r\n"), {"GET /fast"});
  must("spaces and tabs around a value", get("/fast", "Host: \t x \t \r\n"), {"GET /fast"});
  must("a tab inside a value", get("/fast", kHost + "X-A: a\tb\r\n"), {"GET /fast"});
  must("obs-text in a value", get("/fast", kHost + "X-A: caf\xc3\xa9 \x80\xff\r\n"), {"GET /fast"});
  must("an empty value", get("/fast", kHost + "X-A:\r\n"), {"GET /fast"});
  must("a percent-encoded path", get("/%66ast"), {"GET /fast"});
  must("a query with every sub-delim", get("/fast?a=1&b=!$'()*+,;=:@/?"), {"GET /fast"});
  must("Content-Length 0 keeps the connection",
       "POST /fast HTTP/1.1\r\n" + kHost + "Content-Length: 0\r\n\r\n" + get("/fast"), {"POST /fast", "GET /fast"});
  must("Content-Length 000", "POST /fast HTTP/1.1\r\n" + kHost + "Content-Length: 000\r\n\r\n" + get("/bad"),
       {"POST /fast", "GET /bad"});
  must("two pipelined", get("/fast") + get("/always500"), {"GET /fast", "GET /always500"});
  must("three pipelined, trickled", get("/fast") + get("/bad") + get("/count"), {"GET /fast", "GET /bad", "GET /count"},
       true);
  {
    std::string ten;
    Framed framed;
    for (int i = 0; i < 10; ++i) {
      ten += get("/status/" + std::to_string(200 + i));
      framed.push_back("GET /status/" + std::to_string(200 + i));
    }
    must("ten pipelined", ten, framed);
  }
  must("pipelined around a /slow, then a half-close", get("/fast") + get("/slow?ms=30") + get("/fast"),
       {"GET /fast", "GET /slow", "GET /fast"});
  must("HTTP/1.0 keep-alive then another", "GET /fast HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + get("/bad"),
       {"GET /fast", "GET /bad"});
  must("Connection as a list with close", get("/fast", kHost + "Connection: TE, close\r\n") + get("/bad"),
       {"GET /fast"});
  must("Connection over two lines", get("/fast", kHost + "Connection: TE\r\nConnection: close\r\n") + get("/bad"),
       {"GET /fast"});
  for (const char* m : {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH"})
    must(std::string("method ") + m, std::string(m) + " /fast HTTP/1.1\r\n" + kHost + "\r\n",
         {std::string(m) + " /fast"});
  must("OPTIONS *", "OPTIONS * HTTP/1.1\r\n" + kHost + "\r\n", {"OPTIONS *"});
  must("a target of 8000 bytes", get("/fast?" + std::string(7990, 'a')), {"GET /fast"});
  {
    std::string many = kHost;
    for (int i = 0; i < 90; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    must("90 header lines", get("/fast", many), {"GET /fast"});
  }

  // ---- Framing a smuggler would use -----------------------------------------------------------
  const std::string smuggled = get("/always500");
  may("Content-Length twice, differing, a request as the body",
      "GET /fast HTTP/1.1\r\n" + kHost + "Content-Length: 0\r\nContent-Length: " + std::to_string(smuggled.size()) +
          "\r\n\r\n" + smuggled);
  may("Content-Length twice, the same",
      "GET /fast HTTP/1.1\r\n" + kHost + "Content-Length: 0\r\nContent-Length: 0\r\n\r\n" + smuggled);
  for (const char* v : {"0, 0", "0,30", "-1", "+0", "0x0", "1e1", "", " ", "0 0", "99999999999999999999", "0.0"})
    may(std::string("Content-Length '") + v + "'",
        "GET /fast HTTP/1.1\r\n" + kHost + "Content-Length: " + v + "\r\n\r\n" + smuggled);
  for (const char* te : {"chunked", "Chunked", "gzip", "chunked, gzip", "gzip, chunked", "chunked, chunked", "identity",
                         "xchunked", "chunked;q=1", ",", "\"chunked\""})
    may(std::string("Transfer-Encoding '") + te + "'",
        "POST /fast HTTP/1.1\r\n" + kHost + "Transfer-Encoding: " + te + "\r\n\r\n0\r\n\r\n" + smuggled);
  may("Transfer-Encoding and Content-Length", "POST /fast HTTP/1.1\r\n" + kHost +
                                                  "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" +
                                                  smuggled);
  may("Content-Length and Transfer-Encoding", "POST /fast HTTP/1.1\r\n" + kHost +
                                                  "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                                                  smuggled);
  may("Transfer-Encoding over two lines", "POST /fast HTTP/1.1\r\n" + kHost +
                                              "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                                              smuggled);
  may("Transfer-Encoding folded",
      "POST /fast HTTP/1.1\r\n" + kHost + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + smuggled);
  may("Transfer-Encoding in HTTP/1.0", "POST /fast HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled);
  may("a space before the colon of Transfer-Encoding",
      "POST /fast HTTP/1.1\r\n" + kHost + "Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n" + smuggled);
  may("a space before the colon of Content-Length",
      "GET /fast HTTP/1.1\r\n" + kHost + "Content-Length : 0\r\n\r\n" + smuggled);
  may("a body with Content-Length, then a request",
      "POST /fast HTTP/1.1\r\n" + kHost + "Content-Length: 5\r\n\r\nhello" + smuggled);
  may("a chunked body, then a request",
      "POST /fast HTTP/1.1\r\n" + kHost + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + smuggled);

  // ---- Control characters, in every part of a head --------------------------------------------
  for (unsigned c = 0; c < 0x20; ++c) {
    if (c == '\t') continue;  // a tab belongs in a value (above)
    const std::string ch(1, static_cast<char>(c));
    const std::string x = " 0x" + hex_byte(c);
    may("in the method" + x, "GE" + ch + "T /fast HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
    may("in the target" + x, "GET /fa" + ch + "st HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
    may("in the version" + x, "GET /fast HTTP/1" + ch + ".1\r\n" + kHost + "\r\n" + smuggled);
    may("in a header name" + x, get("/fast", kHost + "X-" + ch + "A: b\r\n") + smuggled);
    may("in a header value" + x, get("/fast", kHost + "X-A: a" + ch + "b\r\n") + smuggled);
    may("at the end of a header value" + x, get("/fast", kHost + "X-A: ab" + ch + "\r\n") + smuggled);
  }
  for (const unsigned c : {0x7fU, 0x80U, 0xffU}) {
    const std::string ch(1, static_cast<char>(c));
    const std::string x = " 0x" + hex_byte(c);
    may("in the method" + x, "GE" + ch + "T /fast HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
    may("in the target" + x, "GET /fa" + ch + "st HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
    may("in a header name" + x, get("/fast", kHost + "X-" + ch + "A: b\r\n") + smuggled);
  }
  may("DEL in a header value", get("/fast", kHost + "X-A: a\x7f"
                                                    "b\r\n") +
                                   smuggled);
  may("tab in a header name", get("/fast", kHost + "X\tA: b\r\n") + smuggled);
  may("tab in the target", "GET /fa\tst HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);

  // ---- Line ends --------------------------------------------------------------------------------
  may("bare LF everywhere", "GET /fast HTTP/1.1\nHost: x\n\n" + smuggled);
  may("bare LF after the request line", "GET /fast HTTP/1.1\n" + kHost + "\r\n" + smuggled);
  may("bare LF after a header", "GET /fast HTTP/1.1\r\nHost: x\n\r\n" + smuggled);
  may("bare LF as the empty line", "GET /fast HTTP/1.1\r\n" + kHost + "\n" + smuggled);
  may("bare CR after the request line", "GET /fast HTTP/1.1\r" + kHost + "\r\n" + smuggled);
  may("bare CR as the empty line", "GET /fast HTTP/1.1\r\n" + kHost + "\r\r\n" + smuggled);
  may("LF CR", "GET /fast HTTP/1.1\n\r" + kHost + "\r\n" + smuggled);
  may("bare LF before the request", "\n" + get("/fast"));
  may("bare CR before the request", "\r" + get("/fast"));
  may("CR CR LF before the request", "\r\r\n" + get("/fast"));
  may("space before the request", " " + get("/fast"));

  // ---- Folding and header-line shapes -----------------------------------------------------------
  may("a folded value (space)", get("/fast", kHost + "X-A: a\r\n b\r\n") + smuggled);
  may("a folded value (tab)", get("/fast", kHost + "X-A: a\r\n\tb\r\n") + smuggled);
  may("a folded first header", "GET /fast HTTP/1.1\r\n " + kHost + "\r\n" + smuggled);
  may("a space before a colon", get("/fast", kHost + "X-A : b\r\n") + smuggled);
  may("a tab before a colon", get("/fast", kHost + "X-A\t: b\r\n") + smuggled);
  may("no colon", get("/fast", kHost + "X-A b\r\n") + smuggled);
  may("an empty name", get("/fast", kHost + ": b\r\n") + smuggled);
  for (const char c : std::string("()<>@,;\\\"/[]?={} "))
    may(std::string("'") + c + "' in a header name", get("/fast", kHost + "X" + c + "A: b\r\n") + smuggled);

  // ---- Request lines and versions -------------------------------------------------------------
  for (const char* v : {"HTTP/1.2", "HTTP/1.9", "HTTP/2.0", "HTTP/0.9", "HTTP/3.0", "HTTP/1", "HTTP/1.", "HTTP/11",
                        "http/1.1", "HTTP/1.1 ", "HTTP /1.1", "HTTP/1.01", "HTTP/a.1", "HTTPS/1.1", "", "HTTP/1.1x"})
    may(std::string("version '") + v + "'", "GET /fast " + std::string(v) + "\r\n" + kHost + "\r\n" + smuggled);
  may("no version", "GET /fast\r\n" + kHost + "\r\n" + smuggled);
  may("two spaces before the target", "GET  /fast HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("two spaces after the target", "GET /fast  HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("tabs between the parts", "GET\t/fast\tHTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("a space inside the target", "GET /fa st HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("no target", "GET HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("a leading space", " GET /fast HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("only a method", "GET\r\n" + kHost + "\r\n" + smuggled);
  for (const char* m : {"FOO", "get", "Get", "BREW", "PROPFIND", "G(T", "CONNECT", "PRI", "SEARCH", "QUERY"})
    may(std::string("method ") + m, std::string(m) + " /fast HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("CONNECT in authority-form", "CONNECT 127.0.0.1:80 HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("a 60 KB method", std::string(60000, 'A') + " /fast HTTP/1.1\r\n" + kHost + "\r\n");

  // ---- Targets --------------------------------------------------------------------------------
  for (const char* t : {"fast", "*", "//fast", "/fa#st", "/fa\"st", "/fa{st", "/fa|st", "/fa\\st", "/fa^st", "/fa`st",
                        "/fa<st", "/fa%zzst", "/fa%2", "/fa%", "/%00", "/fast?%zz", "/fast?a b", "/fa[st]"})
    may(std::string("target '") + t + "'", "GET " + std::string(t) + " HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  for (const char* t : {"http://", "http:///fast", "http://@x/fast", "http://u:p@x/fast", "ftp://x/fast", "http://x?a",
                        "http:/x/fast", "httpx://x/fast", "http://[::1/fast", "http://x:80a/fast", "http://x y/fast"})
    may(std::string("absolute target '") + t + "'",
        "GET " + std::string(t) + " HTTP/1.1\r\n" + kHost + "\r\n" + smuggled);
  may("OPTIONS * in HTTP/1.0", "OPTIONS * HTTP/1.0\r\n\r\n" + smuggled);

  // ---- Host -------------------------------------------------------------------------------------
  may("HTTP/1.1 without Host", "GET /fast HTTP/1.1\r\n\r\n" + smuggled);
  may("two Host lines", get("/fast", kHost + "Host: other\r\n") + smuggled);
  may("two Host lines, HTTP/1.0", "GET /fast HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n" + smuggled);
  for (const char* h : {"a b", "a/b", "a@b", "a:b:c", "[::1", "a:port", "a,b", "\"a\""})
    may(std::string("Host '") + h + "'", get("/fast", "Host: " + std::string(h) + "\r\n") + smuggled);
  may("absolute-form without Host", "GET http://127.0.0.1/fast HTTP/1.1\r\n\r\n" + smuggled);

  // ---- Pipelines and ends -------------------------------------------------------------------------
  may("good, bad, good", get("/fast") + "GET /fa st HTTP/1.1\r\n" + kHost + "\r\n" + get("/always500"));
  may("good, no Host, good", get("/fast") + "GET /bad HTTP/1.1\r\n\r\n" + get("/always500"));
  may("Connection: close then more", get("/fast", kHost + "Connection: close\r\n") + get("/always500"));
  may("Connection: keep-alive in HTTP/1.0, then an HTTP/1.0 request",
      "GET /fast HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /bad HTTP/1.0\r\n\r\n" + smuggled);
  may("HTTP/1.0 without keep-alive, then more", "GET /fast HTTP/1.0\r\n\r\n" + smuggled);
  may("a head cut off by the half-close", "GET /fast HTTP/1.1\r\nHost: x\r\nX-A: b");
  may("a request line cut off by the half-close", "GET /fa");
  may("the empty line cut off", "GET /fast HTTP/1.1\r\n" + kHost + "\r");
  may("70000 empty lines", std::string(70000, '\n') + get("/fast"));
  may("35000 CRLFs", [] {
    std::string crlfs;
    for (int i = 0; i < 35000; ++i) crlfs += "\r\n";
    return crlfs + get("/fast");
  }());
  may("a 70 KB header", get("/fast", kHost + "X-A: " + std::string(70000, 'a') + "\r\n"));
  may("200 header lines", [] {
    std::string many = kHost;
    for (int i = 0; i < 200; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
    return get("/fast", many);
  }());
  may("a 9000-byte target", get("/fast?" + std::string(9000, 'a')) + smuggled);
  return s;
}

// What a connection framed, read back from flaky-server's record (and emptied for the next).
Framed framed_by_flaky(FlakyServer& server) {
  const Page page = server.record().read(0, 1000);
  Framed out;
  for (const Entry& e : page.entries) out.push_back(std::string(e.method_view()) + " " + std::string(e.path_view()));
  (void)server.record().reset();
  return out;
}

// llhttp hands over the target as sent; flaky-server records the path, percent-decoded.
std::string path_of(std::string url) {
  for (const char* scheme : {"http://", "https://", "HTTP://", "HTTPS://"}) {
    if (url.rfind(scheme, 0) != 0) continue;
    const auto slash = url.find_first_of("/?", std::strlen(scheme));
    url = slash == std::string::npos ? "/" : url.substr(slash);
  }
  // Decoded as the server decodes a path before it records it.
  return percent_decode(url.substr(0, url.find('?')), false).substr(0, 87);  // as the record keeps it
}

Framed framed_by_llhttp(httplib::Client& control) {
  const auto r = control.Post("/");
  REQUIRE(r);
  Framed out;
  for (const auto& e : json::parse(r->body)) out.push_back(e["method"].get<std::string>() + " " + path_of(e["url"]));
  return out;
}

// Sends the shape and half-closes; returns what came back (until the server closed).
std::string exchange(int port, const Shape& shape) {
  RawSocket sock(port);
  if (shape.trickle) {
    for (const char c : shape.bytes) (void)sock.send(std::string(1, c));
  } else {
    (void)sock.send(shape.bytes);
  }
  sock.shutdown_write();
  int error = 0;
  std::string reply = sock.receive_all(5000, &error);
  CHECK_MESSAGE(error != -1, shape.name << ": no close within 5 s");
  return reply;
}

std::string show(const Framed& f) {
  std::string out = "[";
  for (const auto& r : f) out += (out.size() > 1 ? ", " : "") + r;
  return out + "]";
}

bool is_prefix(const Framed& a, const Framed& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST_CASE("http framing: flaky-server frames no request llhttp would not, and every one the RFC requires") {
  cb::testing::Process node({"/usr/bin/node", LLHTTP_SERVER_JS});
  const auto ports = node.read_line();
  REQUIRE_MESSAGE(ports, "the llhttp server did not start: " << node.read_all_stderr());
  const int node_port = std::stoi(*ports);
  const int control_port = std::stoi(ports->substr(ports->find(' ') + 1));
  httplib::Client control("127.0.0.1", control_port);

  ServerOptions options;
  options.port = 0;
  auto started = FlakyServer::start(options);
  REQUIRE(started.ok());
  FlakyServer& flaky = *started.value();

  const std::vector<Shape> shapes = corpus();
  REQUIRE(shapes.size() >= 300);
  if (const char* dump = std::getenv("CB_DUMP_HTTP_CORPUS")) {
    std::filesystem::create_directories(dump);
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].bytes.size() > 16 * 1024) continue;  // the limits' shapes: the fuzzer grows its own
      std::ofstream(std::filesystem::path(dump) / ("shape-" + std::to_string(i)), std::ios::binary) << shapes[i].bytes;
    }
  }
  std::size_t required = 0;
  for (const Shape& shape : shapes) {
    (void)exchange(flaky.port(), shape);
    (void)exchange(node_port, shape);
    const Framed ours = framed_by_flaky(flaky);
    const Framed strict = framed_by_llhttp(control);
    CHECK_MESSAGE(is_prefix(ours, strict),
                  shape.name << ": flaky-server framed " << show(ours) << ", llhttp " << show(strict));
    if (shape.required) {
      ++required;
      CHECK_MESSAGE(ours == *shape.required, shape.name << ": flaky-server framed " << show(ours)
                                                        << ", the RFC requires " << show(*shape.required));
      CHECK_MESSAGE(strict == *shape.required,
                    shape.name << ": llhttp framed " << show(strict) << " (the case is wrong if llhttp is right)");
    }
  }
  MESSAGE(shapes.size() << " shapes, " << required << " of them required");
  node.signal(SIGTERM);
}

}  // namespace
}  // namespace cb::flaky

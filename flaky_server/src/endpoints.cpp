#include "endpoints.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "http_server.h"

namespace cb::flaky {
namespace {

using namespace std::chrono_literals;

void text(Call& c, int status, std::string body) {
  c.res.status = status;
  c.res.set_content(std::move(body), "text/plain");
}

// Waits as a slow or hanging dependency would, and says how the wait ended.
void wait_then(Call& c, std::chrono::microseconds d, int status, std::string body, Outcome if_elapsed) {
  switch (c.server.wait(c.conn, d)) {
    case HttpServer::Wake::Elapsed:
      c.outcome = if_elapsed;
      if (if_elapsed == Outcome::Answered) {
        text(c, status, std::move(body));
      } else {
        c.conn.ending = Connection::Ending::Drop;
      }
      return;
    case HttpServer::Wake::ClientGone:
      c.outcome = Outcome::ClientGone;
      c.conn.ending = Connection::Ending::Drop;
      return;
    case HttpServer::Wake::Stopping:
      c.outcome = Outcome::Cut;
      c.conn.ending = Connection::Ending::Drop;
      return;
  }
}

std::optional<long> number(std::string_view s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

void slow(Call& c) {
  auto d = c.server.options().slow_default;
  if (c.req.has_param("ms")) {
    const auto ms = number(c.req.get_param_value("ms"));
    if (!ms || *ms < 0 || *ms > 600'000) {
      text(c, 400, "ms must be a whole number of milliseconds between 0 and 600000\n");
      return;
    }
    d = std::chrono::milliseconds{*ms};
  }
  wait_then(c, d, 200, "slow but fine\n", Outcome::Answered);
}

// Healthy for the first period, failing for the next, and so on (seed 003's server), counted
// from when this server started.
void toggle(Call& c) {
  const auto period = c.server.options().toggle_period.count();
  const bool failing = (c.server.mono_us() / period) % 2 == 1;
  c.res.set_header("X-Toggle-State", failing ? "failing" : "healthy");
  if (failing) {
    text(c, 500, "failing (toggle)\n");
  } else {
    text(c, 200, "healthy (toggle)\n");
  }
}

void status_code(Call& c, std::string_view code_text) {
  const auto code = number(code_text);
  // 1xx is not a final answer, and a client would wait for the real one.
  if (!code || *code < 200 || *code > 599) {
    text(c, 404, "/status/NNN takes a status code from 200 to 599\n");
    return;
  }
  text(c, static_cast<int>(*code), "status " + std::string(code_text) + "\n");
}

}  // namespace

void serve_endpoint(Call& c) {
  const std::string_view path = c.req.path;
  const bool readable_method = c.req.method == "GET" || c.req.method == "HEAD";
  const bool known = path == "/fast" || path == "/always500" || path == "/bad" || path == "/count" ||
                     path == "/slow" || path == "/hang" || path == "/toggle" || path == "/reset" ||
                     path == "/garbage" || path.rfind("/status/", 0) == 0;
  if (!known) {
    text(c, 404, "no such endpoint\n");
    return;
  }
  if (!readable_method) {
    c.res.set_header("Allow", "GET, HEAD");
    text(c, 405, "only GET and HEAD\n");
    return;
  }
  if (path == "/fast") return text(c, 200, "fast\n");
  if (path == "/always500") return text(c, 500, "always 500\n");
  if (path == "/bad") return text(c, 400, "bad request, on purpose\n");
  if (path == "/count") {
    c.res.status = 200;
    c.res.set_content("{\"count\": " + std::to_string(c.arrival.count_answer) + "}", "application/json");
    return;
  }
  if (path == "/slow") return slow(c);
  if (path == "/hang") return wait_then(c, c.server.options().hang_limit, 0, {}, Outcome::HangLimit);
  if (path == "/toggle") return toggle(c);
  if (path == "/reset") {
    c.outcome = Outcome::Reset;
    c.conn.ending = Connection::Ending::Reset;
    return;
  }
  if (path == "/garbage") {
    c.outcome = Outcome::Garbage;
    c.conn.ending = Connection::Ending::Garbage;
    c.res.status = 200;  // never sent: the stream writes garbage instead
    return;
  }
  status_code(c, path.substr(8));
}

}  // namespace cb::flaky

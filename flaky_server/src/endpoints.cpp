#include "endpoints.h"
#include "cb/flaky/endpoints.h"

#include <charconv>
#include <string>
#include <string_view>

namespace cb::flaky {
namespace {

Reply text(int status, std::string body) {
  Reply r;
  r.response.status = status;
  r.response.body = std::move(body);
  return r;
}

std::optional<long> number(std::string_view s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

Reply slow(const Request& req, const ServerOptions& options) {
  auto d = options.slow_default;
  if (const auto ms_text = req.param("ms")) {
    const auto ms = number(*ms_text);
    if (!ms || *ms < 0 || *ms > 600'000)
      return text(400, "ms must be a whole number of milliseconds between 0 and 600000\n");
    d = std::chrono::milliseconds{*ms};
  }
  Reply r = text(200, "slow but fine\n");
  r.wait = d;
  return r;
}

// Healthy for the first period, failing for the next, and so on, counted from when this server
// started: a dependency that flaps.
Reply toggle(const ServerOptions& options, const Moment& at) {
  const bool failing = (at.mono_us / options.toggle_period.count()) % 2 == 1;
  Reply r = failing ? text(500, "failing (toggle)\n") : text(200, "healthy (toggle)\n");
  r.response.headers.emplace_back("X-Toggle-State", failing ? "failing" : "healthy");
  return r;
}

Reply status_code(std::string_view code_text) {
  const auto code = number(code_text);
  // 1xx is not a final answer, and a client would wait for the real one.
  if (!code || *code < 200 || *code > 599)
    return text(404, std::string(path::kStatus) + "NNN takes a status code from 200 to 599\n");
  return text(static_cast<int>(*code), "status " + std::string(code_text) + "\n");
}

}  // namespace

Reply serve_endpoint(const Request& req, const ServerOptions& options, const Moment& at) {
  const std::string_view path = req.path;
  const bool readable_method = req.method == "GET" || req.method == "HEAD";
  const bool known = path == path::kFast || path == path::kAlways500 || path == path::kBad || path == path::kCount ||
                     path == path::kSlow || path == path::kHang || path == path::kToggle || path == path::kReset ||
                     path == path::kGarbage || path.rfind(path::kStatus, 0) == 0;
  if (!known) return text(404, "no such endpoint\n");
  if (!readable_method) {
    Reply r = text(405, "only GET and HEAD\n");
    r.response.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (path == path::kFast) return text(200, "fast\n");
  if (path == path::kAlways500) return text(500, "always 500\n");
  if (path == path::kBad) return text(400, "bad request, on purpose\n");
  if (path == path::kCount) {
    Reply r = text(200, "{\"count\": " + std::to_string(at.count_answer) + "}");
    r.response.content_type = "application/json";
    return r;
  }
  if (path == path::kSlow) return slow(req, options);
  if (path == path::kHang) {
    Reply r;
    r.wait = options.hang_limit;
    r.outcome = Outcome::HangLimit;
    r.ending = Ending::Drop;
    return r;
  }
  if (path == path::kToggle) return toggle(options, at);
  if (path == path::kReset) {
    Reply r;
    r.outcome = Outcome::Reset;
    r.ending = Ending::Reset;
    return r;
  }
  if (path == path::kGarbage) {
    Reply r;
    r.outcome = Outcome::Garbage;
    r.ending = Ending::Garbage;
    return r;
  }
  return status_code(path.substr(path::kStatus.size()));
}

}  // namespace cb::flaky

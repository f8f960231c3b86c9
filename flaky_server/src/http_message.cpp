#include "http_message.h"

#include <algorithm>

namespace cb::flaky {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u >= 0x7f) return false;
  return std::string_view("()<>@,;:\\\"/[]?={}").find(c) == std::string_view::npos;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "%2F" -> "/"; a '%' not followed by two hex digits stays as it is. `plus_is_space` for query
// values, where a form encodes a space as '+'.
std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else if (plus_is_space && s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Parsed bad(int status, std::string reason) {
  Parsed p;
  p.kind = Parsed::Kind::Bad;
  p.status = status;
  p.reason = std::move(reason);
  return p;
}

}  // namespace

std::optional<std::string_view> Request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequal(k, name)) return std::string_view(v);
  return std::nullopt;
}

std::optional<std::string> Request::param(std::string_view name) const {
  std::string_view q = query;
  while (!q.empty()) {
    const auto amp = q.find('&');
    const std::string_view pair = q.substr(0, amp);
    const auto eq = pair.find('=');
    if (percent_decode(pair.substr(0, eq), true) == name)
      return eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

Parsed parse_request_head(std::string_view bytes, const HeadLimits& limits) {
  // Clients may send empty lines before a request (RFC 9112, 2.2); they are skipped.
  std::size_t start = 0;
  while (start < bytes.size() && (bytes[start] == '\r' || bytes[start] == '\n')) ++start;
  const std::string_view rest = bytes.substr(start);
  // The end of the head: the first empty line, CRLF CRLF or bare LF LF.
  std::size_t end = std::string_view::npos;
  std::size_t body_at = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '\n') continue;
    if (i + 1 < rest.size() && rest[i + 1] == '\n') {
      end = i;
      body_at = i + 2;
      break;
    }
    if (i + 2 < rest.size() && rest[i + 1] == '\r' && rest[i + 2] == '\n') {
      end = i;
      body_at = i + 3;
      break;
    }
  }
  if (end == std::string_view::npos) {
    const auto line_end = rest.find('\n');
    if (line_end == std::string_view::npos && rest.size() > limits.max_target_bytes + 32)
      return bad(414, "request line too long");
    if (rest.size() > limits.max_head_bytes) return bad(431, "request head too large");
    return {};
  }
  if (body_at > limits.max_head_bytes) return bad(431, "request head too large");

  Parsed out;
  Request& req = out.request;
  std::string_view head = rest.substr(0, end + 1);
  auto next_line = [&head]() {
    const auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  const std::string_view line = next_line();
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos)
    return bad(400, "not a request line");
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), is_token_char)) return bad(400, "not a method");
  if (target.size() > limits.max_target_bytes) return bad(414, "target too long");
  if (target.empty() || target.front() != '/') return bad(400, "not an origin-form target");
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) == 0x7f)
      return bad(400, "control character in target");
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return bad(400, "not HTTP/1.0 or HTTP/1.1");
  req.method = std::string(method);
  req.target = std::string(target);
  req.minor_version = version.back() - '0';
  const auto q = target.find('?');
  req.path = percent_decode(target.substr(0, q), false);
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));

  while (!head.empty()) {
    const std::string_view h = next_line();
    if (h.empty()) break;
    if (h.front() == ' ' || h.front() == '\t') return bad(400, "folded header line");
    const auto colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad(400, "header without a name");
    const std::string_view name = h.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char)) return bad(400, "bad header name");
    req.headers.emplace_back(std::string(name), std::string(trim(h.substr(colon + 1))));
  }
  const auto connection = req.header("Connection");
  if (req.minor_version == 0)
    req.keep_alive = connection && iequal(trim(*connection), "keep-alive");
  else
    req.keep_alive = !(connection && iequal(trim(*connection), "close"));
  const auto length = req.header("Content-Length");
  req.has_body = (length && trim(*length) != "0") || req.header("Transfer-Encoding").has_value();
  out.kind = Parsed::Kind::Done;
  out.consumed = start + body_at;
  return out;
}

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Status";
  }
}

std::string serialize(const Response& r, bool head_only, bool close) {
  std::string out;
  out.reserve(128 + r.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\nContent-Type: ";
  out += r.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(r.body.size());
  out += "\r\n";
  for (const auto& [k, v] : r.headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

}  // namespace cb::flaky

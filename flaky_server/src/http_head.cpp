// The request head parser: RFC 9112 as strictly as Node's llhttp (no lenient flags), never
// looser. tests/flaky_server/http_differential_test.cpp sends the same bytes to both and holds this
// file to that: no request framed here that llhttp would not frame.
//
// Why strict: a parser that frames a request another one reads as a body, or the other way
// round, is how requests are smuggled past a proxy. So where the RFC lets a recipient choose
// (a bare LF as a line end, a repeated Content-Length, a value with control characters), this
// one refuses, as llhttp does.

#include <algorithm>
#include <array>

#include "http_message.h"

namespace cb::flaky {
namespace {

// tchar (RFC 9110 5.6.2).
bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u >= 0x7f) return false;
  return std::string_view("()<>@,;:\\\"/[]?={}").find(c) == std::string_view::npos;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether s[i] starts a pct-encoded byte ("%2F"), as RFC 3986 allows one anywhere in a target.
bool pct_encoded_at(std::string_view s, std::size_t i) {
  return i + 2 < s.size() && s[i] == '%' && is_hex(s[i + 1]) && is_hex(s[i + 2]);
}

// unreserved / sub-delims / ":" / "@" (RFC 3986): what a path segment or a query may hold
// besides pct-encoded bytes, '/' and '?'.
bool is_pchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9')) return true;
  return std::string_view("-._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
}

// field-vchar / SP / HTAB (RFC 9110 5.5): obs-text (0x80-0xff) is allowed, as llhttp allows it;
// every other control character, DEL and a bare CR are not.
bool is_value_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
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

// The methods of RFC 9110 and PATCH (RFC 5789), as llhttp knows them (it knows more, and refuses
// the rest). CONNECT is not here: it asks for a tunnel, which this server does not make.
bool is_known_method(std::string_view m) {
  static constexpr std::array<std::string_view, 8> kMethods{"GET",    "HEAD",    "POST",  "PUT",
                                                            "DELETE", "OPTIONS", "TRACE", "PATCH"};
  return std::find(kMethods.begin(), kMethods.end(), m) != kMethods.end();
}

// path-abempty [ "?" query ] with every '%' followed by two hex digits.
bool is_path_and_query(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (!pct_encoded_at(s, i)) return false;
      i += 2;
    } else if (c != '/' && c != '?' && !is_pchar(c)) {
      return false;
    }
  }
  return true;
}

// uri-host [ ":" port ] (RFC 3986 3.2.2): a reg-name, an IPv4 address or an IP-literal. Empty is
// allowed: a client whose target has no authority sends an empty Host (RFC 9110 7.2).
bool is_authority(std::string_view s) {
  if (s.find('@') != std::string_view::npos) return false;  // userinfo: RFC 9110 4.2.4
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view literal = s.substr(1, close - 1);
    if (literal.empty() || !std::all_of(literal.begin(), literal.end(), [](char c) {
          return is_hex(c) || c == ':' || c == '.' || c == 'v' || c == 'V';
        }))
      return false;
    s.remove_prefix(close + 1);
    if (s.empty()) return true;
    if (s.front() != ':') return false;
    s.remove_prefix(1);
    return all_digits(s);
  }
  const auto colon = s.find(':');
  const std::string_view host = s.substr(0, colon);
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] == '%') {
      if (!pct_encoded_at(host, i)) return false;
      i += 2;
    } else if (!is_pchar(host[i]) || host[i] == ':' || host[i] == '@') {
      return false;
    }
  }
  if (colon == std::string_view::npos) return true;
  return all_digits(s.substr(colon + 1));
}

// The target in any form a server must accept (RFC 9112 3.2): origin-form, absolute-form with an
// http or https scheme (its path stands, its authority replaces Host), and asterisk-form for
// OPTIONS. Returns the path and query part, or nothing.
std::optional<std::string_view> path_of_target(std::string_view method, std::string_view target) {
  if (target == "*") return method == "OPTIONS" ? std::optional(target) : std::nullopt;
  if (!target.empty() && target.front() == '/') return is_path_and_query(target) ? std::optional(target) : std::nullopt;
  const auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  const std::string_view scheme = target.substr(0, scheme_end);
  if (!iequal(scheme, "http") && !iequal(scheme, "https")) return std::nullopt;
  std::string_view rest = target.substr(scheme_end + 3);
  const auto path_at = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, path_at);
  if (authority.empty() || !is_authority(authority)) return std::nullopt;
  if (path_at == std::string_view::npos) return std::string_view("/");
  rest.remove_prefix(path_at);
  if (rest.front() == '?') return std::nullopt;  // "http://h?q": no path to serve
  return is_path_and_query(rest) ? std::optional(rest) : std::nullopt;
}

// The elements of a comma-separated header list (RFC 9110 5.6.1), across all its lines, each
// trimmed, empty ones left out.
template <typename Each>
void for_each_element(const Request& req, std::string_view name, Each each) {
  for (const auto& [k, v] : req.headers) {
    if (!iequal(k, name)) continue;
    std::string_view list = v;
    while (!list.empty()) {
      const auto comma = list.find(',');
      const std::string_view element = trim(list.substr(0, comma));
      if (!element.empty()) each(element);
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
}

std::size_t count_of(const Request& req, std::string_view name) {
  return static_cast<std::size_t>(
      std::count_if(req.headers.begin(), req.headers.end(), [&](const auto& h) { return iequal(h.first, name); }));
}

// Host, Content-Length, Transfer-Encoding and Connection: the headers that decide where this
// request ends and whether another follows. Returns the refusal, if any.
std::optional<Parsed> check_framing(Request& req) {
  const std::size_t hosts = count_of(req, "Host");
  if (hosts > 1) return bad(400, "more than one Host");
  if (hosts == 0 && req.minor_version == 1) return bad(400, "an HTTP/1.1 request without Host");
  if (hosts == 1 && !is_authority(*req.header("Host"))) return bad(400, "not a host in Host");

  const std::size_t lengths = count_of(req, "Content-Length");
  const bool chunked_or_other = count_of(req, "Transfer-Encoding") > 0;
  if (lengths > 1) return bad(400, "more than one Content-Length");
  if (lengths == 1 && chunked_or_other) return bad(400, "both Content-Length and Transfer-Encoding");
  bool has_body = false;
  if (lengths == 1) {
    const std::string_view n = *req.header("Content-Length");
    if (n.empty() || n.size() > 18 || !all_digits(n)) return bad(400, "Content-Length is not a number");
    has_body = n.find_first_not_of('0') != std::string_view::npos;
  }
  if (chunked_or_other) {
    // Only chunked, once, last (RFC 9112 6.1 and 6.3): any other coding is one this server does
    // not know, and a request whose last coding is not chunked has no end a parser can find.
    std::size_t codings = 0;
    bool only_chunked = true;
    for_each_element(req, "Transfer-Encoding", [&](std::string_view coding) {
      ++codings;
      only_chunked = only_chunked && iequal(coding, "chunked");
    });
    if (codings == 0) return bad(400, "an empty Transfer-Encoding");
    if (!only_chunked) return bad(501, "a transfer coding other than chunked");
    if (codings > 1) return bad(400, "chunked more than once");
    has_body = true;
  }
  req.has_body = has_body;

  bool close = false;
  bool keep_alive = false;
  for_each_element(req, "Connection", [&](std::string_view option) {
    close = close || iequal(option, "close");
    keep_alive = keep_alive || iequal(option, "keep-alive");
  });
  req.keep_alive = req.minor_version == 0 ? keep_alive && !close : !close;
  return std::nullopt;
}

}  // namespace

Parsed parse_request_head(std::string_view bytes, const HeadLimits& limits, HeadScan& scan) {
  // Empty lines before a request are skipped (RFC 9112 2.2), but they count toward the head's
  // limit: otherwise a client sending nothing else would be held without bound.
  if (!scan.started) {
    std::size_t at = scan.skipped;
    while (at < bytes.size()) {
      if (bytes[at] == '\n') {
        ++at;
      } else if (bytes[at] == '\r' && at + 1 < bytes.size() && bytes[at + 1] == '\n') {
        at += 2;
      } else if (bytes[at] == '\r' && at + 1 == bytes.size()) {
        break;  // the LF may be on its way
      } else {
        scan.started = true;
        break;
      }
    }
    scan.skipped = scan.line_start = scan.searched = at;
    if (!scan.started) {
      if (at > limits.max_head_bytes) return bad(431, "empty lines beyond the head's limit");
      return {};
    }
  }
  const std::size_t start = scan.skipped;

  // The end of the head: the first empty line. Searching resumes where the last call stopped,
  // so a head that arrives a byte at a time costs its length once, not its length squared.
  std::size_t end = std::string_view::npos;  // the '\n' that ends the empty line
  for (;;) {
    const std::size_t nl = bytes.find('\n', scan.searched);
    if (nl == std::string_view::npos) {
      scan.searched = bytes.size();
      break;
    }
    const std::size_t line_start = scan.line_start;
    scan.line_start = scan.searched = nl + 1;
    if (line_start > start && (nl == line_start || (nl == line_start + 1 && bytes[line_start] == '\r'))) {
      end = nl;
      break;
    }
  }
  if (end == std::string_view::npos) {
    if (scan.line_start == start && bytes.size() - start > limits.max_target_bytes + 32)
      return bad(414, "request line too long");
    if (bytes.size() > limits.max_head_bytes) return bad(431, "request head too large");
    return {};
  }
  if (end + 1 > limits.max_head_bytes) return bad(431, "request head too large");

  Parsed out;
  Request& req = out.request;
  std::string_view head = bytes.substr(start, end + 1 - start);
  // Each line ends with CRLF and holds no other CR (llhttp refuses a bare LF or CR).
  std::string_view line_error;
  auto next_line = [&head, &line_error]() {
    const auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (line.empty() || line.back() != '\r') {
      line_error = "a line ending in a bare LF";
      return line;
    }
    line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) line_error = "a bare CR";
    return line;
  };
  const std::string_view line = next_line();
  if (!line_error.empty()) return bad(400, std::string(line_error));
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
  // HTTP-version = "HTTP/" DIGIT "." DIGIT; of those, 1.0 and 1.1 are served.
  const bool a_version = version.size() == 8 && version.substr(0, 5) == "HTTP/" && all_digits(version.substr(5, 1)) &&
                         version[6] == '.' && all_digits(version.substr(7, 1));
  if (!a_version) return bad(400, "not an HTTP version");
  if (version[5] != '1' || version[7] > '1') return bad(505, "not HTTP/1.0 or HTTP/1.1");
  const auto path_and_query = path_of_target(method, target);
  if (!path_and_query) return bad(400, "not a request target");
  if (!is_known_method(method)) return bad(501, "a method this server does not know");
  req.method = std::string(method);
  req.target = std::string(target);
  req.minor_version = version[7] - '0';
  const auto q = path_and_query->find('?');
  req.path = percent_decode(path_and_query->substr(0, q), false);
  if (q != std::string_view::npos) req.query = std::string(path_and_query->substr(q + 1));

  while (!head.empty()) {
    const std::string_view h = next_line();
    if (!line_error.empty()) return bad(400, std::string(line_error));
    if (h.empty()) break;
    if (h.front() == ' ' || h.front() == '\t') return bad(400, "folded header line");
    const auto colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad(400, "header without a name");
    const std::string_view name = h.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char)) return bad(400, "bad header name");
    const std::string_view value = trim(h.substr(colon + 1));
    if (!std::all_of(value.begin(), value.end(), is_value_char)) return bad(400, "a control character in a header");
    if (req.headers.size() == limits.max_headers) return bad(431, "too many header lines");
    req.headers.emplace_back(std::string(name), std::string(value));
  }
  if (auto refused = check_framing(req)) return std::move(*refused);
  out.kind = Parsed::Kind::Done;
  out.consumed = end + 1;
  return out;
}

Parsed parse_request_head(std::string_view bytes, const HeadLimits& limits) {
  HeadScan scan;
  return parse_request_head(bytes, limits, scan);
}

}  // namespace cb::flaky

#include "cb/utf8_text.h"

#include <cstdint>
#include <cstdio>

namespace cb {

std::size_t invalid_utf8_at(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6U) | (s[i + k] & 0x3FU);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string::npos;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t bad = invalid_utf8_at(text);
    if (bad == std::string::npos) {
      out.append(text);
      break;
    }
    out.append(text.substr(0, bad));
    out += '?';
    text.remove_prefix(bad + 1);
  }
  return out;
}

std::string printable(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      if (c == '\r')
        out += "\\r";
      else {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buf;
      ++i;
    } else if (c == 0xe2 && i + 2 < text.size()) {
      // U+202A-U+202E are E2 80 AA-AE; U+2066-U+2069 are E2 81 A6-A9.
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      const auto b2 = static_cast<unsigned char>(text[i + 2]);
      const unsigned cp = 0x2000U + ((b1 & 0x3fU) << 6U) + (b2 & 0x3fU);
      if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        out += buf;
        i += 2;
      } else {
        out += static_cast<char>(c);
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace cb

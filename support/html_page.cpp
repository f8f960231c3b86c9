#include "cb/html_page.h"

#include <cstdio>

#include "cb/hmac_sha256.h"
#include "cb/utf8_text.h"

namespace cb {

std::string html_escape(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    const auto c = static_cast<unsigned char>(ch);
    // Nor the noncharacters U+FFFE and U+FFFF (EF BF BE, EF BF BF), which are valid UTF-8.
    if (c == 0xef && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xbf &&
        (static_cast<unsigned char>(text[i + 2]) & 0xfeU) == 0xbe) {
      out += '?';
      i += 2;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 cannot hold control characters other than tab, newline and return, escaped
        // or not.
        out += (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') ? '?' : ch;
    }
  }
  return out;
}

std::string html_number(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {

std::string base64(const Digest& d) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < d.size(); i += 3) {
    const std::uint32_t n = (static_cast<std::uint32_t>(d[i]) << 16) |
                            (i + 1 < d.size() ? static_cast<std::uint32_t>(d[i + 1]) << 8 : 0U) |
                            (i + 2 < d.size() ? static_cast<std::uint32_t>(d[i + 2]) : 0U);
    out += kAlphabet[(n >> 18) & 63U];
    out += kAlphabet[(n >> 12) & 63U];
    out += i + 1 < d.size() ? kAlphabet[(n >> 6) & 63U] : '=';
    out += i + 2 < d.size() ? kAlphabet[n & 63U] : '=';
  }
  return out;
}

std::string page(std::string_view title, std::string_view body, std::string_view css, std::string_view script) {
  // The one script a page may run is named by its hash: anything else, an injected one included,
  // is refused by the browser.
  const std::string scripts = script.empty() ? std::string() : "; script-src 'sha256-" + base64(sha256(script)) + "'";
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'" +
         scripts +
         "\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
         html_escape(title) +
         "</title><style>"
         R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;background:#fff;margin:24px auto;max-width:1120px;padding:0 12px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}h3{font-size:15px;margin:14px 0 4px}
.meta{color:#444;margin:0 0 12px}.verdict-pass{color:#1b5e20;font-weight:600}.verdict-fail{color:#b71c1c;font-weight:600}
.verdict-error{color:#6a1b9a;font-weight:600}.verdict-skip{color:#8d6e00;font-weight:600}
svg{width:100%;height:auto;border:1px solid #ccc;background:#fff}svg text{font-size:11px;fill:#222}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:8px 0;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.sw{display:inline-block;width:14px;height:14px;border:1px solid #555;-webkit-print-color-adjust:exact;print-color-adjust:exact}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;white-space:pre-wrap}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:2px 8px;text-align:right}th{background:#f0f0f0}
@media print{body{margin:0;max-width:none}svg{border:none}figure,section{break-inside:avoid}})" +
         std::string(css) + "</style></head><body>\n" + std::string(body) +
         (script.empty() ? std::string() : "<script>" + std::string(script) + "</script>") + "</body></html>\n";
}

}  // namespace

std::string html_page(std::string_view title, std::string_view body, std::string_view css) {
  return page(title, body, css, {});
}

std::string html_page_with_script(std::string_view title, std::string_view body, std::string_view css,
                                  std::string_view script) {
  return page(title, body, css, script);
}

}  // namespace cb

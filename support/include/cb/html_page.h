#pragma once
// The frame every HTML page of the project shares: self-contained (inline CSS and SVG only), a
// Content-Security-Policy that forbids fetching anything or running any script, and a base style
// that prints. Used by cb-grade's report and cb-lab's scene pictures.

#include <string>
#include <string_view>

namespace cb {

// A whole page: `title` in the head, `body` as given, `css` after the base style.
[[nodiscard]] std::string html_page(std::string_view title, std::string_view body, std::string_view css = {});

// The same with one inline script, the only one the page's policy lets run (by its SHA-256):
// a page that sorts its own table, say. The page works without it.
[[nodiscard]] std::string html_page_with_script(std::string_view title, std::string_view body, std::string_view css,
                                                std::string_view script);

// A number with a fixed count of decimals, as SVG coordinates and labels want it: 12.5, 0.125.
[[nodiscard]] std::string html_number(double v, int decimals = 1);

// Text safe in HTML, SVG and XML, attribute values included: valid UTF-8 (bad bytes as '?'),
// markup characters as entities, and the characters XML 1.0 cannot hold at all as '?'.
[[nodiscard]] std::string html_escape(std::string_view text);

}  // namespace cb

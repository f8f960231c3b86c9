#pragma once
// The frame every HTML page of the project shares: self-contained (inline CSS and SVG only), a
// Content-Security-Policy that forbids fetching anything or running any script, and a base style
// that prints. Used by cb-grade's report and cb-lab's scene pictures.

#include <string>
#include <string_view>

namespace cb::grade {

// A whole page: `title` in the head, `body` as given, `css` after the base style.
[[nodiscard]] std::string html_page(std::string_view title, std::string_view body, std::string_view css = {});

// A number with a fixed count of decimals, as SVG coordinates and labels want it: 12.5, 0.125.
[[nodiscard]] std::string html_number(double v, int decimals = 1);

// Text safe in HTML and SVG, attribute values included.
[[nodiscard]] std::string html_escape(std::string_view text);

}  // namespace cb::grade

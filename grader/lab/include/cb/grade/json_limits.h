#pragma once
// JSON from a submission or a server, parsed with limits: nesting deeper than any lab file needs
// is refused before a tree is built, so a million brackets cost a scan, not a crash.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cb/result.h"

namespace cb::grade {

inline constexpr int kMaxJsonDepth = 32;

// Errors read "line 3, column 7: ..." or "nested deeper than 32 levels".
[[nodiscard]] Result<nlohmann::json> parse_bounded_json(std::string_view text, int max_depth = kMaxJsonDepth);
// The same checks (syntax, depth, a key twice in one object) without building the tree, for a
// reader that builds its own from the parser's events.
[[nodiscard]] Result<void> check_bounded_json(std::string_view text, int max_depth = kMaxJsonDepth);

// A value shown in a message: its JSON, cut to 40 characters.
[[nodiscard]] std::string clipped_dump(const nlohmann::json& v);

}  // namespace cb::grade

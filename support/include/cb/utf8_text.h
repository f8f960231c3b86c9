#pragma once
// Text from elsewhere (a program's files, its output, a request's path), made safe to show:
// checked as UTF-8, repaired, and written out so that it cannot steer the terminal reading it.

#include <string>
#include <string_view>

namespace cb {

// The first byte offset where `text` stops being UTF-8, or npos if it is all UTF-8.
[[nodiscard]] std::size_t invalid_utf8_at(std::string_view text) noexcept;

// `text` with every byte that is not part of valid UTF-8 replaced by '?': for messages that
// quote a piece of a file (a cut can split a character).
[[nodiscard]] std::string valid_utf8(std::string_view text);

// `text` as a terminal shows it harmlessly: valid UTF-8, and every character that would steer
// the terminal instead of being shown written out as an escape: control characters but newline
// and tab ("\x1b" for ESC, "\r"), the C1 controls ("\u009b", a one-byte CSI on some terminals)
// and the bidirectional overrides that make text read otherwise than it is ("\u202e").
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace cb

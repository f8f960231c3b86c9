#pragma once
// The lab's four files, read by their contracts (docs/LAB.md). A parser either returns
// the file's content or one line saying what is wrong and where; it never throws, and its time
// and memory are bounded by the input (which the caller has already bounded).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"

namespace cb::grade {

// state.json and ignore4xx.json. The contract's four keys with the contract's types; values
// are judged by the checks (a lower-case "open" parses, and fails the check with a hint).
struct StateFile {
  std::string state;
  std::int64_t failures = 0;
  std::int64_t window_size = 0;
  std::int64_t permitted_in_half_open = 0;
};
[[nodiscard]] Result<StateFile> parse_state_file(std::string_view text);

// fastfail.txt: before=<int> after=<int> blocked=<int> max_ms=<number>, keys in any order,
// extra spaces, a trailing newline or CRLF.
struct FastFail {
  std::int64_t before = 0;
  std::int64_t after = 0;
  std::int64_t blocked = 0;
  double max_ms = 0;
};
[[nodiscard]] Result<FastFail> parse_fastfail(std::string_view text);

// transitions.log: one FROM->TO per line, optionally after an ISO-8601 UTC timestamp and a space.
struct TransitionLine {
  int line = 0;  // 1-based, in the file
  std::string from;
  std::string to;
  std::optional<std::int64_t> at_us;  // microseconds since the Unix epoch, when stamped
  std::int64_t resolution_us = 0;     // what the stamp's last digit is worth (1000 for .012Z)
};
[[nodiscard]] Result<std::vector<TransitionLine>> parse_transitions(std::string_view text);

}  // namespace cb::grade

#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>

#include "cb/result.h"

namespace cb::cli {

// The whole of FILE, or of standard input for "-". At most `limit` bytes: more is an error
// rather than an allocation the size of whatever the input claims to be.
[[nodiscard]] Result<std::string> read_input(const std::string& path, std::size_t limit);

// One line of a line protocol, read as it comes and never past `limit` bytes: an input without
// an end of line (/dev/zero, a runaway writer) is refused once it is too long, not held.
enum class LineRead : std::uint8_t { Line, End, TooLong };
[[nodiscard]] LineRead read_line(std::istream& in, std::string& line, std::size_t limit);

}  // namespace cb::cli

#pragma once
// Reading a file named on the command line (a record, a rubric, a scenario) without trusting
// what the name leads to: only a regular file is read, and never more than a stated number of
// bytes. `/dev/zero`, a FIFO nobody writes to, or a directory would otherwise grow memory
// without bound or block forever; each is refused with one line that says what it is.

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>

#include "cb/result.h"

namespace cb {

// `what` names the expected content in the error ("record", "rubric", "scenario"), so a
// message reads "r.json: is a directory, not a rubric file".
// Errors: missing or unreadable, not a regular file, larger than `limit` bytes.
[[nodiscard]] Result<std::string> read_bounded_file(const std::string& path, std::size_t limit,
                                                    const std::string& what);

// Reads `fd` to its end, or until it has more than `limit` bytes (then it stops, at most 64 KiB
// past the limit, and the caller refuses it): a file can grow while it is read, whatever its size
// said.
// Errors: a failed read, named by errno.
[[nodiscard]] Result<std::string> read_at_most(int fd, std::size_t limit);

// One line of a line-by-line input, read as it comes and never past `limit` bytes (without its
// newline): an input without an end of line (/dev/zero, a runaway writer) is refused once it is
// too long, not held.
enum class LineRead : std::uint8_t { Line, End, TooLong };
[[nodiscard]] LineRead read_line(std::istream& in, std::string& line, std::size_t limit);

}  // namespace cb

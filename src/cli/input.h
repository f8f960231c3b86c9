#pragma once

#include <cstddef>
#include <string>

#include "cb/result.h"

namespace cb::cli {

// The whole of FILE, or of standard input for "-". At most `limit` bytes: more is an error
// rather than an allocation the size of whatever the input claims to be. A FILE is read only if
// it is a regular file (a device or a FIFO is refused at once, saying which); `what` names what
// it should have been ("trace").
[[nodiscard]] Result<std::string> read_input(const std::string& path, std::size_t limit, const std::string& what);

}  // namespace cb::cli

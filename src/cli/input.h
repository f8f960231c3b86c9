#pragma once

#include <cstddef>
#include <string>

#include "cb/result.h"

namespace cb::cli {

// The whole of FILE, or of standard input for "-". At most `limit` bytes: more is an error
// rather than an allocation the size of whatever the input claims to be.
[[nodiscard]] Result<std::string> read_input(const std::string& path, std::size_t limit);

}  // namespace cb::cli

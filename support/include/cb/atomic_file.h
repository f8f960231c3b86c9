#pragma once

#include <cstddef>
#include <string>

#include "cb/result.h"

namespace cb {

// Writes `content` to `path` atomically: a temporary file beside it, flushed, then renamed over
// it, so a reader sees the old file or the new one and never half of one. The temporary file
// has a random name and is created new (O_EXCL|O_NOFOLLOW, checked with fstat), as mkstemp makes
// one: nothing another process put in the directory can stand in for it. A character device at
// `path` (`-o /dev/null`, a terminal) is written to in place instead: a device is never replaced.
[[nodiscard]] Result<void> write_file_atomically(const std::string& path, const std::string& content);

// The same, for `name` (a plain file name) in the directory open at `dir_fd`; `shown` names it in
// errors. Nothing on the way is looked up by path.
[[nodiscard]] Result<void> write_file_atomically_at(int dir_fd, const std::string& name, const std::string& shown,
                                                    const std::string& content);

// The longest name write_file_atomically takes: NAME_MAX (255) less what the temporary name adds
// ("." before, ".tmp." and 8 random characters after). A NUL in a path is refused too.
inline constexpr std::size_t kMaxAtomicFileName = 255 - 14;

// mkdir -p: every missing directory on the way, and an error if `path` ends up not a directory.
[[nodiscard]] Result<void> make_directories(const std::string& path);

}  // namespace cb

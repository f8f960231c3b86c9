#pragma once
// What a folder holds, as one SHA-256: each entry's kind, path and content (a file's bytes by
// their own SHA-256, a link's target), in byte order of paths. Two folders have the same digest
// exactly when a program handed either would find the same files, links and folders in its box
// (a FIFO, a socket or a device is left out, as the box leaves it out). Names are hashed as their
// bytes, whatever their encoding.

#include <cstdint>
#include <string>

#include "cb/folder_walk.h"
#include "cb/result.h"

namespace cb {

struct DigestLimits {
  WalkLimits walk;
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  // of all files together
};

// The digest of the folder open at `dir` (shown as `shown` in errors).
// Errors: past the limits, or a folder or file that cannot be read (named).
[[nodiscard]] Result<std::string> folder_digest(int dir, const std::string& shown, const DigestLimits& limits = {});

}  // namespace cb

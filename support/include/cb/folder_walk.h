#pragma once
// The one walk over a folder somebody handed in: by descriptor from a folder already open, one
// name at a time, never through a link, never opening anything but a folder to walk into (a file
// is opened by the visitor, through open_known, only if it wants its bytes), in a bounded number of
// entries and levels, and in descriptors: at most one a level, and none for a level whose last name
// is the folder being walked (a chain of folders costs two), in byte order of names so that every
// walk of the same folder sees the same sequence. Iterative: no depth costs stack.

#include <sys/stat.h>

#include <cstddef>
#include <functional>
#include <string>

#include "cb/owned_fd.h"
#include "cb/result.h"

namespace cb {

struct WalkLimits {
  std::size_t max_entries = 100'000;  // files, folders, links and the rest, all levels together
  int max_depth = 64;                 // folders below the one walked
};

struct WalkEntry {
  std::string path;  // below the folder walked, '/'-separated
  std::string name;  // its last part
  int dir_fd = -1;   // the folder that holds it, open while the visit lasts (-1 when left)
  int depth = 0;     // 0: in the folder walked
  FileKind kind = FileKind::Other;
  struct stat st {};  // as the folder's listing had it (the link itself, for a link)

  // The entry opened for reading if it is a regular file now (FileKind::Regular: what was listed
  // may have been replaced since; the open sees what is there and opens nothing else).
  [[nodiscard]] KnownFile open_file() const { return open_known(dir_fd, name, FileKind::Regular, Resolve::NoLinks); }
};

enum class WalkStep : unsigned char {
  Next,        // go on (into a folder, for a folder)
  SkipFolder,  // a folder: do not walk into it
  Stop,        // end the walk here, as a success (what was looked for is found)
};

struct WalkError {
  enum class Why : unsigned char { TooMany, TooDeep, Unreadable, Refused };
  Why why = Why::Unreadable;  // Refused: what `visit` or `leave` returned
  std::string message;
};

// Calls `visit` for each entry below `root` (an open folder, shown as `shown` in errors), a folder
// before what it holds, and `leave` (if given) for a folder after what it holds.
// Errors: more entries or levels than `limits`, a folder that cannot be listed or was replaced by
// something else while walked, or the first error `visit` or `leave` returns (the walk stops).
[[nodiscard]] Result<void, WalkError> walk_folder(
    int root, const std::string& shown, const WalkLimits& limits,
    const std::function<Result<WalkStep>(const WalkEntry&)>& visit,
    const std::function<Result<void>(const WalkEntry&, int folder_fd)>& leave = {});

}  // namespace cb

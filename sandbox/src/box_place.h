#pragma once
// Where a box lives on the machine: a folder of its own in $TMPDIR that nobody but the grader and
// the box's uid may enter, of a bounded size, locked by its grader while it lives, and removed
// when it ends, or by the next grader when its own was killed. The lock is a file beside it
// (NAME.lock), linked into place already locked, so no grader ever sees a live box unlocked.
//
//   root:    a tmpfs mounted there (size and nr_inodes: the box's limits), root's, 0710, its
//            group the box's gid: the box's uid may pass through to what is its own, nobody else
//            may enter, and the mount point cannot be renamed or replaced by a program.
//   a user:  the folder is the user's, 0700 (the programs are the user's, or in a user
//            namespace), and the size is counted while a program runs (Box::usage).

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "cb/dir_handle.h"
#include "cb/result.h"

namespace cb::sandbox {

struct BoxPlace {
  std::string path;
  DirHandle root;           // its root (the tmpfs's)
  int lock = -1;            // NAME.lock, flock'd while the box lives
  bool mounted = false;     // a tmpfs of the box's size
  std::string not_mounted;  // why not (the size is then counted while programs run)
};

// `gid`: the box's group, which may pass through (root only).
[[nodiscard]] Result<BoxPlace> make_place(gid_t gid, std::uint64_t bytes, std::uint64_t files);

// Unmounted or emptied, and removed. Errors name what could not be removed.
[[nodiscard]] Result<void> remove_place(BoxPlace& place);

// Boxes in $TMPDIR whose grader is gone (nobody holds their lock) are removed: once a process,
// before its first box.
void sweep_left_boxes();

}  // namespace cb::sandbox

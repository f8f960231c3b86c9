#pragma once
// A directory held open by descriptor: named once (by the person at the keyboard, whose links
// are theirs to follow), and everything below it reached with openat, one name at a time, never
// through a symbolic link. The grader writes and reads where a student's folder may be: a link
// there is the student's, and following it as root writes wherever the student pointed.

#include <string>
#include <optional>
#include <string_view>

#include "cb/result.h"

namespace cb {

class DirHandle {
 public:
  DirHandle() = default;
  // `path` as named (its links followed); with `create`, made first (mkdir -p).
  [[nodiscard]] static Result<DirHandle> open(const std::string& path, bool create = false);
  // Takes over `fd`, an open directory, shown as `path` in messages.
  [[nodiscard]] static DirHandle adopt(int fd, std::string path) { return DirHandle(fd, std::move(path)); }
  DirHandle(DirHandle&& other) noexcept;
  DirHandle& operator=(DirHandle&& other) noexcept;
  DirHandle(const DirHandle&) = delete;
  DirHandle& operator=(const DirHandle&) = delete;
  ~DirHandle();

  // `rel` ("a/b"; "" or "." is this one again) below this directory, each part opened without
  // following a link (O_NOFOLLOW | O_DIRECTORY) and made (0755) where missing when `create`. A
  // part that is a symbolic link is refused, naming it and where it points.
  [[nodiscard]] Result<DirHandle> below(std::string_view rel, bool create = false) const;
  // A second descriptor of the same directory.
  [[nodiscard]] Result<DirHandle> dup() const;

  // `name` (a plain file name) written atomically here (cb/atomic_file.h's rules).
  [[nodiscard]] Result<void> write(const std::string& name, const std::string& content) const;
  // `name` removed if it is there: a file or a link (never what a link points to).
  [[nodiscard]] Result<void> remove(const std::string& name) const;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // The descriptor, given up: the caller closes it.
  [[nodiscard]] int release() noexcept;

 private:
  DirHandle(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// `path` made absolute and lexically clean ("/a/./b/../c" -> "/a/c"), without resolving links.
[[nodiscard]] std::string lexical_absolute(const std::string& path);

// Where `path` lies inside `folder` (both cleaned lexically; `folder` also as its links resolve):
// the part below it ("" for the folder itself), or nothing when it lies outside.
[[nodiscard]] std::optional<std::string> inside(const std::string& path, const std::string& folder);

// The directory `path` names, where it may lie in `folder`, a folder somebody handed in: the part
// inside the folder is walked with below() (a link there is refused), the part outside is opened
// as named. `create`: missing directories are made.
[[nodiscard]] Result<DirHandle> open_in_or_beside(const std::string& path, const std::string& folder, bool create);

}  // namespace cb

#pragma once
// One owned descriptor type for the whole project, and the one way a file somebody else made is
// opened: looked at first, opened only once it is known to be what the caller wants.
//
// Opening a name runs the open of whatever it names: a character device's driver (as root, a
// watchdog node reboots the machine), a FIFO's wait for a writer, a tape's rewind. So the name is
// first held with O_PATH, which runs no driver and follows no link unless told; its kind is read
// from that hold; only a regular file or a directory is then opened, through the hold itself, so
// the thing opened is the thing that was looked at, whatever is renamed meanwhile.

#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace cb {

class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd();

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  // The descriptor, given up: the caller closes it.
  [[nodiscard]] int release() noexcept;
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

enum class FileKind : std::uint8_t { Missing, Regular, Directory, Link, Fifo, CharDevice, BlockDevice, Socket, Other };

[[nodiscard]] FileKind kind_of(mode_t mode) noexcept;
// "a character device", "a directory", ...: for messages.
[[nodiscard]] const char* kind_text(FileKind kind) noexcept;

// How the name is resolved. Follow: as named, links followed (a path the person at the keyboard
// typed). NoLinks: a link as the last part is not followed (it is seen as FileKind::Link).
// Beneath: no part may lead outside `dir` (the kernel checks it: openat2 RESOLVE_BENEATH; on a
// kernel without openat2, no link is followed).
enum class Resolve : std::uint8_t { Follow, NoLinks, Beneath };

struct KnownFile {
  OwnedFd fd;                       // open for reading only when `kind` is what was wanted
  struct stat st {};                // what was looked at (valid when error == 0)
  FileKind kind = FileKind::Other;  // Missing when nothing has the name
  int error = 0;  // errno when it could not be looked at or opened (ENOENT with Missing; EXDEV, ELOOP, ...)
  [[nodiscard]] bool opened() const noexcept { return fd.valid(); }
};

// `name` below `dir` (AT_FDCWD: relative to the working folder), opened for reading only if it is
// a `want` (FileKind::Regular or FileKind::Directory). Anything else is returned unopened, with its
// kind: no driver's open has run.
[[nodiscard]] KnownFile open_known(int dir, const std::string& name, FileKind want, Resolve how);

}  // namespace cb

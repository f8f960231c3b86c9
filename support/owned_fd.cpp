#include "cb/owned_fd.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cb {

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

OwnedFd::~OwnedFd() { reset(); }

int OwnedFd::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void OwnedFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

FileKind kind_of(mode_t mode) noexcept {
  if (S_ISREG(mode)) return FileKind::Regular;
  if (S_ISDIR(mode)) return FileKind::Directory;
  if (S_ISLNK(mode)) return FileKind::Link;
  if (S_ISFIFO(mode)) return FileKind::Fifo;
  if (S_ISCHR(mode)) return FileKind::CharDevice;
  if (S_ISBLK(mode)) return FileKind::BlockDevice;
  if (S_ISSOCK(mode)) return FileKind::Socket;
  return FileKind::Other;
}

const char* kind_text(FileKind kind) noexcept {
  switch (kind) {
    case FileKind::Missing: return "missing";
    case FileKind::Regular: return "a regular file";
    case FileKind::Directory: return "a directory";
    case FileKind::Link: return "a symbolic link";
    case FileKind::Fifo: return "a FIFO (a pipe)";
    case FileKind::CharDevice: return "a character device";
    case FileKind::BlockDevice: return "a block device";
    case FileKind::Socket: return "a socket";
    case FileKind::Other: break;
  }
  return "not a regular file";
}

namespace {

// The hold: O_PATH runs no open of the thing named (no driver, no FIFO wait).
int hold(int dir, const std::string& name, Resolve how) {
  if (how == Resolve::Beneath) {
    open_how rule{};
    rule.flags = O_PATH | O_CLOEXEC;
    rule.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, dir, name.c_str(), &rule, sizeof rule);
    if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  }
  const int nofollow = how == Resolve::Follow ? 0 : O_NOFOLLOW;
  return ::openat(dir, name.c_str(), O_PATH | O_CLOEXEC | nofollow);
}

// The held regular file opened for reading. /proc/self/fd/N names exactly the inode held; where
// /proc is not mounted the name is opened again (never following a link, never waiting) and kept
// only if it is still the same inode.
int reopen_file(int held, const struct stat& seen, int dir, const std::string& name) {
  const std::string magic = "/proc/self/fd/" + std::to_string(held);
  int fd = ::open(magic.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0 || errno != ENOENT) return fd;
  fd = ::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return fd;
  struct stat now {};
  if (::fstat(fd, &now) != 0 || now.st_dev != seen.st_dev || now.st_ino != seen.st_ino) {
    ::close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

}  // namespace

KnownFile open_known(int dir, const std::string& name, FileKind want, Resolve how) {
  KnownFile out;
  const OwnedFd held(hold(dir, name, how));
  if (!held.valid()) {
    out.error = errno;
    if (out.error == ENOENT) out.kind = FileKind::Missing;
    return out;
  }
  if (::fstat(held.get(), &out.st) != 0) {
    out.error = errno;
    return out;
  }
  out.kind = kind_of(out.st.st_mode);
  if (out.kind != want) return out;
  int fd = -1;
  if (want == FileKind::Directory)
    fd = ::openat(held.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  else if (want == FileKind::Regular)
    fd = reopen_file(held.get(), out.st, dir, name);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  out.fd.reset(fd);
  return out;
}

}  // namespace cb

#include "cb/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cb/random_bytes.h"

namespace cb {
namespace {

// A name nobody can guess, so nobody can be waiting at it: a graded program that knows the
// report's path (from the grader's command line) could otherwise put a FIFO at a predictable
// temporary name and hang the grader's open.
std::string random_suffix() {
  static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string s;
  for (const char c : random_bytes(8)) s += digits[static_cast<unsigned char>(c) % (sizeof digits - 1)];
  return s;
}

Result<void> write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{std::strerror(errno)};
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// `-o /dev/null`, a terminal, `-o /dev/stdout`: written to in place, never replaced. Renaming a
// file over /dev/null once left a root-owned regular file there, and every program on the
// machine that wrote to /dev/null failed. No graded program can make a device (mknod needs a
// capability none of them has), so a device is only what root or the system put there; and
// /dev/stdout and /dev/stderr are links to this process's own descriptors. Any other FIFO is
// still replaced, not opened: a program could leave one at the report's path and hang the
// grader's open.
bool written_in_place(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) return true;
  char target[64] = {};
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  return n > 0 && std::string(target, static_cast<std::size_t>(n)).rfind("/proc/self/fd/", 0) == 0;
}

Result<void> write_in_place(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot write: " + std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{path + ": cannot write: it changed while it was opened"};
  }
  auto written = write_all(fd, content);
  ::close(fd);
  if (!written) return Error{path + ": cannot write: " + written.error().message};
  return {};
}

}  // namespace

Result<void> write_file_atomically(const std::string& path, const std::string& content) {
  // The system reads a path up to its first NUL: "st\0ate.json" would be written as "st".
  if (path.find('\0') != std::string::npos)
    return Error{path.substr(0, path.find('\0')) + "...: cannot write: a file name cannot hold a NUL byte"};
  if (written_in_place(path)) return write_in_place(path, content);
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Error{path + ": cannot write: " + std::strerror(errno)};
  auto written = write_file_atomically_at(dir_fd, base, path, content);
  ::close(dir_fd);
  return written;
}

Result<void> write_file_atomically_at(int dir_fd, const std::string& name, const std::string& shown,
                                      const std::string& content) {
  if (name.find('\0') != std::string::npos)
    return Error{shown.substr(0, shown.find('\0')) + "...: cannot write: a file name cannot hold a NUL byte"};
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return Error{shown + ": cannot write: not a plain file name"};
  if (name.size() > kMaxAtomicFileName)
    return Error{shown + ": cannot write: the name is " + std::to_string(name.size()) + " bytes, and at most " +
                 std::to_string(kMaxAtomicFileName) + " leave room for the temporary name beside it"};
  std::string tmp;
  int fd = -1;
  // O_EXCL|O_NOFOLLOW: the file is new and ours, never something already at that name (a FIFO
  // or a link someone left there), as mkstemp makes it.
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = "." + name + ".tmp." + random_suffix();
    fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return Error{shown + ": cannot write: " + std::strerror(errno)};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    return Error{shown + ": cannot write: the temporary file is not the new file it should be"};
  }
  if (auto written = write_all(fd, content); !written) {
    ::close(fd);
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return Error{shown + ": cannot write: " + written.error().message};
  }
  // renameat replaces whatever is at the name, a link included, and never follows one.
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return Error{shown + ": cannot write: " + std::strerror(e)};
  }
  return {};
}

Result<void> make_directories(const std::string& dir) {
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    const std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
      return Error{part + ": cannot create: " + std::strerror(errno)};
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return Error{dir + ": not a directory"};
  return {};
}

}  // namespace cb

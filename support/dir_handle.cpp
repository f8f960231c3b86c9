#include "cb/dir_handle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "cb/atomic_file.h"

namespace cb {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string joined(const std::string& dir, std::string_view name) {
  if (dir.empty() || dir == ".") return std::string(name);
  return dir + (dir.back() == '/' ? "" : "/") + std::string(name);
}

std::string link_target(int dir_fd, const std::string& name) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlinkat(dir_fd, name.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
}

}  // namespace

Result<DirHandle> DirHandle::open(const std::string& path, bool create) {
  if (path.find('\0') != std::string::npos) return Error{path + ": a path cannot hold a NUL byte"};
  if (create)
    if (auto made = make_directories(path); !made) return made.error();
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot open the directory: " + std::strerror(errno)};
  return DirHandle(fd, path);
}

DirHandle::DirHandle(DirHandle&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) { other.fd_ = -1; }

DirHandle& DirHandle::operator=(DirHandle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

DirHandle::~DirHandle() {
  if (fd_ >= 0) ::close(fd_);
}

int DirHandle::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Result<DirHandle> DirHandle::dup() const {
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return Error{path_ + ": " + std::strerror(errno)};
  return DirHandle(fd, path_);
}

Result<DirHandle> DirHandle::below(std::string_view rel, bool create) const {
  auto at = dup();
  if (!at) return at.error();
  for (std::size_t i = 0; i <= rel.size();) {
    const std::size_t slash = std::min(rel.find('/', i), rel.size());
    const std::string part(rel.substr(i, slash - i));
    i = slash + 1;
    if (part.empty() || part == ".") continue;
    const std::string shown = joined(at->path_, part);
    if (part == "..") return Error{shown + ": '..' is not followed below a directory held open"};
    int fd = ::openat(at->fd_, part.c_str(), kDirFlags);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(at->fd_, part.c_str(), 0755) != 0 && errno != EEXIST)
        return Error{shown + ": cannot create: " + std::strerror(errno)};
      fd = ::openat(at->fd_, part.c_str(), kDirFlags);
    }
    if (fd < 0) {
      const int e = errno;
      struct stat st {};
      // O_NOFOLLOW on a link fails with ELOOP (ENOTDIR with O_DIRECTORY on some kernels).
      if (::fstatat(at->fd_, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return Error{shown + ": a symbolic link (to " + link_target(at->fd_, part) +
                     "); the grader does not follow links in a folder handed in"};
      if (e == ENOTDIR) return Error{shown + ": not a directory"};
      return Error{shown + ": cannot open the directory: " + std::strerror(e)};
    }
    *at = DirHandle(fd, shown);
  }
  return at;
}

Result<void> DirHandle::write(const std::string& name, const std::string& content) const {
  return write_file_atomically_at(fd_, name, joined(path_, name), content);
}

Result<void> DirHandle::remove(const std::string& name) const {
  if (::unlinkat(fd_, name.c_str(), 0) == 0 || errno == ENOENT) return {};
  return Error{joined(path_, name) + ": cannot remove: " + std::strerror(errno)};
}

std::string lexical_absolute(const std::string& path) {
  std::string full = path;
  if (full.empty() || full[0] != '/') {
    char cwd[PATH_MAX];
    full = std::string(::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/") + "/" + path;
  }
  std::vector<std::string> parts;
  for (std::size_t i = 0; i <= full.size();) {
    const auto slash = std::min(full.find('/', i), full.size());
    std::string part = full.substr(i, slash - i);
    i = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(std::move(part));
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

std::optional<std::string> inside(const std::string& path, const std::string& folder) {
  const std::string p = lexical_absolute(path);
  std::vector<std::string> bases{lexical_absolute(folder)};
  char real[PATH_MAX];
  if (::realpath(folder.c_str(), real) != nullptr && bases.front() != real) bases.emplace_back(real);
  for (const std::string& base : bases) {
    if (p == base) return std::string();
    const std::string prefix = base == "/" ? "/" : base + "/";
    if (p.rfind(prefix, 0) == 0) return p.substr(prefix.size());
  }
  return std::nullopt;
}

Result<DirHandle> open_in_or_beside(const std::string& path, const std::string& folder, bool create) {
  const auto rel = inside(path, folder);
  if (!rel) return DirHandle::open(path, create);
  auto root = DirHandle::open(folder.empty() ? "." : folder);
  if (!root) return root.error();
  auto dir = root->below(*rel, create);
  if (!dir) return dir.error();
  return DirHandle::adopt(dir->release(), path);
}

}  // namespace cb

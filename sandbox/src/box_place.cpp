#include "box_place.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cb/random_bytes.h"
#include "cb/sandbox/box.h"

namespace cb::sandbox {
namespace {

constexpr const char* kPrefix = "cb-grade-box.";

std::string temp_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
}

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string random_name() {
  static constexpr char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string s;
  for (const char c : random_bytes(10)) s += digits[static_cast<unsigned char>(c) % (sizeof digits - 1)];
  return s;
}

// NAME.lock, held before it can be seen: made unnamed (O_TMPFILE), locked, then linked in.
// Where the file system has no O_TMPFILE, made by name and locked at once.
int locked_file(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) {
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::linkat(AT_FDCWD, ("/proc/self/fd/" + std::to_string(fd)).c_str(),
                                                        AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return -1;
  }
  return fd;
}

// A mount point's device differs from its parent's.
bool is_mount_point(const std::string& path) {
  struct stat self {
  }, parent{};
  return ::lstat(path.c_str(), &self) == 0 && ::stat((path + "/..").c_str(), &parent) == 0 &&
         self.st_dev != parent.st_dev;
}

}  // namespace

Result<BoxPlace> make_place(gid_t gid, std::uint64_t bytes, std::uint64_t files) {
  BoxPlace place;
  const std::string dir = temp_root();
  for (int attempt = 0; attempt < 100 && place.path.empty(); ++attempt) {
    const std::string name = kPrefix + random_name();
    const int lock = locked_file(dir, name + ".lock");
    if (lock < 0) continue;
    if (::mkdir((dir + "/" + name).c_str(), 0700) != 0) {
      ::unlink((dir + "/" + name + ".lock").c_str());
      ::close(lock);
      continue;
    }
    place.path = dir + "/" + name;
    place.lock = lock;
  }
  if (place.path.empty()) return Error{why("making a box in " + dir)};
  const bool root = ::geteuid() == 0;
  if (root) {
    const std::string options = "size=" + std::to_string(bytes) + ",nr_inodes=" + std::to_string(files) +
                                ",mode=0710,uid=0,gid=" + std::to_string(gid);
    if (::mount("tmpfs", place.path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0)
      place.mounted = true;
    else
      place.not_mounted = std::string("mounting its tmpfs: ") + std::strerror(errno);
  } else {
    place.not_mounted = "a tmpfs needs root";
  }
  // Without a tmpfs: root's, and only the box's group may pass through (0710); a user's, 0700.
  if (!place.mounted &&
      ((root && ::chown(place.path.c_str(), 0, gid) != 0) || ::chmod(place.path.c_str(), root ? 0710 : 0700) != 0)) {
    const auto e = why(place.path);
    ::rmdir(place.path.c_str());
    return Error{e};
  }
  auto held = DirHandle::open(place.path);
  if (!held) {
    const Error& e = held.error();
    (void)remove_place(place);
    return e;
  }
  place.root = std::move(held).value();
  return place;
}

Result<void> remove_place(BoxPlace& place) {
  if (place.path.empty()) return {};
  Result<void> out;
  // A detached tmpfs takes its files with it, however many or deep.
  if (place.mounted || is_mount_point(place.path)) {
    if (::umount2(place.path.c_str(), MNT_DETACH) != 0) out = Error{why("unmounting " + place.path)};
  } else {
    out = remove_tree(place.path);
  }
  place.root = DirHandle();
  if (::rmdir(place.path.c_str()) != 0 && errno != ENOENT && out) out = Error{why(place.path)};
  // The lock goes last: a box without one is one being made, and is left alone.
  if (out) ::unlink((place.path + ".lock").c_str());
  if (place.lock >= 0) ::close(place.lock);
  place.lock = -1;
  place.path.clear();
  return out;
}

void sweep_left_boxes() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string dir = temp_root();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    const uid_t me = ::geteuid();
    const std::string suffix = ".lock";
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(kPrefix, 0) != 0 || name.size() <= suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      // Only this user's (root's boxes are root's), never through a link.
      const int lock = ::open((dir + "/" + name).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (lock < 0) continue;
      struct stat st {};
      // Its lock is free: the grader that made it is gone (the kernel drops a dead process's).
      if (::fstat(lock, &st) != 0 || st.st_uid != me || !S_ISREG(st.st_mode) || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
        ::close(lock);
        continue;
      }
      BoxPlace left;
      left.path = dir + "/" + name.substr(0, name.size() - suffix.size());
      left.lock = lock;
      struct stat box {};
      if (::lstat(left.path.c_str(), &box) == 0 && S_ISDIR(box.st_mode) && box.st_uid == me) {
        (void)remove_place(left);
      } else {  // the box went, the lock stayed: only the lock
        ::unlink((dir + "/" + name).c_str());
        ::close(lock);
      }
    }
    ::closedir(d);
  });
}

}  // namespace cb::sandbox

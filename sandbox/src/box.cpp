#include "cb/sandbox/box.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include "box_place.h"
#include "cb/sandbox/cgroup.h"
#include "cb/sandbox/interrupt.h"
#include "cb/sandbox/limits.h"
#include "cb/folder_walk.h"
#include "uid_lease.h"

namespace cb::sandbox {
namespace {

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

// Copies the tree under `src` into `dst` (both open directories) on the one walk (folder_walk.h),
// never following a link: a symbolic link is copied as a link (the program meets it inside its own
// view), a FIFO, socket or device is skipped unopened. Files keep their times (a build that compares
// them, as the C++ kit's does, sees what the student left) and whether they are executable; the
// copy is the box's uid's alone.
class Copier {
 public:
  Copier(uid_t uid, gid_t gid, bool chown) : uid_(uid), gid_(gid), chown_(chown) {}

  Result<void> tree(int src, int dst, const std::string& shown) {
    to_.clear();
    to_.emplace_back(::fcntl(dst, F_DUPFD_CLOEXEC, 0));
    if (!to_.back().valid()) return Error{why("copying " + shown)};
    WalkLimits bounds;
    bounds.max_entries = kMaxCopyEntries;
    bounds.max_depth = kMaxCopyDepth;
    const auto walked = walk_folder(
        src, shown, bounds,
        [&](const WalkEntry& e) -> Result<WalkStep> {
          to_.resize(static_cast<std::size_t>(e.depth) + 1);  // back at this entry's folder
          CB_TRY_VOID(entry(e, to_.back().get(), shown + "/" + e.path));
          return WalkStep::Next;
        },
        [&](const WalkEntry& e, int) -> Result<void> {
          // A folder's times once what it holds is in it (each file made there changed them).
          own(to_.at(static_cast<std::size_t>(e.depth) + 1).get(), e.st);
          to_.resize(static_cast<std::size_t>(e.depth) + 1);
          return {};
        });
    if (walked) return {};
    switch (walked.error().why) {
      case WalkError::Why::TooMany:
        return Error{"the submission holds more than " + std::to_string(kMaxCopyEntries) +
                     " files; name the folder that holds only the submission (--submission DIR)"};
      case WalkError::Why::TooDeep: return Error{walked.error().message + "; not copied"};
      default: return Error{walked.error().message};
    }
  }

  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }

 private:
  Result<void> entry(const WalkEntry& e, int dst, const std::string& shown) {
    const char* name = e.name.c_str();
    if (e.kind == FileKind::Directory) {
      if (::mkdirat(dst, name, 0700) != 0) return Error{why("copying " + shown)};
      to_.emplace_back(::openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!to_.back().valid()) return Error{why("copying " + shown)};
      return {};
    }
    if (e.kind == FileKind::Link) {
      char target[PATH_MAX];
      const ssize_t n = ::readlinkat(e.dir_fd, name, target, sizeof target - 1);
      if (n < 0) return Error{why(shown)};
      target[n] = '\0';
      if (::symlinkat(target, dst, name) != 0) return Error{why("copying " + shown)};
      if (chown_) ::fchownat(dst, name, uid_, gid_, AT_SYMLINK_NOFOLLOW);
      return {};
    }
    if (e.kind != FileKind::Regular) {
      ++skipped_;
      return {};
    }
    const KnownFile from = e.open_file();
    if (!from.opened()) return Error{shown + ": changed while it was copied"};
    bytes_ += static_cast<std::uint64_t>(from.st.st_size);
    if (bytes_ > kMaxCopyBytes)
      return Error{"the submission is larger than " + std::to_string(kMaxCopyBytes >> 20) +
                   " MiB; name the folder that holds only the submission (--submission DIR)"};
    const mode_t mode = (from.st.st_mode & S_IXUSR) != 0 ? 0700 : 0600;
    const OwnedFd to(::openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!to.valid()) return Error{why("copying " + shown)};
    char buf[64 * 1024];
    // A file that grows while it is copied is copied at the size it had when it was counted.
    for (auto left = static_cast<std::uint64_t>(from.st.st_size); left > 0;) {
      const ssize_t n = ::read(from.fd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error{why("copying " + shown)};
      if (n == 0) break;
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(n), left));
      for (std::size_t done = 0; done < take;) {
        const ssize_t w = ::write(to.get(), buf + done, take - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return Error{why("copying " + shown)};
        done += static_cast<std::size_t>(w);
      }
      left -= take;
    }
    own(to.get(), from.st);
    return {};
  }

  void own(int fd, const struct stat& st) const {
    if (chown_) ::fchown(fd, uid_, gid_);
    const timespec times[2] = {st.st_atim, st.st_mtim};
    ::futimens(fd, times);
  }

  uid_t uid_;
  gid_t gid_;
  bool chown_;
  std::vector<OwnedFd> to_;  // the copy's folders down to the entry's, a descriptor a level
  std::size_t skipped_ = 0;
  std::uint64_t bytes_ = 0;
};

Result<void> make_owned_dir(const std::string& path, uid_t uid, gid_t gid, bool chown) {
  if (::mkdir(path.c_str(), 0700) != 0) return Error{why(path)};
  if (chown && ::chown(path.c_str(), uid, gid) != 0) return Error{why(path)};
  return {};
}

// mkdir -p inside the copy, each directory the box's uid's. Nothing runs in the box yet: the
// copy holds what the submission held, links as links.
Result<void> make_owned_dirs(const std::string& root, const std::string& rel, uid_t uid, gid_t gid, bool chown) {
  std::string at = root;
  std::string shown;
  for (std::size_t i = 0; i < rel.size();) {
    const auto slash = rel.find('/', i);
    const std::string part = rel.substr(i, slash == std::string::npos ? std::string::npos : slash - i);
    i = slash == std::string::npos ? rel.size() : slash + 1;
    if (part.empty()) continue;
    at += "/" + part;
    shown += (shown.empty() ? "" : "/") + part;
    struct stat st {};
    if (::lstat(at.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode))
        return Error{shown +
                     ": a symbolic link in the submission, where the output directory goes; the grader does "
                     "not follow links in a folder handed in"};
      if (!S_ISDIR(st.st_mode)) return Error{shown + ": is in the way of the output directory (not a directory)"};
      continue;
    }
    if (auto made = make_owned_dir(at, uid, gid, chown); !made) return made;
  }
  return {};
}

Result<std::string> real_dir(const std::string& path, const char* what) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return Error{path + ": " + what + ": " + std::strerror(errno)};
  struct stat st {};
  if (::stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) return Error{path + ": " + what + " is not a directory"};
  return std::string(buf);
}

}  // namespace

Result<std::unique_ptr<Box>, BoxError> Box::make(const BoxOptions& o) {
  const auto submissions = [](const Error& e) { return BoxError{e.message, true}; };
  const auto machines = [](const Error& e) { return BoxError{e.message, false}; };
  std::unique_ptr<Box> box(new Box());
  auto submission = real_dir(o.submission.empty() ? "." : o.submission, "the submission");
  if (!submission) return submissions(submission.error());
  box->submission_ = *submission;
  if (!o.out_dir.empty()) {
    // Inside or not is told from the names alone: a link in the submission is the student's, and
    // resolving it would put the output wherever they pointed. One inside is made in the copy
    // (where a link on its way is refused); one outside is the grader's, and must be there.
    const auto rel = inside(o.out_dir, o.submission.empty() ? "." : o.submission);
    box->out_inside_ = rel.has_value();
    if (rel) {
      box->out_rel_ = *rel;
      box->out_dir_ = box->submission_ + (rel->empty() || box->submission_ == "/" ? "" : "/") + *rel;
    } else {
      auto out = real_dir(o.out_dir, "the output directory");
      if (!out) return submissions(out.error());
      box->out_dir_ = *out;
    }
  }
  box->uid_ = ::getuid();
  box->gid_ = ::getgid();
  if (!o.copy) {
    box->copy_ = box->submission_;
    box->out_host_ = box->out_dir_;
    box->tmp_host_ = "/tmp";
    auto root = DirHandle::open(box->submission_);
    if (!root) return submissions(root.error());
    box->copy_root_ = std::move(root).value();
    if (!box->out_dir_.empty()) {
      auto out = box->out_inside_ ? box->copy_root_.below(box->out_rel_, true) : DirHandle::open(box->out_dir_);
      if (!out) return submissions(out.error());
      if (!box->out_inside_) box->out_root_ = std::move(out).value();
    }
    return box;
  }
  if (o.own_uid) {
    auto lease = UidLease::take(o.first_uid, o.uid_count);
    if (!lease) return machines(lease.error());
    box->lease_ = std::move(lease).value();
    box->uid_ = box->lease_->uid();
    box->gid_ = static_cast<gid_t>(box->lease_->uid());
  }
  const bool chown = box->lease_ != nullptr;
  if (o.cgroup) {
    // A leased uid names the group: one left under that name is a dead grader's, replaced.
    static std::atomic<unsigned> serial{0};
    const std::string name = box->lease_ ? "box-" + std::to_string(box->uid_)
                                         : "box-p" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    auto group = BoxCgroup::make(name, o.memory_bytes, o.processes);
    if (group)
      box->cgroup_ = std::move(group).value();
    else
      box->no_cgroup_why_ = group.error().message;
  }

  sweep_left_boxes();
  auto place = make_place(box->gid_, o.box_bytes, o.box_files);
  if (!place) return machines(place.error());
  box->place_ = std::make_unique<BoxPlace>(std::move(place).value());
  box->base_ = box->place_->path;
  box->box_bytes_ = o.box_bytes;
  box->box_files_ = o.box_files;
  live_boxes::add(box.get());
  box->copy_ = box->base_ + "/sub";
  box->tmp_host_ = box->base_ + "/tmp";
  if (auto made = make_owned_dir(box->copy_, box->uid_, box->gid_, chown); !made) return machines(made.error());
  if (auto made = make_owned_dir(box->tmp_host_, box->uid_, box->gid_, chown); !made) return machines(made.error());
  {
    const OwnedFd src(::open(box->submission_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    OwnedFd dst(::open(box->copy_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!src.valid()) return BoxError{why("copying " + box->submission_), true};
    if (!dst.valid()) return BoxError{why("copying " + box->submission_)};
    Copier copier(box->uid_, box->gid_, chown);
    if (auto copied = copier.tree(src.get(), dst.get(), box->submission_); !copied) {
      if (errno == ENOSPC)
        return BoxError{"the submission does not fit in its box (" + size_text(o.box_bytes) + " and " +
                            std::to_string(o.box_files) + " files: --limit-box-size, --limit-box-files)",
                        true};
      // What the copy refuses is in the folder (a name, a kind of file); the machine's own failures
      // to copy (out of memory, an I/O error) are not.
      return BoxError{copied.error().message, errno != ENOMEM && errno != EIO};
    }
    box->skipped_ = copier.skipped();
    // Held from before any program runs: what they left is read from here, whatever they did
    // to the names on the way (the fallback's uid may own them).
    box->copy_root_ = DirHandle::adopt(dst.release(), box->copy_);
  }
  if (box->out_dir_.empty()) return box;
  if (box->out_inside_) {
    if (auto made = make_owned_dirs(box->copy_, box->out_rel_, box->uid_, box->gid_, chown); !made)
      return submissions(made.error());
    box->out_host_ = box->copy_ + (box->out_rel_.empty() ? "" : "/" + box->out_rel_);
  } else {
    box->out_host_ = box->base_ + "/out";
    if (auto made = make_owned_dir(box->out_host_, box->uid_, box->gid_, chown); !made) return machines(made.error());
    auto out = DirHandle::open(box->out_host_);
    if (!out) return machines(out.error());
    box->out_root_ = std::move(out).value();
  }
  return box;
}

Result<DirHandle> Box::out_handle() const {
  if (out_dir_.empty()) return Error{"the box has no output directory"};
  if (!out_inside_) return out_root_.dup();
  auto out = copy_root_.below(out_rel_);
  if (!out) return Error{"the output directory " + out_dir_ + ": " + out.error().message};
  return DirHandle::adopt(out->release(), out_dir_);
}

Box::~Box() {
  wait_if_stopping();  // the stop tears it down
  live_boxes::remove(this);
}

void Box::tear_down() noexcept {
  // The fallback's programs have no PID namespace to end them: whatever still runs in the box's
  // group, or as its uid, goes before its files do (the full sandbox's are gone already).
  if (cgroup_) cgroup_->kill_all();
  cgroup_.reset();
  if (lease_) kill_uid(uid_);
  copy_root_ = DirHandle();
  out_root_ = DirHandle();
  if (place_) (void)remove_place(*place_);
}

Result<BoxUsage> Box::usage() const {
  BoxUsage u;
  if (!place_ || place_->path.empty()) return u;
  // Counted from the box's own root, never through a link, no further than just past the limit,
  // and holding one descriptor a level (the grader's descriptors are its classmates' too: a box
  // of 19,000 folders once held one each, and the next student's grading had none left; a chain
  // of folders holds two).
  WalkLimits bounds;
  bounds.max_entries = static_cast<std::size_t>(std::min<std::uint64_t>(box_files_, 1U << 24)) + 1;
  bounds.max_depth = static_cast<int>(bounds.max_entries);  // a chain as deep as the box may hold files
  const auto walked = walk_folder(place_->root.fd(), place_->path, bounds, [&](const WalkEntry& e) -> Result<WalkStep> {
    ++u.files;
    u.bytes += static_cast<std::uint64_t>(e.st.st_blocks) * 512;
    return u.files > box_files_ || u.bytes > box_bytes_ ? WalkStep::Stop : WalkStep::Next;
  });
  if (!walked) {
    switch (walked.error().why) {
      case WalkError::Why::TooMany:
      case WalkError::Why::TooDeep: u.files = box_files_ + 1; break;
      default: return Error{walked.error().message};
    }
  }
  u.over = u.files > box_files_ || u.bytes > box_bytes_;
  return u;
}

bool Box::bounded() const noexcept { return place_ && place_->mounted; }

const std::string& Box::unbounded_why() const noexcept {
  static const std::string none;
  return place_ ? place_->not_mounted : none;
}

bool Box::full() const {
  if (!bounded()) return false;
  struct statvfs v {};
  return ::fstatvfs(place_->root.fd(), &v) == 0 && (v.f_bavail == 0 || v.f_favail == 0);
}

namespace live_boxes {
namespace {
std::mutex g_mu;
std::set<Box*> g_boxes;
}  // namespace

void add(Box* box) {
  std::lock_guard lock(g_mu);
  g_boxes.insert(box);
}

void remove(Box* box) {
  // Under the lock: an interrupt that is tearing every box down finishes this one first.
  std::lock_guard lock(g_mu);
  if (g_boxes.erase(box) > 0) box->tear_down();
}

void tear_down_all() {
  std::lock_guard lock(g_mu);
  for (Box* box : g_boxes) box->tear_down();
  g_boxes.clear();
}
}  // namespace live_boxes

namespace {

// Everything under `top` removed, without following a link and without limit of depth: a walk
// with its own stack of open folders, each listed a batch of names at a time (a folder of
// 200,000 files costs one pass). A chain deeper than kMaxOpen is cut: its next folder is moved
// up beside the others at the top (renameat) and removed from there, so the walk never holds more
// than kMaxOpen descriptors, however deep a program made it.
constexpr std::size_t kMaxOpen = 64;
constexpr std::size_t kBatch = 4096;

struct Frame {
  int fd;
  std::string name;  // in the folder above; empty for the top
  std::vector<std::string> pending;
};

std::vector<std::string> list_some(int fd) {
  std::vector<std::string> names;
  const int listing = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  DIR* d = listing >= 0 ? ::fdopendir(listing) : nullptr;
  if (d == nullptr) {
    if (listing >= 0) ::close(listing);
    return names;
  }
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
    if (names.size() == kBatch) break;
  }
  ::closedir(d);
  return names;
}

Result<void> remove_under(int top, const std::string& shown) {
  std::vector<Frame> stack;
  stack.push_back({::fcntl(top, F_DUPFD_CLOEXEC, 0), "", {}});
  if (stack.back().fd < 0) return Error{why(shown)};
  unsigned moved = 0;
  Result<void> out;
  const auto fail = [&](const std::string& what) {
    out = Error{why(shown + "/" + what)};
    for (const Frame& f : stack) ::close(f.fd);
    return out;
  };
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.pending.empty()) {
      f.pending = list_some(f.fd);
      if (f.pending.empty()) {  // empty now: it goes from the folder above
        const std::string name = f.name;
        ::close(f.fd);
        stack.pop_back();
        if (!stack.empty() && ::unlinkat(stack.back().fd, name.c_str(), AT_REMOVEDIR) != 0) return fail(name);
        continue;
      }
    }
    const std::string name = std::move(f.pending.back());
    f.pending.pop_back();
    struct stat st {};
    if (::fstatat(f.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone already
    if (!S_ISDIR(st.st_mode)) {
      if (::unlinkat(f.fd, name.c_str(), 0) != 0 && errno != ENOENT) return fail(name);
      continue;
    }
    // A program may have taken its own permissions away from a folder it made.
    ::fchmodat(f.fd, name.c_str(), 0700, 0);
    if (stack.size() >= kMaxOpen) {
      std::string up;
      do up = ".cb-up-" + std::to_string(moved++);
      while (::faccessat(top, up.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0);
      if (::renameat(f.fd, name.c_str(), top, up.c_str()) != 0) return fail(name);
      stack.front().pending.push_back(up);
      continue;
    }
    const int sub = ::openat(f.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return fail(name);
    stack.push_back({sub, name, {}});
  }
  return out;
}

}  // namespace

Result<void> remove_tree(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Result<void>{} : Error{why(path)};
  if (!S_ISDIR(st.st_mode)) return ::unlink(path.c_str()) == 0 ? Result<void>{} : Error{why(path)};
  ::chmod(path.c_str(), 0700);
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Error{why(path)};
  auto r = remove_under(fd, path);
  ::close(fd);
  if (::rmdir(path.c_str()) != 0 && r) r = Error{why(path)};
  return r;
}

}  // namespace cb::sandbox

#include "cb/folder_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace cb {
namespace {

using Why = WalkError::Why;

WalkError unreadable(const std::string& what) { return WalkError{Why::Unreadable, what + ": " + std::strerror(errno)}; }

class Walk {
 public:
  Walk(const WalkLimits& limits, const std::function<Result<WalkStep>(const WalkEntry&)>& visit,
       const std::function<Result<void>(const WalkEntry&, int)>& leave)
      : limits_(limits), visit_(visit), leave_(leave) {}

  // NOLINTNEXTLINE(misc-no-recursion): bounded by limits_.max_depth
  Result<void, WalkError> folder(int dir, const std::string& rel, const std::string& shown, int depth) {
    auto names = listing(dir, shown);
    if (!names) return names.error();
    for (const std::string& name : *names) {
      WalkEntry e;
      e.name = name;
      e.path = rel.empty() ? name : rel + "/" + name;
      e.dir_fd = dir;
      e.depth = depth;
      const std::string at = shown + "/" + name;
      if (::fstatat(dir, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // gone since the listing: it is not there to walk
        return unreadable(at);
      }
      e.kind = kind_of(e.st.st_mode);
      auto step = visit_(e);
      if (!step) return WalkError{Why::Refused, step.error().message};
      if (*step == WalkStep::Stop) stopped_ = true;
      if (stopped_) return {};
      if (e.kind != FileKind::Directory || *step == WalkStep::SkipFolder) continue;
      if (depth + 1 > limits_.max_depth)
        return WalkError{Why::TooDeep, at + ": more than " + std::to_string(limits_.max_depth) + " folders deep"};
      const KnownFile sub = open_known(dir, name, FileKind::Directory, Resolve::NoLinks);
      if (!sub.opened())
        return sub.error != 0 ? unreadable(at)
                              : WalkError{Why::Unreadable, at + ": was replaced by " +
                                                               std::string(kind_text(sub.kind)) + " while it was read"};
      if (auto inner = folder(sub.fd.get(), e.path, at, depth + 1); !inner) return inner;
      if (stopped_) return {};
      if (leave_)
        if (auto left = leave_(e, sub.fd.get()); !left) return WalkError{Why::Refused, left.error().message};
    }
    return {};
  }

 private:
  // The folder's names, sorted, read through a descriptor of its own (closed before walking on,
  // so a walk holds one descriptor a level).
  Result<std::vector<std::string>, WalkError> listing(int dir, const std::string& shown) {
    const int own = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (own < 0) return unreadable(shown);
    DIR* d = ::fdopendir(own);
    if (d == nullptr) {
      ::close(own);
      return unreadable(shown);
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (++entries_ > limits_.max_entries) {
        ::closedir(d);
        return WalkError{Why::TooMany, "more than " + std::to_string(limits_.max_entries) + " files and folders"};
      }
      names.emplace_back(e->d_name);
    }
    const int e = errno;
    ::closedir(d);
    if (e != 0) return WalkError{Why::Unreadable, shown + ": " + std::strerror(e)};
    std::sort(names.begin(), names.end());
    return names;
  }

  const WalkLimits& limits_;
  const std::function<Result<WalkStep>(const WalkEntry&)>& visit_;
  const std::function<Result<void>(const WalkEntry&, int)>& leave_;
  std::size_t entries_ = 0;
  bool stopped_ = false;
};

}  // namespace

Result<void, WalkError> walk_folder(int root, const std::string& shown, const WalkLimits& limits,
                                    const std::function<Result<WalkStep>(const WalkEntry&)>& visit,
                                    const std::function<Result<void>(const WalkEntry&, int)>& leave) {
  return Walk(limits, visit, leave).folder(root, "", shown, 0);
}

}  // namespace cb

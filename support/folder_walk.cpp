#include "cb/folder_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

namespace cb {
namespace {

using Why = WalkError::Why;

WalkError unreadable(const std::string& what) { return WalkError{Why::Unreadable, what + ": " + std::strerror(errno)}; }

// One folder of the walk: its names, read whole and sorted, and where the walk is among them. Its
// descriptor is given up once its last name is a folder walked into (a chain of a thousand folders
// then holds two descriptors, not a thousand).
struct Level {
  OwnedFd dir;
  std::vector<std::string> names;
  std::size_t next = 0;
  std::string rel;    // its path below the folder walked ("" for that folder)
  std::string shown;  // as errors name it
  WalkEntry entered;  // the entry it was walked into as (for `leave`)
};

class Walk {
 public:
  Walk(const WalkLimits& limits, const std::function<Result<WalkStep>(const WalkEntry&)>& visit,
       const std::function<Result<void>(const WalkEntry&, int)>& leave)
      : limits_(limits), visit_(visit), leave_(leave) {}

  Result<void, WalkError> run(int root, const std::string& shown) {
    Level top;
    top.dir.reset(::fcntl(root, F_DUPFD_CLOEXEC, 0));
    if (!top.dir.valid()) return unreadable(shown);
    top.shown = shown;
    CB_TRY_VOID(list(top));
    std::vector<Level> stack;
    stack.push_back(std::move(top));
    while (!stack.empty()) {
      Level& at = stack.back();
      if (at.next == at.names.size()) {
        if (leave_ && stack.size() > 1)
          if (auto left = leave_(at.entered, at.dir.get()); !left) return WalkError{Why::Refused, left.error().message};
        stack.pop_back();
        continue;
      }
      auto inner = step(at, static_cast<int>(stack.size()) - 1);
      if (!inner) return inner.error();
      if (stopped_) return {};
      if (*inner) stack.push_back(std::move(**inner));
    }
    return {};
  }

 private:
  // The next name of `at`: visited, and the folder to walk into when it is one.
  Result<std::optional<Level>, WalkError> step(Level& at, int depth) {
    const std::string& name = at.names[at.next++];
    const bool last = at.next == at.names.size();
    WalkEntry e;
    e.name = name;
    e.path = at.rel.empty() ? name : at.rel + "/" + name;
    e.dir_fd = at.dir.get();
    e.depth = depth;
    const std::string shown = at.shown + "/" + name;
    if (::fstatat(at.dir.get(), name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return std::optional<Level>();  // gone since the listing
      return unreadable(shown);
    }
    e.kind = kind_of(e.st.st_mode);
    auto visited = visit_(e);
    if (!visited) return WalkError{Why::Refused, visited.error().message};
    if (*visited == WalkStep::Stop) stopped_ = true;
    if (stopped_ || e.kind != FileKind::Directory || *visited == WalkStep::SkipFolder) return std::optional<Level>();
    if (depth + 1 > limits_.max_depth)
      return WalkError{Why::TooDeep, shown + ": more than " + std::to_string(limits_.max_depth) + " folders deep"};
    KnownFile sub = open_known(at.dir.get(), name, FileKind::Directory, Resolve::NoLinks);
    if (!sub.opened())
      return sub.error != 0 ? unreadable(shown)
                            : WalkError{Why::Unreadable, shown + ": was replaced by " +
                                                             std::string(kind_text(sub.kind)) + " while it was read"};
    if (last) at.dir.reset();  // nothing more is opened through it
    Level inner;
    inner.dir = std::move(sub.fd);
    inner.rel = e.path;
    inner.shown = shown;
    e.dir_fd = -1;  // its folder's descriptor may be closed by the time it is left
    inner.entered = std::move(e);
    CB_TRY_VOID(list(inner));
    return std::optional<Level>(std::move(inner));
  }

  // The folder's names, sorted, read through a descriptor of its own, closed at once.
  Result<void, WalkError> list(Level& level) {
    const int own = ::openat(level.dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (own < 0) return unreadable(level.shown);
    DIR* d = ::fdopendir(own);
    if (d == nullptr) {
      ::close(own);
      return unreadable(level.shown);
    }
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (++entries_ > limits_.max_entries) {
        ::closedir(d);
        return WalkError{Why::TooMany, "more than " + std::to_string(limits_.max_entries) + " files and folders"};
      }
      level.names.emplace_back(e->d_name);
    }
    const int e = errno;
    ::closedir(d);
    if (e != 0) return WalkError{Why::Unreadable, level.shown + ": " + std::strerror(e)};
    std::sort(level.names.begin(), level.names.end());
    return {};
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
  return Walk(limits, visit, leave).run(root, shown);
}

}  // namespace cb

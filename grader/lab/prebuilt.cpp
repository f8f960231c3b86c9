#include "cb/grade/prebuilt.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace cb::grade {
namespace {

constexpr std::size_t kMarkLength = sizeof kHarnessMark - 1;

// Whether the open regular file holds the mark (read in chunks, a mark's length kept across
// them), or starts as an ELF executable.
bool holds(int fd, Prebuilt rule) {
  std::vector<char> buf(1 << 20);
  std::size_t kept = 0;
  bool first = true;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + kept, buf.size() - kept);
    if (n <= 0) return false;
    const std::size_t have = kept + static_cast<std::size_t>(n);
    if (first && rule == Prebuilt::AllRefused && have >= 4 &&
        std::memcmp(buf.data(),
                    "\x7f"
                    "ELF",
                    4) == 0)
      return true;
    first = false;
    if (::memmem(buf.data(), have, kHarnessMark, kMarkLength) != nullptr) return true;
    kept = std::min(have, kMarkLength - 1);
    std::memmove(buf.data(), buf.data() + have - kept, kept);
  }
}

}  // namespace

Result<Prebuilt> parse_prebuilt(std::string_view text) {
  if (text == "harness") return Prebuilt::HarnessRefused;
  if (text == "all") return Prebuilt::AllRefused;
  if (text == "none") return Prebuilt::NoneRefused;
  return Error{"'" + std::string(text) +
               "' is not harness (a copy of cb-lab or cb-grade refused), all (any executable refused) or none"};
}

std::optional<std::string> prebuilt_in(const DirHandle& root, Prebuilt rule) {
  if (rule == Prebuilt::NoneRefused) return std::nullopt;
  struct Open {
    int fd;
    std::string path;
  };
  std::vector<Open> todo{{::fcntl(root.fd(), F_DUPFD_CLOEXEC, 0), ""}};
  std::optional<std::string> found;
  while (!todo.empty()) {
    const Open at = todo.back();
    todo.pop_back();
    DIR* d = at.fd >= 0 ? ::fdopendir(at.fd) : nullptr;
    if (d == nullptr) {
      if (at.fd >= 0) ::close(at.fd);
      continue;
    }
    ::rewinddir(d);  // a duplicate shares the offset of the descriptor it came from
    while (const dirent* e = ::readdir(d)) {
      if (found) break;
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      const std::string path = at.path.empty() ? e->d_name : at.path + "/" + e->d_name;
      const int fd = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) continue;  // a link, or not to be read
      struct stat st {};
      if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        todo.push_back({fd, path});
        continue;
      }
      if (S_ISREG(st.st_mode) && holds(fd, rule)) found = path;
      ::close(fd);
    }
    ::closedir(d);
  }
  for (const Open& o : todo) ::close(o.fd);
  return found;
}

std::string prebuilt_reason(const std::string& path, Prebuilt rule) {
  if (rule == Prebuilt::AllRefused)
    return path +
           " is a prebuilt program, and this assignment grades only programs built from their sources in "
           "the box (refuse_prebuilt: all)";
  return path +
         " is a copy of this project's cb-lab or cb-grade: the conformance part grades the student's own "
         "breaker, not the harness's";
}

}  // namespace cb::grade

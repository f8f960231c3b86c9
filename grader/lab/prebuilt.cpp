#include "cb/grade/prebuilt.h"

#include "cb/folder_walk.h"

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
  std::optional<std::string> found;
  // A folder that cannot be walked to its end (past the walk's bounds) is searched as far as it
  // goes: the box it was copied into holds no more than that.
  (void)walk_folder(root.fd(), root.path(), WalkLimits{}, [&](const WalkEntry& e) -> Result<WalkStep> {
    if (e.kind != FileKind::Regular) return WalkStep::Next;
    const KnownFile file = e.open_file();
    if (file.opened() && holds(file.fd.get(), rule)) {
      found = e.path;
      return WalkStep::Stop;
    }
    return WalkStep::Next;
  });
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

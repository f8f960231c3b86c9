#include "cb/folder_digest.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "cb/hmac_sha256.h"

namespace cb {
namespace {

// A file's bytes through SHA-256, read in pieces: a large file costs a buffer, not its size.
Result<std::string> file_sha256(int fd, const std::string& shown, std::uint64_t& budget) {
  Sha256 h;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{shown + ": " + std::strerror(errno)};
    if (n == 0) break;
    if (static_cast<std::uint64_t>(n) > budget) return Error{"more bytes of files than the digest reads"};
    budget -= static_cast<std::uint64_t>(n);
    h.update(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  return hex(h.finish());
}

}  // namespace

Result<std::string> folder_digest(int dir, const std::string& shown, const DigestLimits& limits) {
  std::string lines;
  std::uint64_t budget = limits.max_bytes;
  const auto walked = walk_folder(dir, shown, limits.walk, [&](const WalkEntry& e) -> Result<WalkStep> {
    const std::string at = shown + "/" + e.path;
    switch (e.kind) {
      case FileKind::Directory: lines += "d " + e.path + "\t\n"; break;
      case FileKind::Link: {
        char target[PATH_MAX];
        const ssize_t n = ::readlinkat(e.dir_fd, e.name.c_str(), target, sizeof target - 1);
        if (n < 0) return Error{at + ": " + std::strerror(errno)};
        lines += "l " + e.path + "\t" + std::string(target, static_cast<std::size_t>(n)) + "\n";
        break;
      }
      case FileKind::Regular: {
        const KnownFile f = e.open_file();
        if (!f.opened()) return Error{at + ": changed while it was read"};
        auto sha = file_sha256(f.fd.get(), at, budget);
        if (!sha) return sha.error();
        lines += std::string((f.st.st_mode & S_IXUSR) != 0 ? "x " : "f ") + e.path + "\t" + *sha + "\n";
        break;
      }
      default: break;  // not in the box either
    }
    return WalkStep::Next;
  });
  if (!walked) return Error{walked.error().message};
  return hex(sha256(lines));
}

}  // namespace cb

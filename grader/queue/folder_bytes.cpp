#include "cb/grade/folder_bytes.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cb/folder_walk.h"
#include "cb/hmac_sha256.h"
#include "cb/owned_fd.h"
#include "cb/utf8_text.h"

namespace cb::grade {
namespace {

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string size_text(std::uint64_t bytes) {
  return bytes % (1U << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

// One entry of the walk into `out`: a folder, a link (its target), a regular file (its bytes);
// a FIFO, a socket or a device is left out, as the box leaves it out, and never opened.
Result<WalkStep> take(const WalkEntry& e, const std::string& shown, const FolderLimits& limits, FolderBytes& out) {
  if (e.kind == FileKind::Directory) {
    out.entries.push_back({e.path, FolderEntry::Kind::Folder, ""});
    return WalkStep::Next;
  }
  if (e.kind == FileKind::Link) {
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(e.dir_fd, e.name.c_str(), target, sizeof target - 1);
    if (n < 0) return Error{why(shown)};
    out.entries.push_back({e.path, FolderEntry::Kind::Link, std::string(target, static_cast<std::size_t>(n))});
    return WalkStep::Next;
  }
  if (e.kind != FileKind::Regular) return WalkStep::Next;
  const KnownFile file = e.open_file();
  if (!file.opened()) return Error{shown + ": changed while it was read"};
  out.bytes += static_cast<std::uint64_t>(file.st.st_size);
  if (out.bytes > limits.max_bytes) return Error{"more than " + size_text(limits.max_bytes) + " of files"};
  std::string bytes(static_cast<std::size_t>(file.st.st_size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = ::read(file.fd.get(), bytes.data() + got, bytes.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Error{why(shown)};
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  bytes.resize(got);  // a file that shrank while it was read is carried as read
  std::string sha = hex(sha256(bytes));
  const bool exec = (file.st.st_mode & S_IXUSR) != 0;
  out.entries.push_back({e.path, exec ? FolderEntry::Kind::Executable : FolderEntry::Kind::File, sha});
  out.blobs.emplace(std::move(sha), std::move(bytes));
  return WalkStep::Next;
}

std::string hex_of(const std::string& bytes) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::optional<std::string> bytes_of_hex(const std::string& text) {
  if (text.size() % 2 != 0) return std::nullopt;
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = digit(text[i]);
    const int lo = digit(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

bool safe_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  std::size_t at = 0;
  for (;;) {
    const auto slash = path.find('/', at);
    const std::string part = path.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) return true;
    at = slash + 1;
  }
}

}  // namespace

std::string FolderBytes::sha256() const {
  std::string text;
  for (const FolderEntry& e : entries)
    text += std::string(1, static_cast<char>(e.kind)) + " " + e.path + "\t" + e.ref + "\n";
  return hex(cb::sha256(text));
}

// A listing is JSON, whose strings are UTF-8; a name is bytes. A path or link target that is not
// UTF-8 travels as hex, said by a fourth cell ("p": the path, "r": the target), so that two names
// a UTF-8 repair would make one ("caf\xe9", "caf\xe8") stay two.
std::string FolderBytes::listing() const {
  nlohmann::json j = nlohmann::json::array();
  for (const FolderEntry& e : entries) {
    const bool path_bytes = invalid_utf8_at(e.path) != std::string::npos;
    const bool ref_bytes = invalid_utf8_at(e.ref) != std::string::npos;
    nlohmann::json row{std::string(1, static_cast<char>(e.kind)), path_bytes ? hex_of(e.path) : e.path,
                       ref_bytes ? hex_of(e.ref) : e.ref};
    if (path_bytes || ref_bytes) row.push_back(std::string(path_bytes ? "p" : "") + (ref_bytes ? "r" : ""));
    j.push_back(std::move(row));
  }
  return j.dump();
}

Result<std::vector<FolderEntry>> FolderBytes::parse_listing(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return Error{"a folder's listing: expected a JSON array"};
  std::vector<FolderEntry> out;
  for (const nlohmann::json& e : j) {
    const bool shaped = e.is_array() && (e.size() == 3 || e.size() == 4) &&
                        std::all_of(e.begin(), e.end(), [](const nlohmann::json& c) { return c.is_string(); });
    if (!shaped) return Error{"a folder's listing: expected [kind, path, ref] entries (and which are hex)"};
    const std::string kind = e[0].get<std::string>();
    if (kind.size() != 1 || std::string("fxld").find(kind[0]) == std::string::npos)
      return Error{"a folder's listing: unknown kind " + kind};
    const std::string as_hex = e.size() == 4 ? e[3].get<std::string>() : "";
    auto path = as_hex.find('p') != std::string::npos ? bytes_of_hex(e[1].get<std::string>())
                                                      : std::optional<std::string>(e[1].get<std::string>());
    auto ref = as_hex.find('r') != std::string::npos ? bytes_of_hex(e[2].get<std::string>())
                                                     : std::optional<std::string>(e[2].get<std::string>());
    if (!path || !ref) return Error{"a folder's listing: a hex cell that is not hex"};
    out.push_back({std::move(*path), static_cast<FolderEntry::Kind>(kind[0]), std::move(*ref)});
  }
  return out;
}

Result<FolderBytes> read_folder(const std::string& dir, const FolderLimits& limits) {
  FolderBytes out;
  const KnownFile root = open_known(AT_FDCWD, dir, FileKind::Directory, Resolve::NoLinks);
  if (!root.opened())
    return Error{root.error != 0 ? std::string(dir + ": " + std::strerror(root.error))
                                 : dir + ": is " + kind_text(root.kind) + ", not a folder"};
  const WalkLimits bounds{limits.max_entries, limits.max_depth};
  const auto walked = walk_folder(root.fd.get(), dir, bounds, [&](const WalkEntry& e) -> Result<WalkStep> {
    return take(e, dir + "/" + e.path, limits, out);
  });
  if (!walked) return Error{dir + ": " + walked.error().message};
  std::sort(out.entries.begin(), out.entries.end(),
            [](const FolderEntry& a, const FolderEntry& b) { return a.path < b.path; });
  return out;
}

Result<void, FolderWriteError> write_folder(const std::string& dir, const std::vector<FolderEntry>& entries,
                                            const std::function<Result<std::string>(const std::string&)>& blob) {
  const auto machines = [](std::string m) { return FolderWriteError{std::move(m), false}; };
  // An entry that cannot be made because one of its name is there already is the listing's.
  const auto made = [&](const std::string& path) { return FolderWriteError{why(path), errno == EEXIST}; };
  if (::mkdir(dir.c_str(), 0755) != 0) return machines(why(dir));
  // Sorted by path, a folder comes before what it holds; each part is made here, never reached
  // through a link (a link of the listing is made as a link and nothing is written through it).
  std::set<std::string> links;
  for (const FolderEntry& e : entries) {
    if (!safe_path(e.path)) return FolderWriteError{dir + ": a path that leaves the folder: " + e.path, true};
    for (auto slash = e.path.find('/'); slash != std::string::npos; slash = e.path.find('/', slash + 1))
      if (links.count(e.path.substr(0, slash)) > 0)
        return FolderWriteError{dir + ": a path through a link: " + e.path, true};
    const std::string path = dir + "/" + e.path;
    if (e.kind == FolderEntry::Kind::Folder) {
      if (::mkdir(path.c_str(), 0755) != 0) return made(path);
      continue;
    }
    if (e.kind == FolderEntry::Kind::Link) {
      if (::symlink(e.ref.c_str(), path.c_str()) != 0) return made(path);
      links.insert(e.path);
      continue;
    }
    auto bytes = blob(e.ref);
    if (!bytes) return machines(path + ": " + bytes.error().message);
    if (hex(sha256(*bytes)) != e.ref) return machines(path + ": its bytes are not those of SHA-256 " + e.ref);
    const mode_t mode = e.kind == FolderEntry::Kind::Executable ? 0755 : 0644;
    const OwnedFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!out.valid()) return made(path);
    for (std::size_t done = 0; done < bytes->size();) {
      const ssize_t w = ::write(out.get(), bytes->data() + done, bytes->size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return machines(why(path));
      done += static_cast<std::size_t>(w);
    }
  }
  return {};
}

}  // namespace cb::grade

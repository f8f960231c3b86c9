#pragma once
// A folder as the queue carries it: every entry below it, by relative path, with its bytes held
// apart by their SHA-256 (a blob), so the same bytes are sent and stored once however many
// submissions hold them. Read without following any link the folder holds (a link is carried as
// its target's text, as the box copies it), bounded in entries, depth and bytes.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cb/result.h"

namespace cb::grade {

struct FolderEntry {
  enum class Kind : char { File = 'f', Executable = 'x', Link = 'l', Folder = 'd' };
  std::string path;  // relative, '/' between parts
  Kind kind = Kind::File;
  std::string ref;  // a file's SHA-256 (hex), a link's target, empty for a folder
};

struct FolderBytes {
  std::vector<FolderEntry> entries;          // sorted by path
  std::map<std::string, std::string> blobs;  // SHA-256 -> bytes
  std::uint64_t bytes = 0;
  // The SHA-256 of the listing ("kind path ref" a line): two folders with the same paths, kinds
  // and bytes have the same one.
  [[nodiscard]] std::string sha256() const;
  // The listing as one JSON text, and back (errors name what is wrong with it).
  [[nodiscard]] std::string listing() const;
  [[nodiscard]] static Result<std::vector<FolderEntry>> parse_listing(const std::string& text);
};

struct FolderLimits {
  std::uint64_t max_bytes = 16ULL << 20;
  std::size_t max_entries = 2'000;
  int max_depth = 32;
};

// Errors: a part cannot be read, or the folder is over a limit (named). FIFOs, sockets and
// devices are left out, as the box leaves them.
[[nodiscard]] Result<FolderBytes> read_folder(const std::string& dir, const FolderLimits& limits = {});

// Why a folder could not be written, and whose doing that is: the listing's own (a path that
// would leave the folder or pass through a link, two entries of one name) or the machine's (a
// blob not to be had, a disk that failed). A queue hands back only the machine's.
struct FolderWriteError {
  std::string message;
  bool listings = false;
};

// Makes `dir` (which must not exist) hold `entries`, each blob from `blob(sha)`.
[[nodiscard]] Result<void, FolderWriteError> write_folder(
    const std::string& dir, const std::vector<FolderEntry>& entries,
    const std::function<Result<std::string>(const std::string&)>& blob);

}  // namespace cb::grade

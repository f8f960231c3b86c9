#pragma once
// Reading a submission without trusting it: only regular files, only inside the submission
// directory (a symbolic link that leads out of it is refused, one that stays inside is
// followed), at most a bounded number of bytes, and never blocking on a FIFO or device.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/dir_handle.h"
#include "cb/result.h"
#include "cb/utf8_text.h"

namespace cb::grade {

// Larger than any honest lab file by three orders of magnitude; what is larger is refused
// without being read.
inline constexpr std::size_t kMaxFileBytes = 1 << 20;

struct InMemoryFile {
  std::string bytes;
  std::int64_t mtime_us = 0;  // when it was written
};

struct FileRead {
  enum class Found { Ok, Missing, Refused };
  Found found = Found::Missing;
  std::string bytes;          // Ok: the content
  std::int64_t mtime_us = 0;  // Ok: when it was last written (Unix epoch, microseconds)
  std::string reason;         // Missing / Refused: one line, naming the file
};

class SubmissionDir {
 public:
  // Errors: the directory cannot be opened (it is not there, or not a directory).
  [[nodiscard]] static Result<SubmissionDir> open(const std::string& path);
  // The same, named `shown` in every message: a box's copy of a directory, named as the student
  // knows it.
  [[nodiscard]] static Result<SubmissionDir> open(const std::string& path, std::string shown);
  // A directory that is not there, for grading steps that read no file (step 1 checks only the
  // server): every read is Missing.
  [[nodiscard]] static SubmissionDir absent(std::string path) { return SubmissionDir(-1, std::move(path)); }
  // A directory already held open (taken over), named `shown` in every message.
  [[nodiscard]] static SubmissionDir adopt(DirHandle dir, std::string shown) {
    return SubmissionDir(dir.release(), std::move(shown));
  }
  // What `from` holds of `names` now, each read once and kept as read (a file refused stays
  // refused, with its reason): what the lab run left, taken before any other program of the
  // submission runs in the same box and could rewrite it.
  [[nodiscard]] static SubmissionDir snapshot(const SubmissionDir& from, const std::vector<std::string>& names);
  // A directory the grader would not open (a link where a folder should be): every read is
  // Refused with `reason`.
  [[nodiscard]] static SubmissionDir refused(std::string path, std::string reason) {
    SubmissionDir d(-1, std::move(path));
    d.refusal_ = std::move(reason);
    return d;
  }
  // Files a program handed over as it wrote them (cb-lab run: its runner wrote them, and knows
  // them), named as in `path`; a name it did not write is Missing. No file system is read.
  [[nodiscard]] static SubmissionDir in_memory(std::string path, std::map<std::string, InMemoryFile> files);
  SubmissionDir(SubmissionDir&& other) noexcept;
  SubmissionDir& operator=(SubmissionDir&& other) noexcept;
  SubmissionDir(const SubmissionDir&) = delete;
  SubmissionDir& operator=(const SubmissionDir&) = delete;
  ~SubmissionDir();

  // `name` is a plain file name (no '/', not "." or ".."). Never throws.
  [[nodiscard]] FileRead read(const std::string& name, std::size_t limit = kMaxFileBytes) const;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  SubmissionDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
  std::optional<std::map<std::string, InMemoryFile>> memory_;
  std::string refusal_;
  std::optional<std::map<std::string, FileRead>> taken_;
};

// The text helpers the grader's messages and reports use (cb/utf8_text.h), under its names.
using cb::invalid_utf8_at;
using cb::printable;
using cb::valid_utf8;

}  // namespace cb::grade

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

#include "cb/result.h"

namespace cb::grade {

// Larger than any honest lab file by three orders of magnitude; what is larger is refused
// without being read.
inline constexpr std::size_t kMaxFileBytes = 1 << 20;

struct InMemoryFile {
  std::string bytes;
  std::int64_t mtime_us = 0;  // when it was written
};

struct FileRead {
  enum class Status { Ok, Missing, Refused };
  Status status = Status::Missing;
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
};

// The first byte offset where `text` stops being UTF-8, or npos if it is all UTF-8.
[[nodiscard]] std::size_t invalid_utf8_at(std::string_view text) noexcept;

// `text` with every byte that is not part of valid UTF-8 replaced by '?': for messages that
// quote a piece of a file (a cut can split a character).
[[nodiscard]] std::string valid_utf8(std::string_view text);

// `text` as a terminal shows it harmlessly: valid UTF-8, and every character that would steer
// the terminal instead of being shown written out as an escape: control characters but newline
// and tab ("\x1b" for ESC, "\r"), the C1 controls ("\u009b", a one-byte CSI on some terminals)
// and the bidirectional overrides that make text read otherwise than it is ("\u202e").
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace cb::grade

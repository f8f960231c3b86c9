#include "cb/grade/files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cb/bounded_file.h"

namespace cb::grade {
namespace {

// openat2 with RESOLVE_BENEATH: the kernel itself refuses any path, symbolic links included,
// that would resolve outside the directory. Where the kernel is older than 5.6, fall back to
// refusing every symbolic link.
int open_beneath(int dir, const std::string& name) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  return ::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
}

}  // namespace

Result<SubmissionDir> SubmissionDir::open(const std::string& path) { return open(path, path); }

Result<SubmissionDir> SubmissionDir::open(const std::string& path, std::string shown) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{shown + ": cannot open the directory: " + std::strerror(errno)};
  return SubmissionDir(fd, std::move(shown));
}

SubmissionDir::SubmissionDir(SubmissionDir&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), memory_(std::move(other.memory_)) {
  other.fd_ = -1;
}

SubmissionDir SubmissionDir::in_memory(std::string path, std::map<std::string, InMemoryFile> files) {
  SubmissionDir d(-1, std::move(path));
  d.memory_ = std::move(files);
  return d;
}

SubmissionDir& SubmissionDir::operator=(SubmissionDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    memory_ = std::move(other.memory_);
    other.fd_ = -1;
  }
  return *this;
}

SubmissionDir::~SubmissionDir() {
  if (fd_ >= 0) ::close(fd_);
}

FileRead SubmissionDir::read(const std::string& name, std::size_t limit) const {
  FileRead out;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    out.status = FileRead::Status::Refused;
    out.reason = "'" + name + "' is not a plain file name";
    return out;
  }
  if (memory_) {
    const auto it = memory_->find(name);
    if (it == memory_->end()) {
      out.reason = name + " is missing";
    } else if (it->second.bytes.size() > limit) {
      out.status = FileRead::Status::Refused;
      out.reason = name + " is " + std::to_string(it->second.bytes.size()) + " bytes, more than the " +
                   std::to_string(limit) + " a lab file can be; it was not read";
    } else {
      out.status = FileRead::Status::Ok;
      out.bytes = it->second.bytes;
      out.mtime_us = it->second.mtime_us;
    }
    return out;
  }
  if (fd_ < 0) {
    out.reason = name + " is missing (there is no directory " + path_ + ")";
    return out;
  }
  const int fd = open_beneath(fd_, name);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) {
      out.reason = name + " is missing";
      return out;
    }
    out.status = FileRead::Status::Refused;
    if (e == EXDEV)
      out.reason = name + " is a symbolic link that leads outside the submission; only files inside it are read";
    else if (e == ELOOP)
      out.reason = name + " is a symbolic link that loops (or goes through too many links); it was not read";
    else
      out.reason = name + " cannot be opened: " + std::strerror(e);
    return out;
  }
  struct stat st {};
  ::fstat(fd, &st);
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    out.status = FileRead::Status::Refused;
    out.reason =
        name + (S_ISDIR(st.st_mode) ? " is a directory" : " is not a regular file") + ", not a file the lab writes";
    return out;
  }
  // A hard link to a file outside the submission reads like one inside it; a file the lab wrote
  // has one name. Refused without reading, and without echoing a byte of it.
  if (st.st_nlink > 1) {
    ::close(fd);
    out.status = FileRead::Status::Refused;
    out.reason = name + " has other names (hard links); only a file the lab wrote, with one name, is read";
    return out;
  }
  if (static_cast<std::size_t>(st.st_size) > limit) {
    ::close(fd);
    out.status = FileRead::Status::Refused;
    out.reason = name + " is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(limit) +
                 " a lab file can be; it was not read";
    return out;
  }
  auto bytes = read_at_most(fd, limit);
  ::close(fd);
  if (!bytes) {
    out.status = FileRead::Status::Refused;
    out.reason = name + " cannot be read: " + bytes.error().message;
    return out;
  }
  if (bytes->size() > limit) {
    out.status = FileRead::Status::Refused;
    out.reason = name + " is more than the " + std::to_string(limit) + " bytes a lab file can be; it was not read";
    return out;
  }
  out.status = FileRead::Status::Ok;
  out.bytes = std::move(bytes).value();
  out.mtime_us = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000 + st.st_mtim.tv_nsec / 1000;
  return out;
}

std::size_t invalid_utf8_at(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6U) | (s[i + k] & 0x3FU);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string::npos;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t bad = invalid_utf8_at(text);
    if (bad == std::string::npos) {
      out.append(text);
      break;
    }
    out.append(text.substr(0, bad));
    out += '?';
    text.remove_prefix(bad + 1);
  }
  return out;
}

std::string printable(std::string_view raw) {
  const std::string text = valid_utf8(raw);
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      if (c == '\r')
        out += "\\r";
      else {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += buf;
      ++i;
    } else if (c == 0xe2 && i + 2 < text.size()) {
      // U+202A-U+202E are E2 80 AA-AE; U+2066-U+2069 are E2 81 A6-A9.
      const auto b1 = static_cast<unsigned char>(text[i + 1]);
      const auto b2 = static_cast<unsigned char>(text[i + 2]);
      const unsigned cp = 0x2000U + ((b1 & 0x3fU) << 6U) + (b2 & 0x3fU);
      if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        out += buf;
        i += 2;
      } else {
        out += static_cast<char>(c);
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace cb::grade

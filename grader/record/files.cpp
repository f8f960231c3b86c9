#include "cb/grade/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cb/bounded_file.h"
#include "cb/owned_fd.h"

namespace cb::grade {
Result<SubmissionDir> SubmissionDir::open(const std::string& path) { return open(path, path); }

Result<SubmissionDir> SubmissionDir::open(const std::string& path, std::string shown) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{shown + ": cannot open the directory: " + std::strerror(errno)};
  return SubmissionDir(fd, std::move(shown));
}

SubmissionDir::SubmissionDir(SubmissionDir&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      memory_(std::move(other.memory_)),
      refusal_(std::move(other.refusal_)),
      taken_(std::move(other.taken_)) {
  other.fd_ = -1;
}

SubmissionDir SubmissionDir::in_memory(std::string path, std::map<std::string, InMemoryFile> files) {
  SubmissionDir d(-1, std::move(path));
  d.memory_ = std::move(files);
  return d;
}

SubmissionDir SubmissionDir::snapshot(const SubmissionDir& from, const std::vector<std::string>& names) {
  SubmissionDir d(-1, from.path_);
  d.taken_.emplace();
  for (const std::string& name : names) (*d.taken_)[name] = from.read(name);
  return d;
}

SubmissionDir& SubmissionDir::operator=(SubmissionDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    memory_ = std::move(other.memory_);
    refusal_ = std::move(other.refusal_);
    taken_ = std::move(other.taken_);
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
    out.found = FileRead::Found::Refused;
    out.reason = "'" + name + "' is not a plain file name";
    return out;
  }
  if (memory_) {
    const auto it = memory_->find(name);
    if (it == memory_->end()) {
      out.reason = name + " is missing";
    } else if (it->second.bytes.size() > limit) {
      out.found = FileRead::Found::Refused;
      out.reason = name + " is " + std::to_string(it->second.bytes.size()) + " bytes, more than the " +
                   std::to_string(limit) + " a lab file can be; it was not read";
    } else {
      out.found = FileRead::Found::Ok;
      out.bytes = it->second.bytes;
      out.mtime_us = it->second.mtime_us;
    }
    return out;
  }
  if (taken_) {
    const auto it = taken_->find(name);
    if (it == taken_->end()) {
      out.reason = name + " is missing";
      return out;
    }
    out = it->second;
    if (out.found == FileRead::Found::Ok && out.bytes.size() > limit) {
      out.found = FileRead::Found::Refused;
      out.reason = name + " is " + std::to_string(out.bytes.size()) + " bytes, more than the " + std::to_string(limit) +
                   " a lab file can be; it was not read";
      out.bytes.clear();
    }
    return out;
  }
  if (!refusal_.empty()) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " was not read: " + refusal_;
    return out;
  }
  if (fd_ < 0) {
    out.reason = name + " is missing (there is no directory " + path_ + ")";
    return out;
  }
  // Beneath: the kernel refuses any path, links included, that would resolve outside the
  // submission. Looked at before it is opened: a device handed in never has its driver run.
  KnownFile file = open_known(fd_, name, FileKind::Regular, Resolve::Beneath);
  if (file.kind == FileKind::Missing) {
    out.reason = name + " is missing";
    return out;
  }
  if (file.error != 0) {
    const int e = file.error;
    out.found = FileRead::Found::Refused;
    if (e == EXDEV)
      out.reason = name + " is a symbolic link that leads outside the submission; only files inside it are read";
    else if (e == ELOOP)
      out.reason = name + " is a symbolic link that loops (or goes through too many links); it was not read";
    else
      out.reason = name + " cannot be opened: " + std::strerror(e);
    return out;
  }
  if (!file.opened()) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " is " + kind_text(file.kind) + ", not a file the lab writes";
    return out;
  }
  const struct stat& st = file.st;
  const int fd = file.fd.get();
  // A hard link to a file outside the submission reads like one inside it; a file the lab wrote
  // has one name. Refused without reading, and without echoing a byte of it.
  if (st.st_nlink > 1) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " has other names (hard links); only a file the lab wrote, with one name, is read";
    return out;
  }
  if (static_cast<std::size_t>(st.st_size) > limit) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(limit) +
                 " a lab file can be; it was not read";
    return out;
  }
  auto bytes = read_at_most(fd, limit);
  if (!bytes) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " cannot be read: " + bytes.error().message;
    return out;
  }
  if (bytes->size() > limit) {
    out.found = FileRead::Found::Refused;
    out.reason = name + " is more than the " + std::to_string(limit) + " bytes a lab file can be; it was not read";
    return out;
  }
  out.found = FileRead::Found::Ok;
  out.bytes = std::move(bytes).value();
  out.mtime_us = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000 + st.st_mtim.tv_nsec / 1000;
  return out;
}

}  // namespace cb::grade

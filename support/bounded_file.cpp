#include "cb/bounded_file.h"

#include "cb/owned_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cb {
namespace {

std::string bytes_text(std::size_t n) {
  if (n >= (1U << 20) && n % (1U << 20) == 0) return std::to_string(n >> 20) + " MiB";
  if (n >= (1U << 10) && n % (1U << 10) == 0) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}

}  // namespace

Result<std::string> read_bounded_file(const std::string& path, std::size_t limit, const std::string& what) {
  // Looked at before it is opened: a device named here (as root) would otherwise run its driver.
  const KnownFile file = open_known(AT_FDCWD, path, FileKind::Regular, Resolve::Follow);
  if (file.kind == FileKind::Missing) return Error{path + ": no such file (expected a " + what + " file)"};
  if (file.error != 0) return Error{path + ": cannot open the " + what + " file: " + std::strerror(file.error)};
  if (!file.opened())
    return Error{path + ": is " + kind_text(file.kind) + ", not a " + what + " file; give a regular file"};
  const struct stat& st = file.st;
  const OwnedFd& fd = file.fd;
  const auto too_large = [&] {
    return Error{path + ": larger than " + bytes_text(limit) + "; not a " + what + " file"};
  };
  if (static_cast<std::size_t>(st.st_size) > limit) return too_large();
  auto data = read_at_most(fd.get(), limit);
  if (!data) return Error{path + ": " + data.error().message};
  if (data->size() > limit) return too_large();
  return data;
}

Result<std::string> read_at_most(int fd, std::size_t limit) {
  // Grown as it is read, so a 4 KiB record costs 4 KiB, not the 64 MiB it may be.
  std::string data;
  char buf[65536];
  while (data.size() <= limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{std::string("read error: ") + std::strerror(errno)};
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

LineRead read_line(std::istream& in, std::string& line, std::size_t limit) {
  line.clear();
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) return line.empty() ? LineRead::End : LineRead::Line;
    if (c == '\n') return LineRead::Line;
    if (line.size() == limit) return LineRead::TooLong;
    line.push_back(static_cast<char>(c));
  }
}

}  // namespace cb

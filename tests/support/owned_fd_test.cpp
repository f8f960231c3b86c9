// A file somebody else made is opened only once it is known to be a regular file or a folder:
// each hostile kind is seen for what it is, and none of them is opened (a device's driver, a FIFO's
// wait for a writer never run).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cb/owned_fd.h"
#include "skip.h"

namespace cb {
namespace {

struct TempDir {
  std::string path;
  OwnedFd fd;
  TempDir() {
    char tmpl[] = "/tmp/cb-owned-fd-XXXXXX";
    path = ::mkdtemp(tmpl);
    fd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  void file(const std::string& name, const std::string& content) const {
    std::ofstream(path + "/" + name, std::ios::binary) << content;
  }
};

std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

TEST_CASE("a regular file is opened and reads as itself") {
  const TempDir dir;
  dir.file("state.json", "{}");
  for (const Resolve how : {Resolve::Follow, Resolve::NoLinks, Resolve::Beneath}) {
    const KnownFile f = open_known(dir.fd.get(), "state.json", FileKind::Regular, how);
    REQUIRE(f.opened());
    CHECK(f.kind == FileKind::Regular);
    CHECK(read_all(f.fd.get()) == "{}");
  }
}

TEST_CASE("a folder is opened as a folder only when a folder is wanted") {
  const TempDir dir;
  REQUIRE(::mkdirat(dir.fd.get(), "sub", 0755) == 0);
  const KnownFile as_dir = open_known(dir.fd.get(), "sub", FileKind::Directory, Resolve::NoLinks);
  REQUIRE(as_dir.opened());
  CHECK(::faccessat(as_dir.fd.get(), ".", F_OK, 0) == 0);
  const KnownFile as_file = open_known(dir.fd.get(), "sub", FileKind::Regular, Resolve::NoLinks);
  CHECK_FALSE(as_file.opened());
  CHECK(as_file.kind == FileKind::Directory);
  CHECK(as_file.error == 0);
}

TEST_CASE("a missing name is missing, with ENOENT") {
  const TempDir dir;
  const KnownFile f = open_known(dir.fd.get(), "nothing", FileKind::Regular, Resolve::NoLinks);
  CHECK_FALSE(f.opened());
  CHECK(f.kind == FileKind::Missing);
  CHECK(f.error == ENOENT);
}

TEST_CASE("a FIFO nobody writes to is named, not waited on") {
  const TempDir dir;
  REQUIRE(::mkfifoat(dir.fd.get(), "state.json", 0644) == 0);
  const KnownFile f = open_known(dir.fd.get(), "state.json", FileKind::Regular, Resolve::Beneath);
  CHECK_FALSE(f.opened());
  CHECK(f.kind == FileKind::Fifo);
  CHECK(std::string(kind_text(f.kind)) == "a FIFO (a pipe)");
}

TEST_CASE("a socket is named a socket") {
  const TempDir dir;
  const OwnedFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string at = dir.path + "/state.json";
  std::strncpy(addr.sun_path, at.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  const KnownFile f = open_known(dir.fd.get(), "state.json", FileKind::Regular, Resolve::NoLinks);
  CHECK_FALSE(f.opened());
  CHECK(f.kind == FileKind::Socket);
}

// A device with no driver behind it makes its own open fail with ENXIO ("No such device or
// address"): seeing that error would prove the open ran.
TEST_CASE("a character or block device is named, and its open never runs") {
  if (testing::skip_unless(::geteuid() == 0, "making device nodes needs root")) return;
  const TempDir dir;
  REQUIRE(::mknodat(dir.fd.get(), "state.json", S_IFCHR | 0644, makedev(0, 0)) == 0);
  REQUIRE(::mknodat(dir.fd.get(), "settings", S_IFBLK | 0644, makedev(0, 0)) == 0);
  for (const Resolve how : {Resolve::Follow, Resolve::NoLinks, Resolve::Beneath}) {
    const KnownFile c = open_known(dir.fd.get(), "state.json", FileKind::Regular, how);
    CHECK_FALSE(c.opened());
    CHECK(c.error == 0);
    CHECK(c.kind == FileKind::CharDevice);
    const KnownFile b = open_known(dir.fd.get(), "settings", FileKind::Regular, how);
    CHECK(b.error == 0);
    CHECK(b.kind == FileKind::BlockDevice);
  }
}

TEST_CASE("a link is seen as a link unless links are followed") {
  const TempDir dir;
  dir.file("real", "x");
  REQUIRE(::symlinkat("real", dir.fd.get(), "inside") == 0);
  REQUIRE(::symlinkat("/etc/hostname", dir.fd.get(), "outside") == 0);
  REQUIRE(::symlinkat("loop", dir.fd.get(), "loop") == 0);

  const KnownFile no = open_known(dir.fd.get(), "inside", FileKind::Regular, Resolve::NoLinks);
  CHECK_FALSE(no.opened());
  CHECK(no.kind == FileKind::Link);

  CHECK(open_known(dir.fd.get(), "inside", FileKind::Regular, Resolve::Follow).opened());
  CHECK(open_known(dir.fd.get(), "inside", FileKind::Regular, Resolve::Beneath).opened());

  const KnownFile out = open_known(dir.fd.get(), "outside", FileKind::Regular, Resolve::Beneath);
  CHECK_FALSE(out.opened());
  CHECK(out.error == EXDEV);
  const KnownFile loop = open_known(dir.fd.get(), "loop", FileKind::Regular, Resolve::Beneath);
  CHECK_FALSE(loop.opened());
  CHECK(loop.error == ELOOP);
}

TEST_CASE("an owned descriptor closes once, and moves") {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(raw >= 0);
  {
    OwnedFd a(raw);
    OwnedFd b(std::move(a));
    CHECK_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the move is what is tested
    CHECK(b.get() == raw);
    OwnedFd c;
    c = std::move(b);
    CHECK(c.get() == raw);
  }
  CHECK(::fcntl(raw, F_GETFD) == -1);
  CHECK(errno == EBADF);
}

}  // namespace
}  // namespace cb

// A folder's digest moves with every byte a program in its box would see, and with nothing else.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cb/folder_digest.h"

namespace cb {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cb-digest-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  void file(const std::string& name, const std::string& content) const {
    std::ofstream(path + "/" + name, std::ios::binary) << content;
  }
  [[nodiscard]] std::string digest() const {
    const OwnedFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto d = folder_digest(fd.get(), path);
    REQUIRE(d);
    return *d;
  }
};

TEST_CASE("folder digest: the same files give the same digest, any change another") {
  const TempDir a;
  const TempDir b;
  for (const TempDir* d : {&a, &b}) {
    d->file("run.sh", "python3 lab.py\n");
    ::mkdir((d->path + "/src").c_str(), 0755);
    d->file("src/lab.py", "print(1)\n");
  }
  const std::string same = a.digest();
  CHECK(same.size() == 64);
  CHECK(b.digest() == same);

  b.file("run.sh", "");  // the finding: a run.sh that now does nothing
  CHECK(b.digest() != same);
  b.file("run.sh", "python3 lab.py\n");
  CHECK(b.digest() == same);
  ::chmod((b.path + "/run.sh").c_str(), 0755);
  CHECK(b.digest() != same);
  ::chmod((b.path + "/run.sh").c_str(), 0644);
  ::symlink("src/lab.py", (b.path + "/link").c_str());
  CHECK(b.digest() != same);
  ::unlink((b.path + "/link").c_str());
  ::mkfifo((b.path + "/pipe").c_str(), 0644);  // the box leaves it out, and so does the digest
  CHECK(b.digest() == same);
}

TEST_CASE("folder digest: names are their bytes") {
  const TempDir a;
  const TempDir b;
  a.file("caf\xe9", "x");
  b.file("caf\xe8", "x");
  CHECK(a.digest() != b.digest());
}

TEST_CASE("folder digest: past its bounds it is refused, not guessed") {
  const TempDir a;
  a.file("big", std::string(4096, 'x'));
  const OwnedFd fd(::open(a.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DigestLimits small;
  small.max_bytes = 100;
  CHECK_FALSE(folder_digest(fd.get(), a.path, small));
}

}  // namespace
}  // namespace cb

// Files named on a command line: read only if regular, never past the limit, and every refusal
// says what the path turned out to be.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cb/bounded_file.h"
#include "skip.h"

namespace cb {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cb-bounded-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name, const std::string& content) const {
    std::ofstream(path + "/" + name, std::ios::binary) << content;
    return path + "/" + name;
  }
};

TEST_CASE("a regular file within the limit is read whole") {
  const TempDir dir;
  const auto path = dir.file("r.json", "{\"points\": {}}");
  const auto text = read_bounded_file(path, 64, "rubric");
  REQUIRE(text);
  CHECK(*text == "{\"points\": {}}");
  SUBCASE("exactly at the limit") { CHECK(read_bounded_file(path, text->size(), "rubric")); }
  SUBCASE("an empty file") { CHECK(read_bounded_file(dir.file("e", ""), 64, "rubric").value().empty()); }
}

TEST_CASE("a file over the limit is refused, naming the limit") {
  const TempDir dir;
  const auto path = dir.file("big.json", std::string(2049, 'x'));
  const auto text = read_bounded_file(path, 2048, "record");
  REQUIRE_FALSE(text);
  CHECK(text.error().message == path + ": larger than 2 KiB; not a record file");
}

TEST_CASE("what is not a regular file is refused unread, with the right words") {
  const TempDir dir;
  SUBCASE("a device that never ends") {
    const auto text = read_bounded_file("/dev/zero", 1 << 20, "record");
    REQUIRE_FALSE(text);
    CHECK(text.error().message == "/dev/zero: is a character device, not a record file; give a regular file");
  }
  SUBCASE("a directory") {
    const auto text = read_bounded_file(dir.path, 1 << 20, "scenario");
    REQUIRE_FALSE(text);
    CHECK(text.error().message == dir.path + ": is a directory, not a scenario file; give a regular file");
  }
  SUBCASE("a FIFO nobody writes to (opening it must not wait for a writer)") {
    const std::string fifo = dir.path + "/pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto text = read_bounded_file(fifo, 1 << 20, "rubric");
    REQUIRE_FALSE(text);
    CHECK(text.error().message == fifo + ": is a FIFO (a pipe), not a rubric file; give a regular file");
  }
  SUBCASE("a device whose own open would fail (it has no driver) is named, not opened") {
    if (testing::skip_unless(::geteuid() == 0, "making device nodes needs root")) return;
    const std::string node = dir.path + "/lab-settings.json";
    REQUIRE(::mknod(node.c_str(), S_IFCHR | 0644, makedev(0, 0)) == 0);
    const auto text = read_bounded_file(node, 1 << 20, "settings");
    REQUIRE_FALSE(text);
    CHECK(text.error().message == node + ": is a character device, not a settings file; give a regular file");
  }
  SUBCASE("a symbolic link to a regular file is followed") {
    const auto target = dir.file("t", "ok");
    const std::string link = dir.path + "/link";
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    CHECK(read_bounded_file(link, 16, "rubric").value() == "ok");
  }
}

TEST_CASE("a missing file says so") {
  const auto text = read_bounded_file("/nonexistent/r.json", 16, "rubric");
  REQUIRE_FALSE(text);
  CHECK(text.error().message == "/nonexistent/r.json: no such file (expected a rubric file)");
}

}  // namespace
}  // namespace cb

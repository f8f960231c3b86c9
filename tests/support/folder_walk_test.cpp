// The one walk over a folder handed in, with every hostile kind in it: links are seen and not
// followed, a FIFO, a socket or a device is listed and never opened, a deep or crowded folder is
// refused at its bound, and the order is the same on every walk.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <string>
#include <vector>

#include "cb/folder_walk.h"
#include "skip.h"

namespace cb {
namespace {

struct TempDir {
  std::string path;
  OwnedFd fd;
  TempDir() {
    char tmpl[] = "/tmp/cb-walk-XXXXXX";
    path = ::mkdtemp(tmpl);
    fd.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  void file(const std::string& name, const std::string& content) const {
    std::ofstream(path + "/" + name, std::ios::binary) << content;
  }
  void dir(const std::string& name) const { ::mkdir((path + "/" + name).c_str(), 0755); }
};

struct Seen {
  std::vector<std::string> lines;
  Result<void, WalkError> walk(const TempDir& d, WalkLimits limits = {}) {
    return walk_folder(
        d.fd.get(), d.path, limits,
        [this](const WalkEntry& e) -> Result<WalkStep> {
          std::string line = e.path + " " + kind_text(e.kind) + " " + std::to_string(e.depth);
          const KnownFile f = e.open_file();
          line += f.opened() ? " opened" : " unopened";
          lines.push_back(line);
          return WalkStep::Next;
        },
        [this](const WalkEntry& e, int) -> Result<void> {
          lines.push_back("left " + e.path);
          return {};
        });
  }
};

TEST_CASE("walk: every entry once, a folder before what it holds, in byte order of names") {
  const TempDir d;
  d.dir("b");
  d.file("b/z", "1");
  d.file("a", "2");
  d.dir("b/c");
  d.file("b/c/x", "3");
  REQUIRE(::symlinkat("/etc", d.fd.get(), "link") == 0);
  REQUIRE(::mkfifoat(d.fd.get(), "pipe", 0644) == 0);
  Seen seen;
  REQUIRE(seen.walk(d));
  CHECK(seen.lines == std::vector<std::string>{"a a regular file 0 opened", "b a directory 0 unopened",
                                               "b/c a directory 1 unopened", "b/c/x a regular file 2 opened",
                                               "left b/c", "b/z a regular file 1 opened", "left b",
                                               "link a symbolic link 0 unopened", "pipe a FIFO (a pipe) 0 unopened"});
}

TEST_CASE("walk: a device is listed as one and its open never runs") {
  if (testing::skip_unless(::geteuid() == 0, "making device nodes needs root")) return;
  const TempDir d;
  REQUIRE(::mknodat(d.fd.get(), "state.json", S_IFCHR | 0644, makedev(0, 0)) == 0);
  Seen seen;
  REQUIRE(seen.walk(d));
  CHECK(seen.lines == std::vector<std::string>{"state.json a character device 0 unopened"});
}

TEST_CASE("walk: a link to a folder is not walked into") {
  const TempDir outside;
  outside.file("secret", "x");
  const TempDir d;
  REQUIRE(::symlinkat(outside.path.c_str(), d.fd.get(), "out") == 0);
  Seen seen;
  REQUIRE(seen.walk(d));
  CHECK(seen.lines == std::vector<std::string>{"out a symbolic link 0 unopened"});
}

TEST_CASE("walk: more entries or levels than the bounds are refused, saying which") {
  const TempDir d;
  for (int i = 0; i < 5; ++i) d.file("f" + std::to_string(i), "");
  Seen crowded;
  const auto many = crowded.walk(d, WalkLimits{4, 8});
  REQUIRE_FALSE(many);
  CHECK(many.error().why == WalkError::Why::TooMany);
  CHECK(many.error().message == "more than 4 files and folders");

  const TempDir deep;
  deep.dir("1");
  deep.dir("1/2");
  deep.dir("1/2/3");
  Seen nested;
  const auto too_deep = nested.walk(deep, WalkLimits{100, 1});
  REQUIRE_FALSE(too_deep);
  CHECK(too_deep.error().why == WalkError::Why::TooDeep);
  CHECK(too_deep.error().message == deep.path + "/1/2: more than 1 folders deep");
}

TEST_CASE("walk: a visitor's refusal stops the walk and is returned as it said it") {
  const TempDir d;
  d.file("a", "");
  d.file("b", "");
  int visits = 0;
  const auto r = walk_folder(d.fd.get(), d.path, {}, [&](const WalkEntry& e) -> Result<WalkStep> {
    ++visits;
    return Error{e.path + ": not wanted"};
  });
  REQUIRE_FALSE(r);
  CHECK(r.error().why == WalkError::Why::Refused);
  CHECK(r.error().message == "a: not wanted");
  CHECK(visits == 1);
}

int open_descriptors() {
  int n = 0;
  const OwnedFd fd(::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = ::fdopendir(::dup(fd.get()));
  while (d != nullptr && ::readdir(d) != nullptr) ++n;
  if (d != nullptr) ::closedir(d);
  return n;
}

// Descriptors are the grader's, shared by every grading it runs at once: a wide folder holds one
// a level, a chain of folders (each the last name of the one above) two, however deep.
TEST_CASE("walk: a chain of 400 folders is walked in a handful of descriptors") {
  const TempDir d;
  std::string rel;
  for (int i = 0; i < 400; ++i) {
    rel += (rel.empty() ? "" : "/") + std::string("d");
    d.dir(rel);
  }
  const int before = open_descriptors();
  int most = 0;
  int deepest = 0;
  const auto r = walk_folder(d.fd.get(), d.path, WalkLimits{1000, 1000}, [&](const WalkEntry& e) -> Result<WalkStep> {
    most = std::max(most, open_descriptors() - before);
    deepest = std::max(deepest, e.depth);
    return WalkStep::Next;
  });
  CHECK(r);
  CHECK(deepest == 399);
  CHECK(most <= 3);
}

TEST_CASE("walk: a visitor that found what it looked for ends the walk as a success") {
  const TempDir d;
  d.dir("a");
  d.file("a/found", "");
  d.file("b", "");
  std::vector<std::string> visited;
  const auto r = walk_folder(d.fd.get(), d.path, {}, [&](const WalkEntry& e) -> Result<WalkStep> {
    visited.push_back(e.path);
    return e.name == "found" ? WalkStep::Stop : WalkStep::Next;
  });
  CHECK(r);
  CHECK(visited == std::vector<std::string>{"a", "a/found"});
}

}  // namespace
}  // namespace cb

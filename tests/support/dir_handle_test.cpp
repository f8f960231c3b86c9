// cb::DirHandle: a folder held by descriptor, walked below without following a link, written
// into without following one, and paths told inside a folder or not from their names alone.
#include "cb/dir_handle.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>

#include "temp_dir.h"

namespace cb {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

TEST_CASE("dir handle: below() opens and makes folders, and refuses a link naming where it points") {
  TempDir root;
  TempDir elsewhere;
  fs::create_directories(root / "a/b");
  fs::create_directory_symlink(elsewhere.path(), root / "a/link");
  auto held = DirHandle::open(root.path());
  REQUIRE(held.ok());
  auto b = held->below("a/b");
  REQUIRE(b.ok());
  CHECK(b->path() == root.path() + "/a/b");
  auto made = held->below("a/new/deeper", true);
  REQUIRE(made.ok());
  CHECK(fs::is_directory(root / "a/new/deeper"));
  const auto refused = held->below("a/link/x", true);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == root.path() + "/a/link: a symbolic link (to " + elsewhere.path() +
                                       "); the grader does not follow links in a folder handed in");
  CHECK(fs::is_empty(elsewhere.path()));  // nothing was made through it
  CHECK_FALSE(held->below("a/../..").ok());
  root.write("file", "x");
  CHECK(held->below("file").error().message == root.path() + "/file: not a directory");
}

TEST_CASE("dir handle: a file written replaces a link of its name, never what it points to") {
  TempDir root;
  TempDir elsewhere;
  elsewhere.write("target", "theirs");
  fs::create_symlink(elsewhere / "target", root / "report.json");
  auto held = DirHandle::open(root.path());
  REQUIRE(held.ok());
  REQUIRE(held->write("report.json", "ours").ok());
  CHECK(slurp(elsewhere / "target") == "theirs");
  CHECK_FALSE(fs::is_symlink(root / "report.json"));
  CHECK(slurp(root / "report.json") == "ours");
  CHECK(held->remove("report.json").ok());
  CHECK(held->remove("report.json").ok());  // already gone is fine
  CHECK_FALSE(held->write("a/b", "x").ok());
}

TEST_CASE("dir handle: a folder held keeps its place when its name is moved and a link put there") {
  TempDir root;
  fs::create_directories(root / "out");
  auto held = DirHandle::open(root / "out");
  REQUIRE(held.ok());
  TempDir elsewhere;
  fs::rename(root / "out", root / "moved");
  fs::create_directory_symlink(elsewhere.path(), root / "out");
  REQUIRE(held->write("state.json", "{}").ok());
  CHECK(fs::exists(root / "moved/state.json"));
  CHECK(fs::is_empty(elsewhere.path()));
}

TEST_CASE("dir handle: inside() tells from the names, the folder's own links resolved") {
  TempDir root;
  fs::create_directories(root / "real/sub");
  fs::create_directory_symlink(root / "real", root / "alias");
  CHECK(inside(root / "real/sub/cb", root / "real").value() == "sub/cb");
  CHECK(inside(root / "real", root / "real").value().empty());
  CHECK(inside(root / "real/../real/x", root / "real").value() == "x");
  CHECK_FALSE(inside(root / "realx", root / "real").has_value());
  // The folder named through its own link: a path under its real place is inside too.
  CHECK(inside(root / "real/sub", root / "alias").value() == "sub");
  CHECK(lexical_absolute("/a/./b/../c/") == "/a/c");
}

}  // namespace
}  // namespace cb

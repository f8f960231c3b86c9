// Which of a student's two hand-ins is graded: the later by the time each folder's newest file
// says, never by which name sorts first (handed_in_batch_test.cpp: the same through cb-grade).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cb/grade/handed_in.h"
#include "dated.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using grade::HandIn;
namespace fs = std::filesystem;

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr std::int64_t kNov3 = 1'793'664'000;  // 2026-11-03T00:00:00Z, in seconds

TEST_CASE("handed in twice: the later hand-in wins by time, and equal or unknown times by name, the same every time") {
  const std::vector<HandIn> cls{{"zz-early", "ann", 100 * kSecond}, {"aa-late", "ann", 200 * kSecond},
                                {"bob", "bob", 50 * kSecond},       {"b-tie", "cy", 300 * kSecond},
                                {"a-tie", "cy", 300 * kSecond},     {"dated", "dee", 1 * kSecond},
                                {"undated", "dee", std::nullopt}};
  const auto out = grade::superseded_folders(cls);
  REQUIRE(out.size() == 3);
  CHECK(out.at("zz-early").by == "aa-late");  // not the name that sorts last
  CHECK(out.at("a-tie").by == "b-tie");       // a tie: the later name
  CHECK(out.at("undated").by == "dated");     // a time that cannot be read is the oldest
  CHECK_FALSE(out.contains("bob"));
  CHECK(out.at("zz-early").why ==
        "handed in again: aa-late (1970-01-01T00:03:20Z) is graded instead of this one (1970-01-01T00:01:40Z); the "
        "last a student hands in is graded, by the newest file each folder holds");
  // The queue's Redis function compares the keys as bytes: they order as the rule does.
  CHECK(grade::hand_in_key(200 * kSecond, "aa-late") > grade::hand_in_key(100 * kSecond, "zz-early"));
  CHECK(grade::hand_in_key(300 * kSecond, "b-tie") > grade::hand_in_key(300 * kSecond, "a-tie"));
  CHECK(grade::hand_in_key_time(grade::hand_in_key(200 * kSecond, "x")) == 200 * kSecond);
  CHECK_FALSE(grade::hand_in_key_time(grade::hand_in_key(std::nullopt, "x")).has_value());
}

TEST_CASE("handed in twice: a folder's time is its newest entry's, a link's own, nothing followed") {
  TempDir root;
  TempDir elsewhere;
  fs::create_directories(root / "sub/deep");
  root.write("sub/a.txt", "a");
  root.write("sub/deep/b.txt", "b");
  elsewhere.write("new.txt", "newer than anything handed in");
  fs::create_symlink(elsewhere / "new.txt", root / "sub/link");
  REQUIRE(date_all(root / "sub", kNov3));
  const timespec later[2] = {{kNov3 + 60, 5}, {kNov3 + 60, 5}};
  REQUIRE(::utimensat(AT_FDCWD, (root / "sub/deep/b.txt").c_str(), later, 0) == 0);
  const timespec newest[2] = {{kNov3 + 9000, 0}, {kNov3 + 9000, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (elsewhere / "new.txt").c_str(), newest, 0) == 0);
  CHECK(grade::handed_in_at(root.path(), "sub") == (kNov3 + 60) * kSecond + 5);
  CHECK(grade::hand_in_time(grade::handed_in_at(root.path(), "sub")) == "2026-11-03T00:01:00Z");
  fs::create_directory(root / "empty");
  REQUIRE(date_all(root / "empty", kNov3 - 3600));
  CHECK(grade::handed_in_at(root.path(), "empty") == (kNov3 - 3600) * kSecond);  // nothing inside: its own
  CHECK_FALSE(grade::handed_in_at(root.path(), "missing").has_value());
  fs::create_directory_symlink(root / "sub", root / "linked");
  CHECK_FALSE(grade::handed_in_at(root.path(), "linked").has_value());  // a link is not a folder of the class
}

}  // namespace
}  // namespace cb::testing

// Reading what a submission holds, without trusting it.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cb/grade/files.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

using cb::testing::TempDir;

TEST_CASE("files: a regular file inside the submission is read") {
  TempDir t;
  t.write("state.json", "{}");
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  const FileRead f = dir->read("state.json");
  CHECK(f.found == FileRead::Found::Ok);
  CHECK(f.bytes == "{}");
}

TEST_CASE("files: missing - a directory - a FIFO - a name with a slash") {
  TempDir t;
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  CHECK(dir->read("state.json").found == FileRead::Found::Missing);
  CHECK(dir->read("state.json").reason == "state.json is missing");
  std::filesystem::create_directory(t / "fastfail.txt");
  CHECK(dir->read("fastfail.txt").found == FileRead::Found::Refused);
  CHECK(dir->read("fastfail.txt").reason == "fastfail.txt is a directory, not a file the lab writes");
  REQUIRE(::mkfifo((t / "transitions.log").c_str(), 0600) == 0);
  // A FIFO would block a plain open() until a writer came; this returns at once.
  CHECK(dir->read("transitions.log").reason == "transitions.log is a FIFO (a pipe), not a file the lab writes");
  CHECK(dir->read("../etc/passwd").found == FileRead::Found::Refused);
  CHECK(dir->read("..").found == FileRead::Found::Refused);
}

// A device with no driver fails its own open with ENXIO: the old reader said "cannot be opened: No
// such device or address", which proves the device's open ran, as root.
TEST_CASE("files: a device node handed in is named, never opened") {
  if (testing::skip_unless(::geteuid() == 0, "making device nodes needs root")) return;
  TempDir t;
  REQUIRE(::mknod((t / "state.json").c_str(), S_IFCHR | 0644, makedev(0, 0)) == 0);
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  const FileRead f = dir->read("state.json");
  CHECK(f.found == FileRead::Found::Refused);
  CHECK(f.reason == "state.json is a character device, not a file the lab writes");
}

TEST_CASE("files: a symbolic link out of the submission is refused - one that stays inside is followed") {
  TempDir outside;
  outside.write("secret", "{\"state\":\"CLOSED\"}");
  TempDir t;
  t.write("real.json", "inside");
  std::filesystem::create_symlink(outside / "secret", t / "state.json");
  std::filesystem::create_symlink("/etc/passwd", t / "fastfail.txt");
  std::filesystem::create_symlink("real.json", t / "ignore4xx.json");
  std::filesystem::create_symlink("../" + std::filesystem::path(outside.path()).filename().string() + "/secret",
                                  t / "transitions.log");
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  for (const char* name : {"state.json", "fastfail.txt", "transitions.log"}) {
    CAPTURE(name);
    const FileRead f = dir->read(name);
    CHECK(f.found == FileRead::Found::Refused);
    CHECK(f.reason ==
          std::string(name) + " is a symbolic link that leads outside the submission; only files inside it are read");
    CHECK(f.bytes.empty());
  }
  CHECK(dir->read("ignore4xx.json").bytes == "inside");
}

TEST_CASE("files: a symbolic link loop is a loop - not a way out") {
  TempDir t;
  std::filesystem::create_symlink("b", t / "state.json");
  std::filesystem::create_symlink("state.json", t / "b");
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  const FileRead f = dir->read("state.json");
  CHECK(f.found == FileRead::Found::Refused);
  CHECK(f.reason == "state.json is a symbolic link that loops (or goes through too many links); it was not read");
}

TEST_CASE("files: a hard link to a file outside the submission is refused - and never echoed") {
  TempDir outside;
  outside.write("secret", "top secret: not for the report");
  TempDir t;
  std::filesystem::create_hard_link(outside / "secret", t / "state.json");
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  const FileRead f = dir->read("state.json");
  CHECK(f.found == FileRead::Found::Refused);
  CHECK(f.reason == "state.json has other names (hard links); only a file the lab wrote, with one name, is read");
  CHECK(f.bytes.empty());
  CHECK(f.reason.find("secret") == std::string::npos);
}

TEST_CASE("files: a huge file is refused without being read") {
  TempDir t;
  {
    std::ofstream big(t / "state.json", std::ios::binary);
    big.seekp((100 << 20) - 1);  // 100 MiB, sparse: costs no disk and no time to make
    big.put('x');
  }
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  const FileRead f = dir->read("state.json");
  CHECK(f.found == FileRead::Found::Refused);
  CHECK(f.reason == "state.json is 104857600 bytes, more than the 1048576 a lab file can be; it was not read");
  CHECK(f.bytes.empty());
}

TEST_CASE("files: the submission directory itself") {
  CHECK_FALSE(SubmissionDir::open("/nonexistent/cb").ok());
  CHECK(SubmissionDir::open("/nonexistent/cb").error().message ==
        "/nonexistent/cb: cannot open the directory: No such file or directory");
  TempDir t;
  t.write("plain", "x");
  CHECK_FALSE(SubmissionDir::open(t / "plain").ok());
}

TEST_CASE("files: UTF-8 is checked to the byte") {
  CHECK(invalid_utf8_at("plain ASCII") == std::string::npos);
  CHECK(invalid_utf8_at("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80") == std::string::npos);
  CHECK(invalid_utf8_at("ab\xff") == 2);
  CHECK(invalid_utf8_at("\xc3") == 0);              // cut short
  CHECK(invalid_utf8_at("\xc0\xaf") == 0);          // overlong '/'
  CHECK(invalid_utf8_at("\xed\xa0\x80") == 0);      // a surrogate
  CHECK(invalid_utf8_at("\xf4\x90\x80\x80") == 0);  // past U+10FFFF
  CHECK(valid_utf8("ok\xff\xfeok") == "ok??ok");
}

}  // namespace
}  // namespace cb::grade

namespace cb::grade {
namespace {

TEST_CASE("files: text shown on a terminal is escaped where it would steer the terminal") {
  CHECK(printable("plain, with\ttabs\nand lines") == "plain, with\ttabs\nand lines");
  CHECK(printable("\x1b[2J\x1b]0;title\x07") == "\\x1b[2J\\x1b]0;title\\x07");
  CHECK(printable("over\rwrite") == "over\\rwrite");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("csi \xc2\x9b"
                  "31m") == "csi \\u009b31m");  // a one-byte CSI (C1)
  CHECK(printable("txt\xe2\x80\xae"
                  "exe") == "txt\\u202eexe");  // right-to-left override
  CHECK(printable("\xe2\x81\xa6"
                  "x") == "\\u2066x");  // left-to-right isolate
  CHECK(printable("caf\xc3\xa9 \xe2\x9c\x93 \xe2\x80\x94") ==
        "caf\xc3\xa9 \xe2\x9c\x93 \xe2\x80\x94");  // kept as they are
  CHECK(printable("cut \xe2\x80") == "cut ??");    // not UTF-8: as valid_utf8
}

TEST_CASE("files: in memory - what the runner wrote is read, nothing else, and never the disk") {
  TempDir t;
  t.write("state.json", "on disk");  // the directory exists, and is not read
  auto dir = SubmissionDir::in_memory(t.path(), {{"state.json", {"{\"state\": \"CLOSED\"}", 42}}});
  const FileRead f = dir.read("state.json");
  CHECK(f.found == FileRead::Found::Ok);
  CHECK(f.bytes == "{\"state\": \"CLOSED\"}");
  CHECK(f.mtime_us == 42);
  CHECK(dir.read("fastfail.txt").found == FileRead::Found::Missing);
  CHECK(dir.read("../state.json").found == FileRead::Found::Refused);
  const FileRead big = dir.read("state.json", 4);
  CHECK(big.found == FileRead::Found::Refused);
  CHECK(big.reason == "state.json is 19 bytes, more than the 4 a lab file can be; it was not read");
  CHECK(dir.path() == t.path());
}

}  // namespace
}  // namespace cb::grade

// A submission as the queue carries it (folder_bytes.h): read without following a link it holds,
// bounded, written back the same, and nothing written outside the folder whatever the listing says.
#include "cb/grade/folder_bytes.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cb/hmac_sha256.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

namespace fs = std::filesystem;
using cb::testing::TempDir;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_CASE("folder bytes: a folder read and written back is the same folder, its links as links") {
  TempDir t;
  fs::create_directories(t / "in/src");
  t.write("in/run.sh", "python3 main.py\n");
  t.write("in/src/breaker.py", "class Breaker: pass\n");
  t.write("in/copy.py", "class Breaker: pass\n");  // the same bytes: one blob
  ::chmod((t / "in/run.sh").c_str(), 0755);
  fs::create_directories(t / "in/empty");
  fs::create_symlink("/etc/shadow", t / "in/secret");  // carried as its target's text, never read
  auto f = read_folder(t / "in");
  REQUIRE(f);
  CHECK(f->entries.size() == 6);
  CHECK(f->blobs.size() == 2);
  const auto link =
      std::find_if(f->entries.begin(), f->entries.end(), [](const FolderEntry& e) { return e.path == "secret"; });
  REQUIRE(link != f->entries.end());
  CHECK(link->kind == FolderEntry::Kind::Link);
  CHECK(link->ref == "/etc/shadow");

  auto listing = FolderBytes::parse_listing(f->listing());
  REQUIRE(listing);
  const auto blob = [&](const std::string& sha) -> Result<std::string> { return f->blobs.at(sha); };
  REQUIRE(write_folder(t / "out", *listing, blob));
  CHECK(read(t / "out/src/breaker.py") == "class Breaker: pass\n");
  CHECK(fs::is_symlink(t / "out/secret"));
  CHECK(fs::read_symlink(t / "out/secret") == "/etc/shadow");
  CHECK(fs::is_directory(t / "out/empty"));
  CHECK((fs::status(t / "out/run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  // What it reads back is what it was: the same SHA-256 of the whole.
  auto again = read_folder(t / "out");
  REQUIRE(again);
  CHECK(again->sha256() == f->sha256());
  t.write("out/copy.py", "changed\n");
  CHECK(read_folder(t / "out")->sha256() != f->sha256());
}

// The finding: two file names that are not UTF-8 became one on the way through the queue (the
// listing is JSON), and the job failed "File exists" on every delivery. Names travel as bytes.
TEST_CASE("folder bytes: names that are not UTF-8 travel byte for byte, and stay two") {
  TempDir t;
  fs::create_directories(t / "in");
  t.write("in/caf\xe9", "latin-1 e acute\n");
  t.write("in/caf\xe8", "latin-1 e grave\n");
  fs::create_symlink("caf\xe9", t / "in/link\xff");
  auto f = read_folder(t / "in");
  REQUIRE(f);
  auto listing = FolderBytes::parse_listing(f->listing());
  REQUIRE(listing);
  const auto blob = [&](const std::string& sha) -> Result<std::string> { return f->blobs.at(sha); };
  const auto written = write_folder(t / "out", *listing, blob);
  REQUIRE_MESSAGE(written, (written ? "" : written.error().message));
  CHECK(read(t / "out/caf\xe9") == "latin-1 e acute\n");
  CHECK(read(t / "out/caf\xe8") == "latin-1 e grave\n");
  CHECK(fs::read_symlink(t / "out/link\xff") == "caf\xe9");
  CHECK(read_folder(t / "out")->sha256() == f->sha256());
  CHECK_FALSE(FolderBytes::parse_listing(R"([["f", "zz", "0", "p"]])"));
}

TEST_CASE("folder bytes: a folder over its bounds is refused, naming the bound") {
  TempDir t;
  fs::create_directories(t / "big");
  t.write("big/a", std::string(3000, 'x'));
  t.write("big/b", "y");
  auto too_big = read_folder(t / "big", FolderLimits{2048, 100, 8});
  REQUIRE(!too_big);
  CHECK(too_big.error().message.find("more than 2048 bytes of files") != std::string::npos);
  auto too_many = read_folder(t / "big", FolderLimits{1 << 20, 1, 8});
  REQUIRE(!too_many);
  CHECK(too_many.error().message.find("more than 1 files and folders") != std::string::npos);
  fs::create_directories(t / "deep/a/b/c");
  auto too_deep = read_folder(t / "deep", FolderLimits{1 << 20, 100, 2});
  REQUIRE(!too_deep);
  CHECK(too_deep.error().message.find("folders deep") != std::string::npos);
  // The folder itself may not be a link either: it is opened without following one.
  fs::create_symlink(t / "big", t / "link");
  CHECK(!read_folder(t / "link"));
}

TEST_CASE("folder bytes: a listing that would write outside its folder, or through a link, writes nothing there") {
  TempDir t;
  const std::string bytes = "owned\n";
  const std::string sha = hex(sha256(bytes));
  const auto blob = [&](const std::string&) -> Result<std::string> { return bytes; };
  const auto refused = [&](const std::string& listing, const std::string& out) {
    auto entries = FolderBytes::parse_listing(listing);
    REQUIRE(entries);
    auto w = write_folder(t / out, *entries, blob);
    REQUIRE(!w);
    return w.error().message;
  };
  CHECK(refused(R"([["f","../escaped",")" + sha + R"("]])", "a").find("leaves the folder") != std::string::npos);
  CHECK(refused(R"([["f","/tmp/escaped",")" + sha + R"("]])", "b").find("leaves the folder") != std::string::npos);
  fs::create_directories(t / "target");
  CHECK(refused(R"([["l","via",")" + t / "target" + R"("],["f","via/x",")" + sha + R"("]])", "c")
            .find("through a link") != std::string::npos);
  CHECK(!fs::exists(t / "escaped"));
  CHECK(!fs::exists(t / "target/x"));
  // Bytes that are not their SHA-256's are refused: a blob is what its name says.
  CHECK(refused(R"([["f","x",")" + std::string(64, '0') + R"("]])", "d").find("not those of SHA-256") !=
        std::string::npos);
  CHECK(!FolderBytes::parse_listing(R"([["q","x",""]])"));
  CHECK(!FolderBytes::parse_listing(R"({"x":1})"));
}

}  // namespace
}  // namespace cb::grade

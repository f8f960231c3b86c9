// A class with a student who hands in twice, graded by cb-grade: the later folder is graded, and
// the earlier one's row names it, in a batch and alike in every shard; an LMS export's times rule
// over the folders' own; a roster's student with no folder has a row that says so.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "dated.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::int64_t kNov3 = 1'793'664'000;  // 2026-11-03T00:00:00Z, in seconds

std::map<std::string, json> by_submission(const json& book) {
  std::map<std::string, json> rows;
  for (const auto& row : book) rows[row["submission"].get<std::string>()] = row;
  return rows;
}

// A class graded from the files alone (a right submission's four files in each folder), with a
// course key and a roster: cb-grade run with both, its exit held to `exits`.
struct KeyedClass {
  TempDir root;
  TempDir out;
  KeyedClass(const std::vector<std::string>& folders, const std::string& roster) {
    const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
    for (const std::string& folder : folders) {
      fs::create_directories(root / folder);
      for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json", "transitions.log"})
        fs::copy_file(good + "/" + f, root / (folder + "/" + f));
    }
    out.write("roster.csv", roster);
    out.write("course.key", "the course key of the test\n");
    fs::permissions(out / "course.key", fs::perms::owner_read | fs::perms::owner_write);
  }
  Ran cb(std::vector<std::string> a, const std::set<int>& exits) const {
    a.insert(a.begin(), CB_GRADE_BIN);
    for (const std::string& k :
         {std::string("--course-key"), out / "course.key", std::string("--roster"), out / "roster.csv"})
      a.push_back(k);
    Ran r = run(a);
    INFO(r.err);
    CHECK(exits.contains(r.exit_code));
    return r;
  }
};

TEST_CASE("batch: a student who hands in twice is graded on the later folder, and every shard rules the same") {
  // One student by the id rule, however the roster writes the email.
  const KeyedClass k({"aa-late", "zz-early", "bob"},
                     "Folder,Email\naa-late,Ann@Uni.edu\nzz-early,ann@uni.edu\nbob,bob@uni.edu\n");
  const TempDir& root = k.root;
  const TempDir& out = k.out;
  REQUIRE(date_all(root / "zz-early", kNov3));
  REQUIRE(date_all(root / "aa-late", kNov3 + 3600));  // handed in an hour later, though its name sorts first
  REQUIRE(date_all(root / "bob", kNov3 - 3600));
  const auto cb = [&k](std::vector<std::string> a) { return k.cb(std::move(a), {0, 1}); };
  const Ran batch = cb({"--batch", root.path(), "--reports", out / "R", "-o", out / "book.json"});
  auto rows = by_submission(json::parse(std::ifstream(out / "book.json")));
  REQUIRE(rows.size() == 3);
  CHECK(rows["aa-late"]["status"] == "graded");
  CHECK(rows["bob"]["status"] == "graded");
  CHECK(rows["zz-early"]["status"] == "superseded");
  CHECK(rows["zz-early"]["student"] == "ann@uni.edu");
  CHECK(rows["zz-early"]["score"].is_null());  // imported by email, it never stands for the grade
  CHECK(rows["zz-early"]["error"] ==
        "handed in again: aa-late (2026-11-03T01:00:00Z) is graded instead of this one (2026-11-03T00:00:00Z); the "
        "last a student hands in is graded, by the newest file each folder holds");
  CHECK(batch.err.find("1 handed in again later (its row says which is graded)") != std::string::npos);
  const std::string page = slurp(out / "R/index.html");
  CHECK(page.find("Handed in again") != std::string::npos);
  CHECK(page.find("<b>zz-early</b> (ann@uni.edu): handed in again: aa-late") != std::string::npos);

  // The CSV leaves its score empty; what was kept verifies, and regrades to the same.
  cb({"--batch", root.path(), "--reports", out / "R", "--resume", "-o", out / "book.csv"});
  const std::string csv = slurp(out / "book.csv");
  CHECK(csv.find("\nzz-early,ann@uni.edu,,superseded,,") != std::string::npos);
  const Ran verified = run({CB_GRADE_BIN, "verify", out / "R", "--gradebook", out / "book.csv"});
  INFO(verified.out, verified.err);
  CHECK(verified.exit_code == 0);

  // Each shard works the rule out over the whole class, whichever share holds which folder.
  for (const char* shard : {"0/2", "1/2"})
    cb({"--batch", root.path(), "--shard", shard, "--reports", out / ("S" + std::string(1, shard[0])), "-o",
        out / ("shard" + std::string(1, shard[0]) + ".json")});
  std::map<std::string, json> sharded;
  for (const char* f : {"shard0.json", "shard1.json"})
    for (const auto& [name, row] : by_submission(json::parse(std::ifstream(out / f)))) sharded[name] = row;
  REQUIRE(sharded.size() == 3);
  CHECK(sharded["zz-early"]["status"] == "superseded");
  CHECK(sharded["aa-late"]["status"] == "graded");
  const Ran merged = run({CB_GRADE_BIN, "merge", out / "S0", out / "S1", "--reports", out / "M", "-o", out / "m.json"});
  INFO(merged.err);
  CHECK(by_submission(json::parse(std::ifstream(out / "m.json")))["zz-early"]["status"] == "superseded");
}

TEST_CASE("batch: an LMS export's submitted time decides which hand-in is graded, over the folders' own times") {
  // The folders were copied out of the LMS in another order (by their files, aa-late is the
  // oldest); the export's "Submitted At" says aa-late came last. zz-early's cell is empty: its
  // files' time stands for it.
  const KeyedClass k({"aa-late", "zz-early", "mid"},
                     "Folder;Email;Submitted At\naa-late;ann@uni.edu;2026-11-03 02:00:00\n"
                     "zz-early;Ann@Uni.edu;\nmid;ANN@uni.edu;2026-11-03T01:30:00Z\n");
  REQUIRE(date_all(k.root / "aa-late", kNov3));
  REQUIRE(date_all(k.root / "zz-early", kNov3 + 3600));  // 01:00 by its files
  REQUIRE(date_all(k.root / "mid", kNov3 + 9000));       // 02:30 by its files, 01:30 by the export
  k.cb({"--batch", k.root.path(), "-o", k.out / "book.json"}, {0, 1});
  auto rows = by_submission(json::parse(std::ifstream(k.out / "book.json")));
  REQUIRE(rows.size() == 3);
  CHECK(rows["aa-late"]["status"] == "graded");
  CHECK(rows["mid"]["status"] == "superseded");
  CHECK(rows["mid"]["error"] ==
        "handed in again: aa-late (2026-11-03T02:00:00Z) is graded instead of this one (2026-11-03T01:30:00Z); the "
        "last a student hands in is graded, by the times the roster gives");
  CHECK(rows["zz-early"]["status"] == "superseded");
  CHECK(rows["zz-early"]["error"].get<std::string>().ends_with(
      "by the roster's time where it gives one, else the newest file a folder holds"));

  // A time the export cannot have meant is refused, naming the line and the column.
  k.out.write("roster.csv", "folder,email,submitted\naa-late,ann@uni.edu,yesterday\n");
  const Ran bad = k.cb({"--batch", k.root.path(), "-o", k.out / "bad.json"}, {2});
  CHECK(bad.err.find("roster.csv: line 2: submitted: 'yesterday' is not a time in UTC like 2026-11-03T14:22:05Z") !=
        std::string::npos);
}

TEST_CASE("batch: a roster's student with no folder has a row that says so, in a batch and in each shard") {
  const KeyedClass k({"ada"}, "folder,email\nada,ada@uni.edu\nbob,Bob@Uni.edu\n");
  const TempDir& root = k.root;
  const TempDir& out = k.out;
  const auto cb = [&k](std::vector<std::string> a) { return k.cb(std::move(a), {1}); };  // bob has nothing
  const Ran batch = cb({"--batch", root.path(), "--reports", out / "R", "-o", out / "book.json"});
  auto rows = by_submission(json::parse(std::ifstream(out / "book.json")));
  REQUIRE(rows.size() == 2);
  CHECK(rows["ada"]["status"] == "graded");
  CHECK(rows["bob"]["status"] == "no_submission");
  CHECK(rows["bob"]["student"] == "Bob@Uni.edu");
  CHECK(rows["bob"]["score"] == 0);
  const std::string why = "on the roster, but " + fs::path(root.path()).filename().string() +
                          " holds no folder of this student's: nothing was handed in";
  CHECK(rows["bob"]["error"] == why);
  CHECK(batch.err.find("1 on the roster handed in nothing") != std::string::npos);
  CHECK(slurp(out / "R/index.html").find("<b>bob</b> (no_submission): on the roster, but ") != std::string::npos);
  const Ran verified = run({CB_GRADE_BIN, "verify", out / "R", "--gradebook", out / "book.json"});
  INFO(verified.out, verified.err);
  CHECK(verified.exit_code == 0);
  // Two shards: bob's row is in one of them, and merged the class is the batch's.
  cb({"--batch", root.path(), "--shard", "0/2", "--reports", out / "S0"});
  cb({"--batch", root.path(), "--shard", "1/2", "--reports", out / "S1"});
  const Ran merged = run({CB_GRADE_BIN, "merge", out / "S0", out / "S1", "--reports", out / "M", "-o", out / "m.json"});
  INFO(merged.err);
  const auto m = by_submission(json::parse(std::ifstream(out / "m.json")));
  REQUIRE(m.size() == 2);
  CHECK(m.at("bob") == rows["bob"]);
}

}  // namespace
}  // namespace cb::testing

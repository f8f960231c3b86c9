// A class graded in shards as a job array grades it (each shard a --batch --shard I/N into a
// reports folder of its own), then joined by cb-grade merge: the same gradebook as one --batch,
// a shard run twice kept once, a shard missing named, a shard graded otherwise refused. Real
// kits, real programs, each in its own box.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "process.h"
#include "python_kit.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;

// Five students: three right, one with > for >=, one that crashes.
struct Class {
  TempDir root;
  TempDir out;
  Class() {
    for (const char* name : {"ann", "bob", "cy", "dee"}) python_kit(root / name);
    python_kit(root / "eve", "sum(self.window) * 100 >= ", "sum(self.window) * 100 > ");
    root.write("dee/run.sh", "echo boom >&2\nexit 3\n");
  }
  // --batch over the whole class, or one shard of it, into OUT/NAME/ (reports and gradebook).
  [[nodiscard]] Ran grade(const std::string& name, const std::vector<std::string>& more = {},
                          const std::string& seed = "7") const {
    std::vector<std::string> a{kGrade,
                               "--batch",
                               root.path(),
                               "--run",
                               "sh run.sh",
                               "--conformance",
                               "sh replay.sh",
                               "--seed",
                               seed,
                               "--traces",
                               "30",
                               "-j",
                               "2",
                               "--reports",
                               out / (name + "/reports"),
                               "-o",
                               out / (name + "/book.json")};
    a.insert(a.end(), more.begin(), more.end());
    return run(a);
  }
  [[nodiscard]] Ran merge(const std::vector<std::string>& shards, const std::string& into) const {
    std::vector<std::string> a{kGrade, "merge"};
    for (const std::string& s : shards) a.push_back(out / (s + "/reports"));
    for (const std::string& f :
         std::vector<std::string>{"--reports", out / (into + "/reports"), "-o", out / (into + "/book.json")})
      a.push_back(f);
    return run(a);
  }
  // The gradebook by submission, without what differs from run to run (the time taken, and so
  // the evidence's SHA-256), unless `whole`.
  [[nodiscard]] std::map<std::string, json> book(const std::string& name, bool whole = false) const {
    std::map<std::string, json> rows;
    for (json r : json::parse(std::ifstream(out / (name + "/book.json")))) {
      if (r.contains("program") && !whole) r["program"].erase("seconds");
      if (!whole) r.erase("evidence_sha256");
      rows[r["submission"].get<std::string>()] = r;
    }
    return rows;
  }
};

TEST_CASE("shards: two shards merged make the gradebook of one batch, and the merged reports regrade") {
  Class c;
  REQUIRE(c.grade("whole").exit_code == 1);  // eve and dee fail
  REQUIRE(c.grade("s0", {"--shard", "0/2"}).exit_code == 1);
  REQUIRE(c.grade("s1", {"--shard", "1/2"}).exit_code == 1);
  // Each shard graded its own share: positions 0, 2, 4 and 1, 3 of the sorted folders.
  CHECK(c.book("s0").size() == 3);
  CHECK(c.book("s1").size() == 2);
  const json kept = json::parse(std::ifstream(c.out / "s1/reports/shard.json"));
  CHECK(kept["manifest"] == json{"ann", "bob", "cy", "dee", "eve"});
  CHECK(kept["index"] == 1);

  const Ran merged = c.merge({"s1", "s0"}, "merged");
  INFO(merged.err);
  CHECK(merged.exit_code == 1);
  CHECK(merged.err.find("merged 2 shards: 5 submissions") != std::string::npos);
  CHECK(c.book("merged") == c.book("whole"));
  // Each row as its shard graded it, to the evidence.
  auto shards = c.book("s0", true);
  shards.merge(c.book("s1", true));
  CHECK(c.book("merged", true) == shards);
  // The merged folder is a batch's: its page, its name, and a regrade that changes nothing.
  CHECK(fs::is_regular_file(c.out / "merged/reports/index.html"));
  CHECK(json::parse(std::ifstream(c.out / "merged/reports/class.json"))["name"] ==
        fs::path(c.root.path()).filename().string());
  const Ran regraded = run({kGrade, "--regrade", c.out / "merged/reports", "-o", c.out / "regraded.json"});
  CHECK(regraded.err.find("0 verdicts changed, 0 only rescaled") != std::string::npos);
  // Anyone can check the merged grades against the evidence they came with.
  CHECK(run({kGrade, "verify", c.out / "merged/reports"}).exit_code == 0);
}

TEST_CASE("shards: a shard run twice is kept once, a missing one is named, one graded otherwise is refused") {
  Class c;
  REQUIRE(c.grade("s0", {"--shard", "0/2"}).exit_code == 1);
  REQUIRE(c.grade("s1", {"--shard", "1/2"}).exit_code == 1);
  REQUIRE(c.grade("s1-twin", {"--shard", "1/2"}).exit_code == 1);  // a twin pod of index 1

  // Each of shard 1's submissions once, from whichever copy the fixed rule picks, whatever the order.
  const Ran a = c.merge({"s0", "s1", "s1-twin"}, "a");
  const Ran b = c.merge({"s1-twin", "s0", "s1"}, "b");
  INFO(a.err);
  CHECK(a.exit_code == 1);
  CHECK(a.err.find("bob: graded by ") != std::string::npos);
  CHECK(a.err.find("(a shard run twice)") != std::string::npos);
  CHECK(a.err.find("nondeterministic") == std::string::npos);
  CHECK(c.book("a").size() == 5);
  CHECK(c.book("a") == c.book("b"));

  // Shard 1 never ran: its submissions are named, not graded, and the exit says so, apart from a
  // student who failed (1).
  const Ran missing = c.merge({"s0"}, "missing");
  CHECK(missing.exit_code == 3);
  CHECK(missing.err.find("2 submissions graded by no shard given: bob, dee") != std::string::npos);
  const auto rows = c.book("missing");
  CHECK(rows.at("bob")["status"] == "not_graded");
  CHECK(rows.at("ann")["status"] == "graded");

  // A shard on other traces is not of the same grading.
  REQUIRE(c.grade("other", {"--shard", "1/2"}, "8").exit_code == 1);
  const Ran other = c.merge({"s0", "other"}, "refused");
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("were graded differently (conformance)") != std::string::npos);
  // Nor is one of another split.
  REQUIRE(c.grade("thirds", {"--shard", "0/3"}).exit_code == 1);
  CHECK(c.merge({"s0", "thirds"}, "refused2").err.find("is a shard of 3") != std::string::npos);
}

TEST_CASE("shards: a shard that stopped half-way is taken up in its own folder with --resume, then merged whole") {
  Class c;
  REQUIRE(c.grade("s0", {"--shard", "0/2"}).exit_code == 1);
  REQUIRE(c.grade("s1", {"--shard", "1/2"}).exit_code == 1);
  // As a task killed before it finished dee leaves it: no report.json, so not whole.
  fs::remove(c.out / "s1/reports/dee/report.json");
  CHECK(c.merge({"s0", "s1"}, "early").err.find("graded by no shard given: dee") != std::string::npos);
  const Ran resumed = c.grade("s1", {"--shard", "1/2", "--resume"});
  INFO(resumed.err);
  CHECK(resumed.err.find("2 submissions in") != std::string::npos);
  CHECK(resumed.err.find("1 of them judged from what an earlier run kept") != std::string::npos);
  const Ran merged = c.merge({"s0", "s1"}, "late");
  CHECK(merged.err.find("merged 2 shards: 5 submissions") != std::string::npos);
  CHECK(merged.err.find("no shard") == std::string::npos);
  CHECK(c.book("late").at("dee")["status"] == "graded");
}

TEST_CASE("shards: a shard with conformance needs a seed every shard shares") {
  Class c;
  const Ran r = run({kGrade, "--batch", c.root.path(), "--run", "sh run.sh", "--conformance", "sh replay.sh", "--shard",
                     "0/2", "-o", c.out / "book.csv"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("every shard must run the same traces") != std::string::npos);
  const Ran alone = run({kGrade, "--shard", "0/2"});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("--shard is not one of its flags; cb-grade class takes it") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing

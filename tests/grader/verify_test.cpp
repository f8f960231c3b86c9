// A gradebook anyone can check: every kept grade names the SHA-256 of the evidence it was judged
// on, and cb-grade verify judges each again from that evidence, rewriting nothing: a folder as
// the batch kept it passes; one whose evidence was edited afterwards is named, whether the edit
// moves a verdict or not. Real kits, real programs, each in its own box.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "process.h"
#include "python_kit.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_CASE("verify: every kept grade follows from its evidence, and an edit of the evidence is named") {
  TempDir root;
  TempDir out;
  python_kit(root / "ann");
  python_kit(root / "bob");
  python_kit(root / "cy", "sum(self.window) * 100 >= ", "sum(self.window) * 100 > ");
  const std::string reports = out / "reports";
  const Ran graded = run({kGrade, "--batch", root.path(), "--run", "sh run.sh", "--conformance", "sh replay.sh",
                          "--seed", "3", "--traces", "30", "-j", "2", "--reports", reports, "-o", out / "book.json"});
  REQUIRE(graded.exit_code == 1);  // cy fails step 3
  // Each row names its evidence, as its report does.
  for (const json& row : json::parse(std::ifstream(out / "book.json"))) {
    const std::string name = row["submission"];
    CAPTURE(name);
    REQUIRE(row.contains("evidence_sha256"));
    CHECK(std::regex_match(row["evidence_sha256"].get<std::string>(), std::regex("[0-9a-f]{64}")));
    CHECK(json::parse(std::ifstream(reports + "/" + name + "/report.json"))["evidence_sha256"] ==
          row["evidence_sha256"]);
  }
  const Ran clean = run({kGrade, "verify", reports});
  INFO(clean.out, clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(clean.err.find("verified 3 submissions (3 graded): every grade follows from its evidence") !=
        std::string::npos);

  // The gradebook the batch wrote is what the kept grades give; one raised by hand is not.
  const Ran book = run({kGrade, "verify", reports, "--gradebook", out / "book.json"});
  INFO(book.out, book.err);
  CHECK(book.exit_code == 0);
  CHECK(book.err.find("every row is what its kept grade gives") != std::string::npos);
  json raised = json::parse(std::ifstream(out / "book.json"));
  for (json& row : raised)
    if (row["submission"] == "cy") row["score"] = 9;
  std::ofstream(out / "raised.json") << raised.dump(1);
  const Ran by_hand = run({kGrade, "verify", reports, "--gradebook", out / "raised.json"});
  CHECK(by_hand.exit_code == 1);
  CHECK(by_hand.out.find("cy: its gradebook row is not what its kept grade gives (score)") != std::string::npos);
  CHECK(by_hand.out.find("ann:") == std::string::npos);

  // A forged row before the real one: every name still has its right row somewhere, so a check by
  // name alone passes it. It is named, and so is the digest, which is no longer the file's own.
  json forged = json::parse(std::ifstream(out / "book.json"));
  for (const json& row : json::parse(std::ifstream(out / "book.json")))
    if (row["submission"] == "cy") {
      json full = row;
      full["score"] = 8;
      forged.insert(forged.begin(), full);
    }
  std::ofstream(out / "forged.json") << forged.dump(2) << "\n";
  fs::copy_file(out / "book.json.digest", out / "forged.json.digest");
  const Ran twice = run({kGrade, "verify", reports, "--gradebook", out / "forged.json"});
  INFO(twice.out);
  CHECK(twice.exit_code == 1);
  CHECK(twice.out.find("cy: in the gradebook 2 times; a submission has one row") != std::string::npos);
  CHECK(twice.out.find("forged.json.digest: not the digest of this gradebook's own bytes") != std::string::npos);
  CHECK(twice.out.find("forged.json.digest: not the digest of this gradebook's own rows") != std::string::npos);

  // The CSV gradebook too (a resumed batch writes it from what was kept, running nothing), cell by
  // cell; and the digest beside each, the same for both, over the rows the kept grades give.
  const Ran csv = run({kGrade, "--batch", root.path(), "--run", "sh run.sh", "--conformance", "sh replay.sh", "--seed",
                       "3", "--traces", "30", "--reports", reports, "--resume", "-o", out / "book.csv"});
  REQUIRE(csv.exit_code == 1);
  const json digest = json::parse(std::ifstream(out / "book.json.digest"));
  CHECK(digest["rows"] == 3);
  CHECK(std::regex_match(digest["sha256"].get<std::string>(), std::regex("[0-9a-f]{64}")));
  const json csv_digest = json::parse(std::ifstream(out / "book.csv.digest"));
  CHECK(csv_digest["sha256"] == digest["sha256"]);
  CHECK(csv_digest["rows"] == digest["rows"]);
  CHECK(csv_digest["file_sha256"] != digest["file_sha256"]);  // each file's own bytes
  CHECK(graded.err.find("the gradebook's digest: " + digest["sha256"].get<std::string>()) != std::string::npos);
  CHECK(run({kGrade, "verify", reports, "--gradebook", out / "book.csv"}).exit_code == 0);
  std::string cells = text_of(out / "book.csv");
  const auto cy = cells.find("\ncy,graded,7,");
  REQUIRE(cy != std::string::npos);
  {
    // The CSV's forged duplicate: the real row's line, an 8 for its 7, written above it.
    const auto end = cells.find('\n', cy + 1);
    std::string line = cells.substr(cy + 1, end - cy);
    line.replace(0, 12, "cy,graded,8,");
    std::ofstream(out / "forged.csv") << cells.substr(0, cells.find('\n') + 1) << line
                                      << cells.substr(cells.find('\n') + 1);
    const Ran csv_twice = run({kGrade, "verify", reports, "--gradebook", out / "forged.csv"});
    CHECK(csv_twice.exit_code == 1);
    CHECK(csv_twice.out.find("cy: in the gradebook 2 times; a submission has one row") != std::string::npos);
  }
  cells.replace(cy, 13, "\ncy,graded,8,");
  std::ofstream(out / "book.csv") << cells;
  const Ran csv_by_hand = run({kGrade, "verify", reports, "--gradebook", out / "book.csv"});
  CHECK(csv_by_hand.exit_code == 1);
  CHECK(csv_by_hand.out.find("cy: its gradebook row is not what its kept grade gives (score)") != std::string::npos);
  std::ofstream(out / "book.json.digest") << R"({"sha256": "0000"})";
  const Ran digest_edited = run({kGrade, "verify", reports, "--gradebook", out / "book.json"});
  CHECK(digest_edited.exit_code == 1);
  CHECK(digest_edited.out.find("book.json.digest: not the digest of the rows the kept grades give") !=
        std::string::npos);

  const std::string report_before = text_of(reports + "/ann/report.json");
  // ann's state.json says OPEN where the run left it CLOSED: a verdict moves.
  const std::string state = reports + "/ann/files/state.json";
  std::string s = text_of(state);
  const auto at = s.find("CLOSED");
  REQUIRE(at != std::string::npos);
  s.replace(at, 6, "OPEN");
  std::ofstream(state) << s;
  // bob's record gains a byte no check reads: no verdict moves, the evidence is still not what
  // was graded.
  std::ofstream(reports + "/bob/record.json", std::ios::app) << "\n";
  const Ran edited = run({kGrade, "verify", reports});
  INFO(edited.out, edited.err);
  CHECK(edited.exit_code == 1);
  CHECK(edited.err.find("2 do not") != std::string::npos);
  CHECK(edited.out.find("ann: does not follow from its evidence: step") != std::string::npos);
  CHECK(edited.out.find("bob: does not follow from its evidence: the evidence kept is not what it was graded on") !=
        std::string::npos);
  CHECK(edited.out.find("cy:") == std::string::npos);
  // Nothing was rewritten.
  CHECK(text_of(reports + "/ann/report.json") == report_before);

  // A regrade says so too, in the gradebook's change column.
  const Ran regraded = run({kGrade, "--regrade", reports, "-o", out / "regraded.json"});
  std::map<std::string, json> rows;
  for (const json& row : json::parse(std::ifstream(out / "regraded.json"))) rows[row["submission"]] = row;
  CHECK(rows.at("ann")["change"] == "verdict");
  CHECK(rows.at("bob")["change"] == "evidence");
  CHECK(rows.at("cy")["change"] == "none");

  // Held to the rubric it was graded with.
  out.write("rubric.json", R"({"points": {"1": 5}})");
  const Ran other = run({kGrade, "verify", reports, "--rubric", out / "rubric.json"});
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("graded with another rubric") != std::string::npos);
}

// Issue found: a batch with a roster whose email has capitals, and an empty folder, wrote a
// gradebook its own verify refused ("ada (numbers)", "zed (student)"): the batch named the
// numbers by the id as the key reads it and filled the empty row's student; a regrade did
// neither. Every gradebook of the same kept grades is now the same, and each verifies.
TEST_CASE("verify: every honest gradebook verifies, whoever wrote it: batch, --resume, --regrade, merge") {
  TempDir root;
  TempDir out;
  const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
  fs::create_directories(root / "ada");
  for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json", "transitions.log"})
    fs::copy_file(good + "/" + f, root / ("ada/" + std::string(f)));
  fs::create_directories(root / "zed");  // handed in nothing
  out.write("roster.csv", "Folder,SID,Email\nada,s1,Ada@Uni.edu\nzed,s2,Zed@Uni.edu\n");
  out.write("course.key", "the course key of the test\n");
  fs::permissions(out / "course.key", fs::perms::owner_read | fs::perms::owner_write);
  const std::vector<std::string> keyed{"--course-key",     out / "course.key", "--roster",
                                       out / "roster.csv", "--id-field",       "email"};
  const auto cb = [&](std::vector<std::string> a, bool with_key = true) {
    a.insert(a.begin(), kGrade);
    if (with_key) a.insert(a.end(), keyed.begin(), keyed.end());
    const Ran r = run(a);
    INFO(r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));  // 1: a student failed, on the numbers the key gave them
    return r;
  };
  cb({"--batch", root.path(), "--reports", out / "R", "-o", out / "batch.csv"});
  cb({"--batch", root.path(), "--reports", out / "R", "-o", out / "batch.json"});
  cb({"--batch", root.path(), "--reports", out / "R", "--resume", "-o", out / "resumed.csv"});
  cb({"--batch", root.path(), "--reports", out / "S0", "--shard", "0/2"});
  cb({"--batch", root.path(), "--reports", out / "S1", "--shard", "1/2"});
  cb({"merge", out / "S0", out / "S1", "--reports", out / "M", "-o", out / "merged.csv"}, false);
  cb({"--regrade", out / "R", "-o", out / "regraded.csv"}, false);
  cb({"--regrade", out / "R", "-o", out / "regraded.json"}, false);
  const std::string batch = text_of(out / "batch.csv");
  CHECK(batch.find("ada,Ada@Uni.edu,\"student ada@uni.edu's numbers") != std::string::npos);
  CHECK(batch.find("zed,Zed@Uni.edu,,empty") != std::string::npos);
  CHECK(text_of(out / "resumed.csv") == batch);
  // The merged class's evidence is the shards' (each kept its own stamp), its cells the batch's.
  const std::regex evidence(",[0-9a-f]{64},,");
  CHECK(std::regex_replace(text_of(out / "merged.csv"), evidence, ",E,,") ==
        std::regex_replace(batch, evidence, ",E,,"));
  CHECK(text_of(out / "regraded.csv").find("zed,Zed@Uni.edu,,empty") != std::string::npos);
  for (const auto& [reports, book] : std::vector<std::pair<std::string, std::string>>{{"R", "batch.csv"},
                                                                                      {"R", "batch.json"},
                                                                                      {"R", "resumed.csv"},
                                                                                      {"M", "merged.csv"},
                                                                                      {"R", "regraded.csv"},
                                                                                      {"R", "regraded.json"}}) {
    CAPTURE(book);
    const Ran v = run({kGrade, "verify", out / reports, "--gradebook", out / book});
    INFO(v.out, v.err);
    CHECK(v.exit_code == 0);
    CHECK(v.err.find(": every row is what its kept grade gives") != std::string::npos);
  }
  // An edit is still named, and counted as what it is.
  const std::string edited = std::regex_replace(batch, std::regex(",graded,[0-9],"), ",graded,9,");
  out.write("edited.csv", edited);
  fs::copy_file(out / "batch.csv.digest", out / "edited.csv.digest");
  const Ran v = run({kGrade, "verify", out / "R", "--gradebook", out / "edited.csv"});
  CHECK(v.exit_code == 1);
  CHECK(v.out.find("ada: its gradebook row is not what its kept grade gives (score)") != std::string::npos);
  CHECK(v.err.find("edited.csv: 2 differences from what the kept grades give (above)") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing

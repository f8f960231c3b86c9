// A class graded at once as an instructor does it: cb-grade --batch --run --conformance
// --reports on real kits (right ones, a classic mistake, a crash, a hang, a flood of output, an
// empty folder, a folder whose name a spreadsheet would run), then --regrade under a new rubric
// with nothing run. Real programs on real servers, each in its own box.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "cb/grade/batch.h"
#include "cb/utf8_text.h"
#include "process.h"
#include "python_kit.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;

std::map<std::string, json> by_submission(const json& book) {
  std::map<std::string, json> rows;
  for (const auto& row : book) rows[row["submission"].get<std::string>()] = row;
  return rows;
}

struct Class {
  TempDir root;
  Class() {
    python_kit(root / "alice");
    // The window's trip compared with > (opens a call late): step 3 and the conformance rule.
    python_kit(root / "bob", "sum(self.window) * 100 >= self.failure_rate_percent",
               "sum(self.window) * 100 > self.failure_rate_percent");
    python_kit(root / "=cmd");            // a spreadsheet would run this name as a formula
    fs::create_directory(root / "dora");  // handed in nothing
    python_kit(root / "eve");
    root.write("eve/run.sh", "echo 'Traceback: boom' >&2\nexit 3\n");
    python_kit(root / "fay");
    root.write("fay/run.sh", "exec sleep 600\n");  // hangs: killed at the time limit
    python_kit(root / "gil");                      // floods its output, then does the lab right
    root.write("gil/run.sh", "head -c 20000000 /dev/zero | tr '\\0' x\nexec python3 lab.py \"$@\"\n");
  }
  Ran batch(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv{kGrade,          "--batch",      root.path(), "--run", "sh run.sh", "--timeout", "8s",
                                  "--conformance", "sh replay.sh", "--traces",  "20",    "-j",        "6"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv, "", {}, std::chrono::seconds{180});
  }
};

// One batch a test program, however many subcases read it (doctest runs a test case again for
// each): a class takes seconds, its verdicts do not change.
struct Graded {
  Class c;
  TempDir out;
  Ran ran;
  explicit Graded(const std::string& seed)
      : ran(c.batch({"--seed", seed, "--reports", out / "reports", "-o", out / "book.json"})) {}
};

TEST_CASE("cb-grade --batch --reports: a report for every student, and a gradebook that says why") {
  static const Graded g("4242");
  const Class& c = g.c;
  const TempDir& out = g.out;
  INFO(g.ran.out, g.ran.err);
  REQUIRE(g.ran.exit_code == 1);  // some failed
  const json book = json::parse(std::ifstream(out / "book.json"));
  auto rows = by_submission(book);
  REQUIRE(rows.size() == 7);

  SUBCASE("a right one: full marks, its reports and evidence kept") {
    const json& a = rows["alice"];
    CHECK(a["status"] == "graded");
    CHECK(a["score"] == 9);
    CHECK(a["conformance"]["status"] == "pass");
    CHECK(a["conformance"]["seed"] == 4242);
    CHECK(a["program"]["exit_code"] == 0);
    CHECK(a["program"]["timed_out"] == false);
    CHECK(!a["sandbox"].get<std::string>().empty());
    CHECK(!a["grader_version"].get<std::string>().empty());
    CHECK(a["lab_spec_sha256"].get<std::string>().size() == 64);
    for (const char* f : {"report.json", "report.txt", "report.html", "record.json", "conformance.json", "grading.json",
                          "files/state.json", "files/transitions.log"})
      CHECK_MESSAGE(fs::is_regular_file(out / ("reports/alice/" + std::string(f))), f);
    const json report = json::parse(std::ifstream(out / "reports/alice/report.json"));
    CHECK(report["score"] == 9);
    CHECK(report["grader_version"] == a["grader_version"]);
    CHECK(slurp(out / "reports/alice/report.html").find("<html") != std::string::npos);
    const json conf = json::parse(std::ifstream(out / "reports/alice/conformance.json"));
    CHECK(conf["seed"] == 4242);
    // Every trace, answered in the kit's shared processes, and the first again alone.
    int shared = 0;
    int alone = 0;
    for (const json& r : conf["answers"]["replies"]) (r.value("alone", false) ? alone : shared) += 1;
    CHECK(shared == 20);
    CHECK(alone == 1);
    CHECK(conf["answers"]["processes"] == 2);  // in a batch, traces one after another: one process, and one alone
  }
  SUBCASE("a classic mistake: the step, the first failing check and its message, the rule") {
    const json& b = rows["bob"];
    CHECK(b["steps"]["3"]["status"] == "fail");
    CHECK(b["steps"]["3"]["check"] == "s3.trip");
    CHECK(b["steps"]["3"]["message"].get<std::string>().find("3rd") != std::string::npos);
    CHECK(b["conformance"]["status"] == "fail");
    CHECK(b["conformance"]["rule"] == "trip_at_threshold");
    CHECK(b["conformance"]["seed"] == 4242);  // one seed for the whole class
  }
  SUBCASE("empty, a crash, a hang: each its own story") {
    CHECK(rows["dora"]["status"] == "empty");
    CHECK(rows["dora"]["error"].get<std::string>().find("empty") != std::string::npos);
    CHECK(rows["dora"]["max_score"] == 9);  // out of the assignment's points, like every row
    CHECK(rows["eve"]["program"]["exit_code"] == 3);
    CHECK(slurp(out / "reports/eve/report.txt").find("Traceback: boom") != std::string::npos);
    CHECK(rows["fay"]["program"]["timed_out"] == true);
    CHECK(rows["fay"]["score"] < 9);
    CHECK(rows["gil"]["score"] == 9);  // its output does not stand in its way
    CHECK(fs::file_size(out / "reports/gil/report.txt") < 64 * 1024);
  }
  SUBCASE("the CSV: no cell a spreadsheet would evaluate, the same columns for every row") {
    TempDir csv_out;
    const Ran csv = c.batch({"--seed", "4242", "-o", csv_out / "book.csv"});
    const std::string text = slurp(csv_out / "book.csv");
    INFO(text);
    CHECK(text.find("\n'=cmd,graded,") != std::string::npos);
    CHECK(text.find("\n=cmd") == std::string::npos);
    CHECK(text.find(",step3,step3_check,step3_message,") != std::string::npos);
    std::istringstream lines(text);
    std::string header;
    std::getline(lines, header);
    CHECK(header.find(",conformance,conformance_rule,conformance_seed,exit_code,seconds,timed_out,sandbox,") !=
          std::string::npos);
    CHECK(std::regex_search(text, std::regex("\nbob,graded,[0-9.]+,9,false,.*,fail,trip_at_threshold,4242,0,")));
    CHECK(std::regex_search(text, std::regex("\ndora,empty,0,9,false,(,)+the folder is empty")));
  }
}

TEST_CASE("cb-grade --regrade: a new rubric over the kept evidence, nothing run, conformance kept") {
  static Graded g("99");
  REQUIRE_MESSAGE((g.ran.exit_code == 1), g.ran.err);
  // Nothing may run: the programs are gone.
  for (const char* name : {"alice", "bob", "eve", "fay", "gil"}) fs::remove_all(g.c.root / name);
  const auto before = by_submission(json::parse(std::ifstream(g.out / "book.json")));
  // Each subcase regrades its own copy of what the batch kept.
  TempDir out;
  fs::copy(g.out / "reports", out / "reports", fs::copy_options::recursive);

  SUBCASE("the same rubric: the same verdicts, nothing changed") {
    const Ran r = run({kGrade, "--regrade", out / "reports", "-o", out / "again.json"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("regraded 7 submissions: 0 verdicts changed, 0 only rescaled") != std::string::npos);
    const auto again = by_submission(json::parse(std::ifstream(out / "again.json")));
    for (const auto& entry : before) {
      const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one
      const json& row = entry.second;
      CAPTURE(name);
      CHECK(again.at(name)["score"] == row["score"]);
      CHECK(again.at(name).value("steps", json()) == row.value("steps", json()));
      CHECK(again.at(name).value("conformance", json()) == row.value("conformance", json()));
      CHECK(again.at(name)["status"] == row["status"]);
    }
  }
  SUBCASE("conformance worth 5: the right one 13/13, the mistaken one loses exactly those points") {
    out.write("rubric.json", R"({"points": {"conformance": 5}})");
    const Ran r = run({kGrade, "--regrade", out / "reports", "--rubric", out / "rubric.json", "-o", out / "new.csv"});
    INFO(r.err);
    // Every graded row is rescaled, none has another verdict: one line says so, no row by row.
    CHECK(r.err.find("regraded 7 submissions: 0 verdicts changed, 6 only rescaled") != std::string::npos);
    CHECK(r.err.find("only rescaled (the same verdicts, other points or grader), e.g. ") != std::string::npos);
    CHECK(r.err.find("\nalice: score 9/9 -> 13/13") == std::string::npos);
    const auto after = by_submission(json::parse(
        run({kGrade, "--regrade", out / "reports", "--rubric", out / "rubric.json", "--format", "json"}).out));
    CHECK(after.at("alice")["score"] == 13);
    CHECK(after.at("bob")["max_score"] == 13);
    CHECK(after.at("bob")["score"] == before.at("bob")["score"]);  // its conformance failed: 0 of 5
    CHECK(after.at("bob")["conformance"]["rule"] == "trip_at_threshold");
    // The student's report says the new grade.
    CHECK(json::parse(std::ifstream(out / "reports/alice/report.json"))["max_score"] == 13);
    CHECK(slurp(out / "new.csv").find(",change,changes,fault,error\n") != std::string::npos);
    CHECK(slurp(out / "new.csv").find(",rescaled,score 9/9 -> 13/13,") != std::string::npos);
  }
  SUBCASE("a verdict that changed is named, apart from the points that only moved") {
    // alice's kept log loses its last line: step 8 no longer passes; and conformance is worth 5.
    const std::string log = out / "reports/alice/files/transitions.log";
    std::string text = slurp(log);
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    std::ofstream(log) << text;
    out.write("rubric.json", R"({"points": {"conformance": 5}})");
    const Ran r = run({kGrade, "--regrade", out / "reports", "--rubric", out / "rubric.json", "-o", out / "new.json"});
    INFO(r.err);
    CHECK(r.err.find("alice: step 8: pass -> fail; score 9/9 -> 12/13") != std::string::npos);
    CHECK(r.err.find("regraded 7 submissions: 1 verdicts changed, 5 only rescaled") != std::string::npos);
    const auto after = by_submission(json::parse(std::ifstream(out / "new.json")));
    CHECK(after.at("alice")["change"] == "verdict");
    CHECK(after.at("gil")["change"] == "rescaled");
    CHECK(after.at("dora")["change"] == "none");
  }
  SUBCASE("a rubric that fixes other traces than the answers are to: that part not judged, and why") {
    out.write("rubric.json", R"({"seed": 100})");
    const auto after = by_submission(json::parse(
        run({kGrade, "--regrade", out / "reports", "--rubric", out / "rubric.json", "--format", "json"}).out));
    CHECK(after.at("alice")["conformance"]["status"] == "error");
    CHECK(after.at("alice")["conformance"]["rule"] == "other_traces");
    CHECK(after.at("alice")["conformance"]["message"].get<std::string>().find(
              "the rubric asks for 20 traces of seed 100; the answers kept are to 20 traces of seed 99") !=
          std::string::npos);
    // The rubric's seed as the batch had it: judged.
    out.write("rubric.json", R"({"seed": 99, "traces": 20})");
    const auto same = by_submission(json::parse(
        run({kGrade, "--regrade", out / "reports", "--rubric", out / "rubric.json", "--format", "json"}).out));
    CHECK(same.at("alice")["conformance"]["status"] == "pass");
  }
  SUBCASE("answers that were never asked for: not judged, and said so") {
    // As if the grader now wanted a trace the first grade never ran: drop one of alice's.
    const std::string path = out / "reports/alice/conformance.json";
    json conf = json::parse(std::ifstream(path));
    conf["answers"]["replies"].erase(conf["answers"]["replies"].begin());
    std::ofstream(path) << conf.dump();
    const auto after = by_submission(json::parse(run({kGrade, "--regrade", out / "reports", "--format", "json"}).out));
    CHECK(after.at("alice")["conformance"]["status"] == "error");
    CHECK(after.at("alice")["conformance"]["rule"] == "not_kept");
  }
  SUBCASE("a broken kept folder names the file and the field") {
    out.write("reports/alice/grading.json", R"({"format": "cb-grade kept grade 1", "program": {"seconds": "x"}})");
    const auto after = by_submission(json::parse(run({kGrade, "--regrade", out / "reports", "--format", "json"}).out));
    CHECK(after.at("alice")["status"] == "error");
    CHECK(after.at("alice")["error"].get<std::string>().find("reports/alice/grading.json") != std::string::npos);
  }
}

TEST_CASE("gradebook cells: a leading = + - @ is text to a spreadsheet, and quoting holds") {
  CHECK(grade::csv_cell("=HYPERLINK(\"x\")") == "\"'=HYPERLINK(\"\"x\"\")\"");
  CHECK(grade::csv_cell("+1") == "'+1");
  CHECK(grade::csv_cell("-2") == "'-2");
  CHECK(grade::csv_cell("@SUM(A1)") == "'@SUM(A1)");
  CHECK(grade::csv_cell("\tx") == "'\tx");
  CHECK(grade::csv_cell("a,b") == "\"a,b\"");
  CHECK(grade::csv_cell("line\nbreak") == "\"line\nbreak\"");
  CHECK(grade::csv_cell("alice") == "alice");
  // A byte that is not UTF-8 becomes U+FFFD, as in the JSON gradebook.
  CHECK(grade::csv_cell("caf\xe9") == "caf\xef\xbf\xbd");
}

// The finding: a folder named in Latin-1 ("café") put its raw byte into the CSV, which an LMS import
// refuses as invalid UTF-8, while the JSON gradebook replaced it. Files only: nothing is run.
TEST_CASE("gradebook: a folder whose name is not UTF-8 gets a CSV row of valid UTF-8, the JSON's") {
  TempDir root;
  TempDir out;
  fs::create_directory(root / "caf\xe9");
  root.write("caf\xe9/state.json", "{\"state\": \"CLOSED\"}");
  const Ran csv = run({kGrade, "--batch", root.path(), "-o", out / "book.csv"});
  INFO(csv.err);
  const std::string book = [&] {
    std::ifstream in(out / "book.csv", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  REQUIRE_FALSE(book.empty());
  CHECK(invalid_utf8_at(book) == std::string::npos);
  CHECK(book.find("\ncaf\xef\xbf\xbd,") != std::string::npos);
  const Ran js = run({kGrade, "--batch", root.path(), "--format", "json"});
  CHECK(json::parse(js.out).at(0)["submission"] == "caf\xef\xbf\xbd");
}

// A folder handed in zipped once got 0 with "cannot open run.sh", which says nothing of why.
TEST_CASE("cb-grade --batch: a folder that holds only an archive is named as one, and not unpacked") {
  TempDir root;
  fs::create_directories(root / "zed");
  fs::create_directories(root / "ann");
  root.write("zed/zed.zip", "PK\x03\x04 not graded as it is");
  root.write("ann/notes.txt", "a folder with more than an archive is graded as it is");
  // However many archives come first in the listing, one name that is not one makes it a folder.
  fs::create_directories(root / "cy");
  for (const char* zip : {"a.zip", "b.zip", "c.tar.gz", "d.7z"}) root.write(std::string("cy/") + zip, "PK");
  root.write("cy/run.sh", "exit 3\n");
  const Ran js = run({kGrade, "--batch", root.path(), "--format", "json"});
  INFO(js.err);
  const json book = json::parse(js.out, nullptr, false);
  REQUIRE(book.is_array());
  const auto rows = by_submission(book);
  CHECK(rows.at("zed")["status"] == "error");
  CHECK(rows.at("zed")["fault"] == "program");
  CHECK(rows.at("zed")["error"].get<std::string>().find("the folder holds only zed.zip, an archive; the grader does "
                                                        "not unpack archives") == 0);
  CHECK(rows.at("ann")["status"] == "graded");
  CHECK(rows.at("cy")["status"] == "graded");
  CHECK_FALSE(fs::exists(root / "zed/zed"));
}

// A files-only batch reads what a student handed in as root: a device node among the files must be
// named by its kind, its driver's open never run (which once answered "No such device or address").
TEST_CASE("cb-grade --batch: a state.json that is a device is named as one in the student's row") {
  if (skip_unless(::geteuid() == 0, "making device nodes needs root")) return;
  TempDir root;
  fs::create_directory(root / "alice");
  REQUIRE(::mknod((root / "alice/state.json").c_str(), S_IFCHR | 0644, makedev(0, 0)) == 0);
  const Ran js = run({kGrade, "--batch", root.path(), "--format", "json"});
  INFO(js.err);
  const json book = json::parse(js.out, nullptr, false);
  REQUIRE(book.is_array());
  CHECK(book.dump().find("state.json is a character device, not a file the lab writes") != std::string::npos);
  CHECK(book.dump().find("No such device") == std::string::npos);
}

// Issue found: on this 2-core machine the default was 2 at once (30 minutes for a class of 300
// that -j 8 grades in 4), and in a Slurm task of one CPU it still followed the machine's cores.
TEST_CASE("cb-grade --batch: with no -j, 4 a CPU this process may use, bounded by its memory, and said") {
  if (skip_unless(fs::exists("/usr/bin/taskset") && fs::exists("/usr/bin/script"),
                  "taskset and script (util-linux) are not installed"))
    return;
  TempDir root;
  fs::create_directory(root / "dora");  // empty: nothing runs, only the count is said
  // On a terminal (script(1) gives it one), where the progress line goes.
  const auto on_a_terminal = [&](const std::string& prefix) {
    return run({"/usr/bin/script", "-qec", prefix + kGrade + " --batch " + root.path() + " 2>&1", "/dev/null"}).out;
  };
  const std::string one_cpu = on_a_terminal("/usr/bin/taskset -c 0 ");
  CHECK(one_cpu.find("cb-grade: 1 submission, 4 at a time (-j 4: 4 per CPU of the 1 this process may use "
                     "(affinity))") != std::string::npos);
  const std::string slurm = on_a_terminal("env SLURM_CPUS_PER_TASK=1 SLURM_MEM_PER_NODE=100 ");
  CHECK(slurm.find("cb-grade: 1 submission, 1 at a time (-j 1: one per 512 MiB of the 100 MiB this process "
                   "may use (Slurm --mem))") != std::string::npos);
  CHECK(on_a_terminal("").find(" at a time (-j ") != std::string::npos);
  // In a log too (a Slurm task's output file is a file, not a terminal), on its first line.
  const Ran piped = run({kGrade, "--batch", root.path()}, "", {"SLURM_CPUS_PER_TASK=1", "SLURM_MEM_PER_NODE=100"});
  CHECK(piped.err.rfind("cb-grade: 1 submission, 1 at a time (-j 1: one per 512 MiB of the 100 MiB this process may "
                        "use (Slurm --mem))\n",
                        0) == 0);
  CHECK(piped.err.find("\ncb-grade: 1 submission in 0:") != std::string::npos);  // one, not "1 submissions"
}

}  // namespace
}  // namespace cb::testing

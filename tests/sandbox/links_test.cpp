// Links a submission hands in, or makes while it runs, are never followed by the grader: it
// neither writes nor reads through them, as root or as an ordinary user, in either sandbox. Each
// case is a folder outside the submission that must come out as it went in (and a secret in it
// that must not reach any report).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "grading.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

constexpr const char* kSecret = "SECRET-CANARY-7f3a";

// A folder of the machine's, where the grader's user can write: lab files of its own, one of
// them a secret only that user may read.
struct Victim {
  TempDir dir;
  std::map<std::string, std::string> before;
  explicit Victim(const Setup& s) {
    dir.write("state.json", std::string(R"({"state": ")") + kSecret + "\"}\n");
    dir.write("transitions.log", "VICTIM\n");
    ::chmod((dir / "state.json").c_str(), 0600);
    ::chmod(dir.path().c_str(), 0700);
    if (!s.root && am_root()) {
      for (const char* f : {"state.json", "transitions.log"}) (void)::chown((dir / f).c_str(), user_id(), user_id());
      (void)::chown(dir.path().c_str(), user_id(), user_id());
    }
    before = contents(dir.path());
  }
  void check_untouched() const { CHECK(contents(dir.path()) == before); }
};

std::vector<std::string> grade_argv(const Setup& s, const Submission& sub, const std::string& command,
                                    std::vector<std::string> extra) {
  std::vector<std::string> argv{grader_for(s), "--run", command,    "--submission", sub.dir.path(),
                                "--sandbox",   s.mode,  "--format", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return as(s, argv);
}

TEST_CASE("links: a link the submission ships where the grader writes is refused, and its target untouched") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": --dir").c_str()) {
      Victim victim(s);
      Submission sub(s, {}, true);
      std::filesystem::create_directory_symlink(victim.dir.path(), sub.dir / "cb");
      const Ran r = run(grade_argv(s, sub, "python3 breaker.py", {"--dir", sub.dir / "cb"}));
      INFO(r.out, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("cb-grade: --dir: ") == 0);
      CHECK(r.err.find("/cb: a symbolic link (to " + victim.dir.path() + ")") != std::string::npos);
      victim.check_untouched();
    }
    SUBCASE((s.name() + ": --reports").c_str()) {
      Victim victim(s);
      Submission sub(s, {}, true);
      std::filesystem::create_directory_symlink(victim.dir.path(), sub.dir / "reports");
      TempDir out;
      hand_over(out.path(), s, true);
      const Ran r =
          run(grade_argv(s, sub, "python3 breaker.py", {"--dir", out.path(), "--reports", sub.dir / "reports"}));
      INFO(r.out, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("cb-grade: --reports: ") == 0);
      CHECK(r.err.find("a symbolic link") != std::string::npos);
      victim.check_untouched();
    }
    SUBCASE((s.name() + ": -o").c_str()) {
      Victim victim(s);
      Submission sub(s, {}, true);
      std::filesystem::create_directory_symlink(victim.dir.path(), sub.dir / "out");
      TempDir out;
      hand_over(out.path(), s, true);
      const Ran r =
          run(grade_argv(s, sub, "python3 breaker.py", {"--dir", out.path(), "-o", sub.dir / "out/state.json"}));
      INFO(r.out, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("cb-grade: -o: ") == 0);
      victim.check_untouched();
    }
  }
}

TEST_CASE("links: a program that replaces its output folder by a link gets nothing read through it") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Victim victim(s);
      Submission sub(s, {"swap_out_dir.sh"});
      hand_over(sub.dir.path(), s, true);  // --dir is made in it
      // Inside the submission, so the folder is the program's to remove (outside it, the full
      // sandbox's is a mount point it cannot).
      const Ran r = run(grade_argv(s, sub, "sh swap_out_dir.sh",
                                   {"--dir", sub.dir / "cb", "--program-env", "TARGET=" + victim.dir.path()}));
      INFO(r.out, r.err);
      const json report = json::parse(r.out, nullptr, false);
      REQUIRE(report.is_object());
      REQUIRE(attack_line(report["run_output"]).is_object());
      CHECK(attack_line(report["run_output"])["swapped"] == 0);
      CHECK(r.out.find(kSecret) == std::string::npos);
      CHECK(r.out.find("a symbolic link") != std::string::npos);  // said, in the checks that read files
      CHECK(report["score"] == 0);
      // Nothing of it was copied where the student reads their files.
      CHECK_FALSE(std::filesystem::exists(sub.dir / "cb/state.json"));
      victim.check_untouched();
    }
  }
}

TEST_CASE("links: in a batch, a folder that links to a classmate's is refused for that submission alone") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": files only").c_str()) {
      TempDir root;
      std::filesystem::create_directories(root / "alice/cb");
      for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json", "transitions.log"})
        std::filesystem::copy_file(std::string(CB_FIXTURES) + "/submissions/good/" + f,
                                   root / (std::string("alice/cb/") + f));
      std::filesystem::create_directories(root / "bob");
      std::filesystem::create_directory_symlink("../alice/cb", root / "bob/cb");
      hand_over(root.path(), s, false);
      const Ran r = run(as(s, {grader_for(s), "--batch", root.path(), "--batch-files", "cb", "--format", "json"}));
      INFO(r.out, r.err);
      const json book = json::parse(r.out, nullptr, false);
      REQUIRE(book.is_array());
      std::map<std::string, json> rows;
      for (const auto& row : book) rows[row["submission"].get<std::string>()] = row;
      CHECK(rows["alice"]["status"] == "graded");
      CHECK(rows["bob"]["status"] == "error");
      CHECK(rows["bob"]["error"].get<std::string>().find("bob/cb: a symbolic link (to ../alice/cb)") !=
            std::string::npos);
    }
    SUBCASE((s.name() + ": --run, a program that links its output to a classmate's files").c_str()) {
      TempDir root;
      std::filesystem::create_directories(root / "victim/cb");
      root.write("victim/cb/state.json", std::string(R"({"state": ")") + kSecret + "\"}\n");
      std::filesystem::copy_file(std::string(CB_FIXTURES) + "/students/good_breaker.py", root / "victim/breaker.py");
      root.write("victim/run.sh", "exec python3 breaker.py\n");
      std::filesystem::create_directories(root / "attacker");
      std::filesystem::copy_file(std::string(CB_FIXTURES) + "/attacks/swap_out_dir.sh", root / "attacker/run.sh");
      hand_over(root.path(), s, false);
      TempDir reports;
      hand_over(reports.path(), s, true);
      const Ran r = run(as(s, {grader_for(s), "--batch", root.path(), "--batch-files", "cb", "--run", "sh run.sh",
                               "--sandbox", s.mode, "--format", "json", "--reports", reports.path(), "--program-env",
                               "TARGET=" + (root / "victim/cb")}),
                        "", {}, std::chrono::seconds{120});
      INFO(r.out, r.err);
      const json book = json::parse(r.out, nullptr, false);
      REQUIRE(book.is_array());
      std::map<std::string, json> rows;
      for (const auto& row : book) rows[row["submission"].get<std::string>()] = row;
      CHECK(rows["victim"]["score"] == 8);
      CHECK(rows["attacker"]["score"] == 0);
      CHECK(r.out.find(kSecret) == std::string::npos);
      // What is kept as the attacker's evidence is not the classmate's files.
      CHECK_FALSE(std::filesystem::exists(reports / "attacker/files/state.json"));
      CHECK(slurp(reports / "attacker/report.json").find(kSecret) == std::string::npos);
    }
  }
}

}  // namespace
}  // namespace cb::testing

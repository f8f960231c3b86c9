// Hostile programs (tests/fixtures/attacks/) graded by cb-grade, each in the full sandbox and in
// the fallback, by a grader run as root and as an ordinary user: the score is only what the lab
// work earned, the grader finishes with a well-formed report, classmates keep their 8/8 and their
// folders, and nothing outside the sandbox changes. Each case is a row of docs/GRADER.md's table
// "What a submission can and cannot do".
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "grading.h"
#include "process.h"
#include "temp_dir.h"
#include "skip.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

TEST_CASE("sandbox: a program cannot write its own score into the grader's memory") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"proc_mem.py"});
      TempDir out;
      TempDir rubric_dir;
      rubric_dir.write("rubric.json", R"({"points": {"1": 1.2345678901234567}})");
      hand_over(rubric_dir.path(), s, false);
      const Graded g = grade(s, sub, out, "python3 proc_mem.py", {"--rubric", rubric_dir / "rubric.json"});
      check_containment(s, g);
      INFO(g.report.dump(1));
      // It asked /count and nothing else: step 1's points at most, out of the rubric's.
      CHECK(g.report["max_score"].get<double>() == doctest::Approx(1.2345678901234567 + 7));
      CHECK(g.report["score"].get<double>() <= 1.2345678901234567 + 1e-9);
      REQUIRE(g.attack.is_object());
      CHECK(g.attack["opened"] == 0);
      CHECK(g.attack["patched"] == 0);
    }
  }
}

TEST_CASE("sandbox: a program cannot type into, or paint on, the terminal that ran the grader") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"tiocsti.py"});
      TempDir out;
      TempDir cwd;
      hand_over(out.path(), s, true);
      hand_over(cwd.path(), s, true);
      std::string command;
      for (const std::string& a :
           as(s, {grader_for(s), "--run", "python3 tiocsti.py", "--submission", sub.dir.path(), "--dir", out.path(),
                  "--sandbox", s.mode, "--format", "json", "-o", out / "report.json"}))
        command += "'" + a + "' ";
      const Ran r = run({"/usr/bin/python3", kPtyRun, cwd.path(), command});
      INFO(r.out, r.err);
      CHECK(r.out.find("FAKE-VERDICT") == std::string::npos);
      CHECK(r.out.find("READ:[]") != std::string::npos);  // the shell read nothing typed for it
      CHECK_FALSE(fs::exists(cwd / "PWNED"));
      const json report = json::parse(slurp(out / "report.json"));
      const json attack = attack_line(report["run_output"]);
      REQUIRE(attack.is_object());
      CHECK(attack["tty"] != "opened");
    }
  }
}

TEST_CASE("sandbox: a program cannot hang the grader through the file its report is written to") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"fifo_report.py"});
      TempDir out;
      const Graded g =
          grade(s, sub, out, "python3 fifo_report.py", {"-o", out / "report.json"}, std::chrono::seconds{60});
      INFO(g.ran.out, g.ran.err);
      CHECK((g.ran.exit_code == 0 || g.ran.exit_code == 1));  // graded, not hung (a hang is killed at 60 s: 137)
      const json report = json::parse(slurp(out / "report.json"), nullptr, false);
      REQUIRE(report.is_object());
      const json attack = attack_line(report["run_output"]);
      REQUIRE(attack.is_object());
      CHECK(attack["made"].empty());
      for (const auto& e : fs::directory_iterator(out.path())) CHECK_FALSE(e.is_fifo());
    }
  }
}

// A batch: four attackers first, then two classmates with a right solution, two submissions at
// a time, so the classmates start while or after the attackers do their worst.
// The poisoner looks for five seconds, beside the others and the first classmate.
const std::vector<std::pair<std::string, std::string>> kAttackers = {{"a1-poison", "poison_neighbour.py"},
                                                                     {"a2-overwrite", "overwrite_neighbour.sh"},
                                                                     {"a3-borrow", "run_neighbour.sh"},
                                                                     {"a4-kill", "kill_all.sh"}};
const std::vector<std::string> kClassmates = {"b-victim", "c-victim"};

struct Class {
  TempDir root;
  std::map<std::string, std::map<std::string, std::string>> before;
  explicit Class(const Setup& s) {
    for (const auto& [name, attack] : kAttackers) {
      fs::create_directory(root / name);
      if (attack.substr(attack.size() - 3) == ".py") {
        fs::copy_file(kAttacks + "/" + attack, root / (name + "/" + attack));
        root.write(name + "/run.sh", "exec python3 " + attack + "\n");
      } else {
        fs::copy_file(kAttacks + "/" + attack, root / (name + "/run.sh"));
      }
    }
    for (const std::string& name : kClassmates) {
      fs::create_directory(root / name);
      fs::copy_file(kStudents + "/good_breaker.py", root / (name + "/breaker.py"));
      root.write(name + "/run.sh", "exec python3 breaker.py\n");
    }
    hand_over(root.path(), s, false);
    for (const std::string& name : kClassmates) before[name] = contents(root / name);
  }
};

TEST_CASE("sandbox: in a batch, a program cannot reach its classmates, nor kill the grader") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Class c(s);
      const Ran ran = run(as(s, {grader_for(s), "--batch", c.root.path(), "--batch-files", "out", "--run", "sh run.sh",
                                 "--sandbox", s.mode, "--format", "json", "-j", "2"}),
                          "", {}, std::chrono::seconds{120});
      // A gradebook at all: kill -9 -1 did not take the grader with it.
      const json book = json::parse(ran.out, nullptr, false);
      REQUIRE_MESSAGE(book.is_array(), ran.out, ran.err);
      REQUIRE(book.size() == kAttackers.size() + kClassmates.size());
      std::map<std::string, json> rows;
      for (const auto& row : book) rows[row["submission"].get<std::string>()] = row;
      for (const std::string& name : kClassmates) {
        CAPTURE(name);
        // Their run.sh was not overwritten, their server got no admin request, and their folder
        // is as it was.
        CHECK(rows[name]["score"] == 8);
        CHECK(contents(c.root / name) == c.before.at(name));
      }
      // No breaker of its own, and no way to borrow one.
      CHECK(rows["a3-borrow"]["score"] == 0);
    }
  }
}

TEST_CASE("sandbox: a program cannot rename the machine, and its limits hold") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": hostname").c_str()) {
      char before[256] = {};
      ::gethostname(before, sizeof before - 1);
      Submission sub(s, {"hostname.sh"});
      TempDir out;
      const Graded g = grade(s, sub, out, "sh hostname.sh");
      char after[256] = {};
      ::gethostname(after, sizeof after - 1);
      if (std::string(after) != before) (void)::sethostname(before, std::strlen(before));  // put it back for the others
      CHECK(std::string(after) == before);
      check_containment(s, g);
    }
    // The limits the kernel refuses at (the program goes on, and says so): how far each got.
    // (Memory: tests/sandbox/memory_test.cpp.)
    struct Hog {
      const char* file;
      const char* flag;
      const char* value;
      const char* got;  // the attack's own count of what it had
      int most;         // no more than this
      const char* limit_hit;
    };
    for (const Hog& h : {Hog{"fork_bomb.py", "--limit-processes", "32", "children", 31, "processes"},
                         Hog{"big_file.py", "--limit-file-size", "1M", "written", 1 << 20, "file_size"},
                         Hog{"open_files.py", "--limit-files", "64", "held", 63, "open_files"}}) {
      SUBCASE((s.name() + ": " + h.file + " against " + h.flag + " " + h.value).c_str()) {
        Submission sub(s, {h.file});
        TempDir out;
        const Graded g = grade(s, sub, out, std::string("python3 ") + h.file, {h.flag, h.value});
        check_containment(s, g);
        REQUIRE(g.attack.is_object());
        CHECK(g.attack[h.got].get<long>() <= h.most);
        CHECK(g.report["program"]["limit_hit"] == h.limit_hit);
      }
    }
    SUBCASE((s.name() + ": CPU time").c_str()) {
      Submission sub(s, {"cpu.sh"});
      TempDir out;
      const Graded g = grade(s, sub, out, "sh cpu.sh", {"--limit-cpu", "1s", "--timeout", "20s"});
      check_containment(s, g);
      CHECK(g.report["program"]["timed_out"] == false);  // stopped by the CPU limit, long before the clock's
      CHECK(g.report["program"]["limit_hit"] == "cpu");
      CHECK(g.report["program"]["limit_text"] == "the CPU-time limit (1 s a process)");
    }
  }
}

TEST_CASE("sandbox: what a program prints and writes reaches the reports as data") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": escape sequences in its output").c_str()) {
      Submission sub(s, {"escape_output.sh"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Ran r = run(as(s, {grader_for(s), "--run", "sh escape_output.sh", "--submission", sub.dir.path(), "--dir",
                               out.path(), "--sandbox", s.mode}));
      CHECK(r.exit_code == 1);
      CHECK(r.out.find("\\x1b[2J") != std::string::npos);  // shown, as text
      CHECK(r.out.find('\x1b') == std::string::npos);      // never sent (no colour: not a terminal)
      CHECK(r.out.find('\x07') == std::string::npos);
      CHECK(r.out.find('\r') == std::string::npos);
      CHECK(r.out.find("\xe2\x80\xae") == std::string::npos);
      CHECK(r.out.find("\\u202e") != std::string::npos);
    }
    SUBCASE((s.name() + ": code points XML forbids, in a lab file").c_str()) {
      Submission sub(s, {"bad_state.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Ran junit =
          run(as(s, {grader_for(s), "--run", "python3 bad_state.py", "--submission", sub.dir.path(), "--dir",
                     out.path(), "--sandbox", s.mode, "--format", "junit", "-o", out / "report.xml"}));
      CHECK(junit.exit_code == 1);
      const Ran parsed = run({"/usr/bin/python3", "-c", "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
                              out / "report.xml"});
      CHECK_MESSAGE(parsed.exit_code == 0, parsed.err);
    }
  }
}

TEST_CASE("sandbox: what a program sees of its surroundings") {
  // A canary on the machine's loopback: a program in the sandbox must not reach it.
  const Ran ns = run({"/bin/sh", "-c", "for n in mnt net pid uts ipc user; do readlink /proc/self/ns/$n; done"});
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Process canary({"/usr/bin/python3", "-c",
                      "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8); "
                      "print(s.getsockname()[1], flush=True); c, _ = s.accept(); print('REACHED', flush=True)"});
      const auto port = canary.read_line();
      REQUIRE(port);
      Submission sub(s, {"probe.py"});
      sub.dir.write("canary.txt", *port);
      const std::string marker = "cb-probe-" + std::to_string(::getpid()) + "-" + std::to_string(s.root) + s.mode;
      sub.dir.write("marker.txt", marker);
      hand_over(sub.dir.path(), s, false);
      const auto before = contents(sub.dir.path());
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 probe.py");
      // Nothing it wrote is outside its box: not in the machine's /tmp, /var/tmp, /dev/shm, not
      // beside its folder, not in its folder.
      const std::string beside = fs::path(sub.dir.path()).parent_path().string() + "/" + marker;
      for (const std::string& left : {"/tmp/" + marker, "/var/tmp/" + marker, "/dev/shm/" + marker, beside}) {
        CAPTURE(left);
        CHECK_FALSE(fs::exists(left));
        fs::remove(left);
      }
      CHECK(contents(sub.dir.path()) == before);
      check_containment(s, g);
      REQUIRE(g.attack.is_object());
      const json& p = g.attack;
      INFO(p.dump(1));
      const bool full = containment(g.report) == "namespaces";
      CHECK(p["uid"] != 0);
      CHECK(p["cap_eff"] == "0000000000000000");
      CHECK(p["no_new_privs"] == "1");
      CHECK(p["seccomp"] == "2");
      CHECK(p["tty"] != "opened");
      CHECK(p["shadow"] != "opened");
      CHECK(p["canary"] != "reached");
      CHECK(p["root_home"] != "listed");
      CHECK(p["tmp_write"] == (full ? "wrote" : "Permission denied"));  // its own /tmp, or none
      CHECK(p["limits"]["Max processes"] != "unlimited");
      CHECK(p["limits"]["Max file size"] == "67108864");
      CHECK(p["limits"]["Max open files"] == "256");
      CHECK(p["limits"]["Max cpu time"] == "30");
      // Memory is the box's control group's where the grader is root, else each process's data;
      // never address space.
      CHECK(p["limits"]["Max address space"] == "unlimited");
      CHECK(p["limits"]["Max data size"] == (s.root ? "unlimited" : "2147483648"));
      // The grader's environment (its secrets) is not the program's: only what the sandbox sets.
      // (PWD is the shell's own.)
      for (const auto& name : p["environment"]) {
        CAPTURE(name);
        CHECK(std::set<std::string>{"CB_DIR", "CB_SERVER", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "PATH", "PWD", "TERM",
                                    "TMPDIR", "TZ", "PYTHONUNBUFFERED"}
                  .count(name.get<std::string>()) == 1);
      }
      std::map<std::string, std::string> mine;
      std::size_t at = 0;
      for (const char* n : {"mnt", "net", "pid", "uts", "ipc", "user"}) {
        const auto nl = ns.out.find('\n', at);
        mine[n] = ns.out.substr(at, nl - at);
        at = nl + 1;
      }
      if (full) {
        CHECK(p["cb_server"] == "http://127.0.0.1:8110");
        CHECK(p["hostname"] == "cb-sandbox");
        for (const char* n : {"mnt", "net", "pid", "uts", "ipc"}) CHECK(p["namespaces"][n] != mine[n]);
        CHECK((p["namespaces"]["user"] != mine["user"]) == !s.root);
        CHECK(p["sees_grader"] == false);
        CHECK(p["processes_seen"].get<int>() <= 3);  // its shell and itself
        CHECK(p["work"] != "listed");
        if (s.root)
          CHECK(p["uid"].get<int>() >= 60000);
        else
          CHECK(p["uid"] == 1000);
      } else {
        if (s.root)
          CHECK(p["uid"].get<int>() >= 60000);
        else
          CHECK(p["uid"] == user_id());
      }
      canary.signal(SIGKILL);
    }
  }
}

TEST_CASE("sandbox: a program gets what --program-env sets, and none of the grader's own environment") {
  TempDir sub;
  TempDir out;
  const Ran r = run({kGrade, "--run", "echo \"token=[$CI_TOKEN] colour=[$COLOUR]\"", "--submission", sub.path(),
                     "--dir", out.path(), "--program-env", "COLOUR=blue", "--format", "json"},
                    "", {"CI_TOKEN=s3cret"});
  const json report = json::parse(r.out);
  CHECK(report["run_output"] == "token=[] colour=[blue]\n");
  const Ran bad =
      run({kGrade, "--run", "true", "--submission", sub.path(), "--dir", out.path(), "--program-env", "1X=y"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "cb-grade: --program-env: '1X=y' is not NAME=VALUE (a name of letters, digits and _)\n");
  const Ran ours =
      run({kGrade, "--run", "true", "--submission", sub.path(), "--dir", out.path(), "--program-env", "CB_DIR=/"});
  CHECK(ours.err == "cb-grade: --program-env: CB_DIR is the grader's to set\n");
}

TEST_CASE("sandbox: where the kernel refuses namespaces, auto falls back and says why, and strict refuses") {
  if (cb::testing::skip_unless(am_root(), "the namespace-refusing wrapper is tested as root")) return;
  Submission sub({true, "auto"}, {"probe.py"}, true);
  TempDir out;
  SUBCASE("auto") {
    const Ran r = run({kNoNamespaces, kGrade, "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir",
                       out.path(), "--format", "json"});
    const json report = json::parse(r.out);
    CHECK(report["score"] == 8);
    CHECK(report["program"]["sandbox"]["containment"] == "fallback");
    CHECK(report["program"]["sandbox"]["why"].get<std::string>().find("clone: Operation not permitted") !=
          std::string::npos);
    CHECK(report["program"]["sandbox"]["own_uid"] == true);
  }
  SUBCASE("strict") {
    const Ran r = run({kNoNamespaces, kGrade, "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir",
                       out.path(), "--sandbox", "strict"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(
              "cb-grade: --sandbox strict: the full sandbox cannot be had here: clone: Operation not permitted") == 0);
  }
  SUBCASE("none: graded, and marked as not to be trusted in every format") {
    const Ran text = run({kGrade, "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir", out.path(),
                          "--sandbox", "none"});
    CHECK(text.out.find("NOT TO BE TRUSTED: no sandbox: none") != std::string::npos);
    const Ran j = run({kGrade, "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir", out.path(),
                       "--sandbox", "none", "--format", "json"});
    CHECK(json::parse(j.out)["program"]["sandbox"]["trusted"] == false);
    const Ran x = run({kGrade, "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir", out.path(),
                       "--sandbox", "none", "--format", "junit"});
    CHECK(x.out.find("<property name=\"sandbox_trusted\" value=\"false\"/>") != std::string::npos);
  }
}

}  // namespace
}  // namespace cb::testing

// The box has a size and a life: a program cannot fill the machine's disk or its inodes through
// it, a folder chain of any depth is removed with it, and a grader stopped by a signal, or
// killed outright, leaves no box and no program behind (the next grader removes a dead one's).
// Each grader here has a $TMPDIR of its own, so what is left there is what it left.
#include <dirent.h>
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "grading.h"
#include "process.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

struct Scratch {
  TempDir dir;
  explicit Scratch(const Setup& s) { hand_over(dir.path(), s, true); }
  [[nodiscard]] std::vector<std::string> env() const { return {"TMPDIR=" + dir.path()}; }
  // The boxes (and their locks) still in it.
  [[nodiscard]] std::vector<std::string> boxes() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.path().filename().string().rfind("cb-grade-box.", 0) == 0) out.push_back(e.path().filename());
    return out;
  }
};

// The two sleeps linger.sh leaves: numbers of this test process's own, so that tests running
// side by side never take each other's for theirs.
std::string lingering(int which) { return std::to_string(100000 + ::getpid() * 2 + which); }

std::vector<std::string> grade_argv(const Setup& s, const Submission& sub, const TempDir& out,
                                    const std::string& command) {
  return as(s, {grader_for(s), "--run", command, "--submission", sub.dir.path(), "--dir", out.path(), "--sandbox",
                s.mode, "--format", "json", "--program-env", "LINGER=" + lingering(0)});
}

Graded graded(const Ran& ran) {
  Graded g{ran, json::parse(ran.out, nullptr, false), nullptr};
  if (g.report.is_discarded()) g.report = nullptr;
  if (g.report.is_object() && g.report.value("run_output", json()).is_string())
    g.attack = attack_line(g.report["run_output"]);
  return g;
}

// The pid of the process whose command line is exactly `argv`, if one runs.
std::optional<pid_t> running(const std::vector<std::string>& argv) {
  std::string want;
  for (const auto& a : argv) want += a + '\0';
  for (const auto& [pid, cmd] : process_command_lines())
    if (cmd == want) return pid;
  return std::nullopt;
}

// Until the graded program is running (a bound: the grader starts it in well under a second).
bool program_started() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{30};
  while (std::chrono::steady_clock::now() < until) {
    if (running({"sleep", lingering(0)}) && running({"sleep", lingering(1)})) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return false;
}

TEST_CASE("box size: a program cannot fill the disk or its inodes through its box") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": 2.4 GB of files").c_str()) {
      Scratch tmp(s);
      Submission sub(s, {"disk_fill.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Graded g = graded(run(grade_argv(s, sub, out, "python3 disk_fill.py"), "", tmp.env()));
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      CHECK(g.report["program"]["limit_hit"] == "box_size");
      CHECK(g.report["program"]["limit_text"] == "the box's size limit (256 MiB and 20000 files)");
      CHECK(g.report["program"]["sandbox"].value("box_bound", "") == (s.root ? "tmpfs" : "counted"));
      // It never got near 2.4 GB: refused at the tmpfs's size, or stopped soon after the count.
      if (g.attack.is_object()) CHECK(g.attack["written"].get<std::uint64_t>() <= (512ULL << 20));
      CHECK(g.report["run_output"].get<std::string>().find("written 2400 MiB") == std::string::npos);
      CHECK(tmp.boxes().empty());
    }
    SUBCASE((s.name() + ": 200,000 empty files").c_str()) {
      Scratch tmp(s);
      Submission sub(s, {"many_files.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Graded g = graded(run(grade_argv(s, sub, out, "python3 many_files.py"), "", tmp.env()));
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      CHECK(g.report["program"]["limit_hit"] == "box_size");
      if (g.attack.is_object()) CHECK(g.attack["made"].get<int>() < 200000);
      CHECK(tmp.boxes().empty());
    }
    // The finding: where the box is counted (no tmpfs of its size: an ordinary user, or root without
    // CAP_SYS_ADMIN), files opened then unlinked held 1.9 GiB against a box of 256 MiB.
    SUBCASE((s.name() + ": 1 GiB in files whose names are gone").c_str()) {
      Scratch tmp(s);
      Submission sub(s, {"unlinked_hold.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Graded g = graded(run(grade_argv(s, sub, out, "python3 unlinked_hold.py"), "", tmp.env()));
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      CHECK(g.report["program"]["limit_hit"] == "box_size");
      // Stopped within one count (100 ms) of writing past the limit: how far past depends on how
      // fast this machine writes (164 MiB on an idle one here), so only its 1 GiB is held to.
      CHECK(g.report["run_output"].get<std::string>().find("held 1020 MiB") == std::string::npos);
      CHECK(tmp.boxes().empty());
    }
    SUBCASE((s.name() + ": a chain of 1,000 folders").c_str()) {
      Scratch tmp(s);
      Submission sub(s, {"deep_chain.sh"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Graded g = graded(run(grade_argv(s, sub, out, "sh deep_chain.sh"), "", tmp.env()));
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      REQUIRE(g.attack.is_object());
      CHECK(g.attack["depth"] == 1000);
      CHECK(tmp.boxes().empty());  // removed, however deep
    }
  }
}

TEST_CASE("box life: a grader stopped by a signal ends its programs and removes its box first") {
  for (const Setup& s : setups()) {
    for (const int sig : {SIGINT, SIGTERM}) {
      SUBCASE((s.name() + ": " + ::strsignal(sig)).c_str()) {
        Scratch tmp(s);
        Submission sub(s, {"linger.sh"});
        TempDir out;
        hand_over(out.path(), s, true);
        Process grader(grade_argv(s, sub, out, "sh linger.sh"), tmp.env());
        REQUIRE(program_started());
        // While it lives, its box is nobody's but the grader's and the box's uid's.
        REQUIRE(tmp.boxes().size() == 2);
        struct stat st {};
        for (const auto& name : tmp.boxes())
          if (name.find(".lock") == std::string::npos) REQUIRE(::stat((tmp.dir / name).c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == (s.root ? 0710U : 0700U));
        grader.signal(sig);
        const auto code = grader.wait(std::chrono::seconds{30});
        CHECK(code.value_or(-1) == 128 + sig);
        CHECK(grader.read_all_stderr().find("cb-grade: interrupted") == 0);
        CHECK_FALSE(running({"sleep", lingering(0)}));  // its own session did not save it
        CHECK_FALSE(running({"sleep", lingering(1)}));
        CHECK(tmp.boxes().empty());
      }
    }
  }
}

TEST_CASE("box life: the box of a grader that was killed is removed by the next grader") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Scratch tmp(s);
      Submission sub(s, {"linger.sh"});
      TempDir out;
      hand_over(out.path(), s, true);
      {
        Process grader(grade_argv(s, sub, out, "sh linger.sh"), tmp.env());
        REQUIRE(program_started());
        grader.signal(SIGKILL);
        CHECK(grader.wait(std::chrono::seconds{30}).value_or(-1) == 128 + SIGKILL);
      }
      CHECK(tmp.boxes().size() == 2);  // left behind: nothing could run to remove it
      // Its programs: the full sandbox's die with their namespace; the fallback's with the next
      // lease of their uid, or not at all where they share the grader's.
      for (const int n : {0, 1})
        if (const auto pid = running({"sleep", lingering(n)})) ::kill(*pid, SIGKILL);
      Submission quiet(s, {});
      const Graded next = graded(run(grade_argv(s, quiet, out, "true"), "", tmp.env()));
      INFO(next.ran.out, next.ran.err);
      CHECK(tmp.boxes().empty());
    }
  }
}

// The processes whose command line holds `mark`.
std::vector<pid_t> marked(const std::string& mark) {
  std::vector<pid_t> out;
  for (const auto& [pid, cmd] : process_command_lines())
    if (cmd.find(mark) != std::string::npos && cmd.find("fork_tree.py") != std::string::npos) out.push_back(pid);
  return out;
}

// The finding: as an ordinary user in the fallback, a fork bomb of sessions left 110-129
// processes of the grader's uid running for the grader's whole life ("could not be stopped; not
// graded"). Every process it made is ended, in every mode, and the run is graded.
TEST_CASE("box life: a fork bomb of sessions is ended whole, and nothing of it outlives the grading") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      const std::string mark = "mark-" + std::to_string(::getpid()) + "-" + std::to_string(s.root) + s.mode;
      Submission sub(s, {"fork_tree.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      const Graded g =
          graded(run(grade_argv(s, sub, out, "python3 fork_tree.py " + mark), "", {}, std::chrono::seconds{120}));
      const std::vector<pid_t> left = marked(mark);
      for (const pid_t p : left) ::kill(p, SIGKILL);  // not to leave them to the machine if it failed
      INFO(g.ran.out, g.ran.err);
      CHECK(left.empty());
      REQUIRE(g.report.is_object());
      CHECK(g.ran.err.find("could not be stopped") == std::string::npos);
      CHECK(g.attack.is_object());
    }
  }
}

// A control group of another's, as a Slurm job's is: made for the test in the v1 memory and pids
// hierarchies, and removed with it.
struct JobGroup {
  std::vector<std::string> dirs;
  JobGroup() {
    for (const char* h : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"}) {
      const std::string dir = std::string(h) + "/cb-test-job-" + std::to_string(::getpid());
      if (::mkdir(dir.c_str(), 0755) == 0) dirs.push_back(dir);
    }
  }
  ~JobGroup() {
    for (const std::string& d : dirs) ::rmdir(d.c_str());
  }
  // `argv` run from inside the job's groups.
  [[nodiscard]] std::vector<std::string> inside(const std::vector<std::string>& argv) const {
    std::vector<std::string> out{
        "/bin/sh", "-c",
        "echo $$ > " + dirs[0] + "/cgroup.procs && echo $$ > " + dirs[1] + "/cgroup.procs && exec \"$@\"", "sh"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }
  // The folders still below the job's groups.
  [[nodiscard]] std::vector<std::string> left() const {
    std::vector<std::string> out;
    for (const std::string& d : dirs)
      for (const auto& e : fs::recursive_directory_iterator(d))
        if (e.is_directory()) out.push_back(e.path());
    return out;
  }
};

// The finding: under Slurm, every grading as root left its `cb-grade/` folder (and, after a
// cancel, `box-*`) inside the job's group, and slurmd logged an error for each job.
TEST_CASE("box life: a grading inside another's control group (a Slurm job's) leaves no folder in it") {
  if (skip_unless(am_root() && fs::exists("/sys/fs/cgroup/memory/cgroup.procs") &&
                      fs::exists("/sys/fs/cgroup/pids/cgroup.procs"),
                  "needs root and cgroup v1 memory and pids hierarchies"))
    return;
  const Setup s{true, "auto"};
  JobGroup job;
  REQUIRE(job.dirs.size() == 2);
  SUBCASE("a grading that finishes") {
    Submission quiet(s, {});
    TempDir out;
    hand_over(out.path(), s, true);
    const Ran r = run(job.inside(grade_argv(s, quiet, out, "true")));
    INFO(r.out, r.err);
    CHECK(containment(json::parse(r.out, nullptr, false)) == "namespaces");
    CHECK(job.left().empty());
  }
  SUBCASE("a grading cancelled (SIGTERM) while its program runs") {
    Submission sub(s, {"linger.sh"});
    TempDir out;
    hand_over(out.path(), s, true);
    Process grader(job.inside(grade_argv(s, sub, out, "sh linger.sh")));
    REQUIRE(program_started());
    CHECK_FALSE(job.left().empty());  // its box's group is in the job's while it runs
    grader.signal(SIGTERM);
    CHECK(grader.wait(std::chrono::seconds{30}).value_or(-1) == 128 + SIGTERM);
    CHECK(job.left().empty());
  }
}

}  // namespace
}  // namespace cb::testing

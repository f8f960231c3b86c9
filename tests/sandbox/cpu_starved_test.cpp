// Time judged by the CPU given: a program that runs out of its time because the machine gave its
// box no CPU has shown nothing of itself, and is graded again, never charged. One that runs out
// of time while idle (asleep, hung, waiting) is charged as before. The machine is starved for
// real: the boxes' cpu folder gets a quota of 2% of one CPU (a cgroup v1 hierarchy, as root,
// where the kernel keeps each box's wait in a cgroup2 hierarchy beside it).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "grading.h"
#include "skip.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

const std::string kCpu = "/sys/fs/cgroup/cpu";

// A cpu group of the test's own with the cb-grade folder its grader puts the boxes in, held to
// 2 ms of CPU each 100 ms; the grader runs in it (its boxes go under it), and it goes at the end.
// A group of the test's in that folder keeps the grader from removing it with its last box (and
// making it again, without the quota, for the next try).
struct StarvedParent {
  std::string dir = kCpu + "/cb-starved-test-" + std::to_string(::getpid());
  StarvedParent() {
    fs::create_directories(dir + "/cb-grade/kept");
    std::ofstream(dir + "/cb-grade/cpu.cfs_quota_us") << "2000";
  }
  ~StarvedParent() {
    (void)::rmdir((dir + "/cb-grade/kept").c_str());
    (void)::rmdir((dir + "/cb-grade").c_str());
    (void)::rmdir(dir.c_str());
  }
  // argv run from inside the group.
  [[nodiscard]] std::vector<std::string> inside(const std::vector<std::string>& argv) const {
    std::vector<std::string> out{"/bin/sh", "-c", "echo $$ > " + dir + "/cgroup.procs && exec \"$@\"", "sh"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }
};

bool can_starve() {
  return am_root() && fs::exists(kCpu + "/cpu.cfs_quota_us") && fs::exists("/sys/fs/cgroup/unified/cgroup.procs") &&
         fs::exists("/proc/pressure/cpu");
}

TEST_CASE("sandbox: a time limit reached for want of CPU is the machine's, one reached idle is the program's") {
  if (cb::testing::skip_unless(can_starve(),
                               "needs root, cgroup v1's cpu hierarchy and a cgroup2 one beside it, and PSI"))
    return;
  for (const std::string mode : {"auto", "fallback"}) {
    const Setup s{true, mode};
    SUBCASE(s.name().c_str()) {
      TempDir sub;
      std::ofstream(sub / "spin.sh") << "while :; do :; done\n";
      std::ofstream(sub / "idle.sh") << "sleep 60\n";
      hand_over(sub.path(), s, false);
      const StarvedParent starved;
      const auto grade_it = [&](const std::vector<std::string>& what) {
        std::vector<std::string> argv{kGrade, "--submission", sub.path(), "--sandbox", mode, "--format", "json"};
        argv.insert(argv.end(), what.begin(), what.end());
        return run(starved.inside(argv), "", {}, std::chrono::seconds{120});
      };
      TempDir out;
      {
        const auto ran = grade_it({"--run", "sh spin.sh", "--dir", out.path(), "--timeout", "2s"});
        INFO(ran.out, ran.err);
        CHECK(ran.exit_code == 2);
        CHECK(ran.err.find("the lab run reached its time limit while the machine kept its box from the CPU") !=
              std::string::npos);
      }
      {
        const auto ran = grade_it({"--conformance", "sh spin.sh", "--trace-timeout", "2s", "--warm-up", "0s"});
        INFO(ran.out, ran.err);
        CHECK(ran.exit_code == 2);
        CHECK(ran.err.find("while the machine kept the box from the CPU") != std::string::npos);
      }
      {
        const auto ran = grade_it({"--run", "sh idle.sh", "--dir", out.path(), "--timeout", "2s"});
        INFO(ran.out, ran.err);
        CHECK(ran.exit_code == 1);
        const json report = json::parse(ran.out, nullptr, false);
        REQUIRE(report.is_object());
        CHECK(report["program"]["timed_out"] == true);
      }
    }
  }
}

}  // namespace
}  // namespace cb::testing

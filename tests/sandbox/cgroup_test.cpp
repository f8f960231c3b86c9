// The box's control group: where the hierarchies are, read from other machines' files, and on
// this machine (as root) a group made, joined, counted, emptied and removed, and one left by a
// grader that died replaced.
#include "cb/sandbox/cgroup.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "cb/sandbox/limits.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::sandbox {
namespace {

using cb::testing::slurp;

// This machine's kind: v1 memory and pids beside an empty v2 (a hybrid).
constexpr const char* kHybridMounts =
    "25 1 0:23 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid shared:5 - cgroup2 cgroup2 rw\n"
    "30 25 0:28 / /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory\n"
    "31 25 0:29 / /sys/fs/cgroup/pids rw,nosuid shared:10 - cgroup cgroup rw,pids\n"
    "32 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - cgroup cgroup rw,cpu,cpuacct\n";
constexpr const char* kHybridSelf =
    "9:cpu,cpuacct:/\n8:pids:/user.slice\n4:memory:/job/42\n0::/user.slice/session-1.scope\n";

constexpr const char* kV2Mounts =
    "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
constexpr const char* kV2Self = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/grade.service\n";

TEST_CASE("cgroup layout: v1 memory and pids under the grader's own groups, as root only") {
  const CgroupLayout root = cgroup_layout(kHybridMounts, kHybridSelf, true);
  CHECK(root.version == 1);
  CHECK(root.memory_dir == "/sys/fs/cgroup/memory/job/42");
  CHECK(root.pids_dir == "/sys/fs/cgroup/pids/user.slice");
  CHECK(root.cpu_dir == "/sys/fs/cgroup/cpu,cpuacct");  // mounted with cpuacct, as systemd does
  // The box's wait for the CPU is read where the kernel keeps it, the empty v2 beside.
  CHECK(root.pressure_dir == "/sys/fs/cgroup/unified/user.slice/session-1.scope");
  const CgroupLayout user = cgroup_layout(kHybridMounts, kHybridSelf, false);
  CHECK(user.version == 0);
  CHECK(user.why_none == "cgroup v1 is divided only by root");
}

TEST_CASE("cgroup layout: v2 at the top as root, the grader's own group when delegated") {
  const CgroupLayout root = cgroup_layout(kV2Mounts, kV2Self, true);
  CHECK(root.version == 2);
  CHECK(root.memory_dir == "/sys/fs/cgroup");
  CHECK(root.cpu_dir == root.memory_dir);
  CHECK_FALSE(root.delegated);
  const CgroupLayout user = cgroup_layout(kV2Mounts, kV2Self, false);
  CHECK(user.version == 2);
  CHECK(user.delegated);
  CHECK(user.memory_dir == "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/grade.service");
}

// Starved: ready to run a quarter of the time or more, and given under a quarter of one CPU. Anything else
// that ran out of time did so on its own (idle, or spinning on the CPU it was given).
TEST_CASE("cpu time: a box is starved when it waited for the CPU and got little of it") {
  using std::chrono::microseconds;
  const CpuTime from{microseconds{1'000'000}, microseconds{500'000}};
  const microseconds wall{4'000'000};
  const auto after = [&](long used, long waited) {
    return CpuTime{from.used + microseconds{used}, from.waited + microseconds{waited}};
  };
  CHECK(starved(from, after(100'000, 3'800'000), wall));          // a throttled or crowded-out box
  CHECK(starved(from, after(999'999, 2'000'000), wall));          // just under a quarter, just half waited
  CHECK_FALSE(starved(from, after(1'000'000, 3'000'000), wall));  // a quarter of a CPU is its own time
  CHECK_FALSE(starved(from, after(100'000, 999'999), wall));      // idle most of the time: asleep, hung
  CHECK_FALSE(starved(from, after(4'000'000, 4'000'000), wall));  // its own busy loops, each waiting on the rest
  CHECK(describe_starved(from, after(100'000, 3'800'000), wall) ==
        "given 0.1 s of CPU in 4.0 s, and waited 3.8 s for one");
}

TEST_CASE("cgroup layout: a cgroup namespace's mount of a subtree, and no hierarchy at all") {
  // Inside a container the mount's root is the container's group; its paths are below it.
  const CgroupLayout ns = cgroup_layout("40 30 0:28 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
                                        "5:memory:/docker/abc/inner\n", true);
  CHECK(ns.memory_dir == "/sys/fs/cgroup/memory/inner");
  const CgroupLayout none = cgroup_layout("22 1 8:1 / / rw - ext4 /dev/vda rw\n", "", true);
  CHECK(none.version == 0);
  CHECK(none.why_none == "no cgroup hierarchy is mounted");
}

// A child that joins the group and then waits to be killed; returned once the kernel lists it
// in the group (a pipe says it has written).
pid_t joined(const BoxCgroup& g) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int fd : g.join_fds())
      if (::write(fd, "0", 1) != 1) ::_exit(1);
    (void)::write(ready[1], "j", 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  CHECK(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  return pid;
}

TEST_CASE("box cgroup: made with its limits, joined, emptied and removed (root)") {
  if (cb::testing::skip_unless(::geteuid() == 0, "not root") ||
      cb::testing::skip_unless(machine_cgroups().version > 0, machine_cgroups().why_none))
    return;
  const std::string name = "box-test-" + std::to_string(::getpid());
  std::string dir;
  std::string cpu_dir;
  {
    auto g = BoxCgroup::make(name, 64ULL << 20, 16);
    REQUIRE_MESSAGE(g.ok(), g.error().message);
    dir = (*g)->dirs().front();
    CHECK(dir.substr(dir.size() - name.size()) == name);
    const std::string limit = machine_cgroups().version == 2 ? "/memory.max" : "/memory.limit_in_bytes";
    CHECK(slurp(dir + limit) == std::to_string(64ULL << 20) + "\n");
    CHECK(slurp((*g)->dirs().back() + "/pids.max") == "16\n");
    const pid_t pid = joined(**g);
    CHECK(slurp(dir + "/cgroup.procs") == std::to_string(pid) + "\n");
    int status = 0;
    CHECK((*g)->kill_all());
    CHECK(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK((*g)->counts().oom_kills == 0);
    // Where the kernel has a cpu controller, the box is one scheduling entity of its own.
    cpu_dir = (*g)->cpu_dir();
    if (!machine_cgroups().cpu_dir.empty() && machine_cgroups().version == 1) {
      CHECK(cpu_dir.substr(cpu_dir.size() - name.size()) == name);
      CHECK(slurp(cpu_dir + "/cpu.shares") == "1024\n");
    }
  }
  struct stat st {};
  CHECK(::stat(dir.c_str(), &st) != 0);  // removed with the box
  if (!cpu_dir.empty()) CHECK(::stat(cpu_dir.c_str(), &st) != 0);
}

TEST_CASE("box cgroup: one left by a dead grader, a process still in it, is emptied and replaced (root)") {
  if (cb::testing::skip_unless(::geteuid() == 0, "not root") ||
      cb::testing::skip_unless(machine_cgroups().version > 0, machine_cgroups().why_none))
    return;
  const std::string name = "box-test-left-" + std::to_string(::getpid());
  // A process of ours, put into the group by a grader that then dies without tearing it down.
  const pid_t left = ::fork();
  if (left == 0)
    for (;;) ::pause();
  const pid_t grader = ::fork();
  if (grader == 0) {
    auto g = BoxCgroup::make(name, kUnlimited, 16);
    if (!g) ::_exit(1);
    const std::string pid = std::to_string(left);
    for (int fd : (*g)->join_fds())
      if (::write(fd, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) ::_exit(2);
    ::_exit(0);  // dead: nothing of it runs to remove the group
  }
  int status = 0;
  REQUIRE(::waitpid(grader, &status, 0) == grader);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto second = BoxCgroup::make(name, kUnlimited, 16);
  REQUIRE_MESSAGE(second.ok(), second.error().message);
  CHECK(::waitpid(left, &status, 0) == left);  // killed when its group was taken again
  CHECK(WIFSIGNALED(status));
}

}  // namespace
}  // namespace cb::sandbox

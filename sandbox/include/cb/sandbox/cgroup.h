#pragma once
// A control group per box: the kernel's own accounting of the box's memory (anonymous pages,
// shared memory, memfd files and the page cache of what it writes, tmpfs included) and of its
// processes, one limit for all the programs of the box together. Address-space limits count
// reservations a runtime never touches (a JVM's class space, Node's WebAssembly cages) and miss
// memory that is not a mapping of one process (memfd, shm, four processes of 1.5 GiB each); a
// cgroup counts what is really taken, by everyone in the box.
//
// Where one can be had: cgroup v2 as root (a `cb-grade` group at the top of the hierarchy) or
// delegated to the grader's user (the grader moves itself into a leaf of its own group, as
// systemd's delegation asks); cgroup v1's memory and pids hierarchies as root, under the
// grader's own group. Elsewhere (a container, an ordinary user on v1) `why_none()` says why and
// the sandbox bounds memory per process with RLIMIT_DATA instead.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"

namespace cb::sandbox {

// Where the box groups go: found from /proc/self/mountinfo and /proc/self/cgroup.
struct CgroupLayout {
  int version = 0;         // 1 or 2; 0: none usable
  std::string memory_dir;  // the grader's own group in the memory hierarchy (v2: the only one)
  std::string pids_dir;    // v1: in the pids hierarchy; v2: the same as memory_dir
  std::string cpu_dir;     // v1: in the cpu hierarchy (empty: not mounted); v2: the same as memory_dir
  bool delegated = false;  // v2, not root: the grader's own group is its user's to divide
  // v1 beside a cgroup2 mount with no controllers (a hybrid machine): the grader's own group
  // there, where a box's group has no limits but the kernel still counts its CPU and its wait.
  std::string pressure_dir;
  std::string why_none;  // version 0: why
};

// /proc/self/cgroup's text as a map: each controller (v1; "" for v2's one hierarchy) to the
// process's group path in it. A line naming several controllers ("cpu,cpuacct") gives each, and
// the whole list too, as a v1 hierarchy is mounted under that name.
[[nodiscard]] std::map<std::string, std::string, std::less<>> own_cgroups(std::string_view self_cgroup);

// Whether a comma-separated list (mount options, "cpu,cpuacct") holds `name` as one of its items.
[[nodiscard]] bool in_comma_list(std::string_view list, std::string_view name);

// The layout from the two files' text (pure: tests give it other machines' files). `root`: the
// grader runs as root.
[[nodiscard]] CgroupLayout cgroup_layout(std::string_view mountinfo, std::string_view self_cgroup, bool root);

// The CPU a box's programs got, and the time they spent ready to run but given none, since its
// group was made (cgroup v2's cpu.stat usage_usec and cpu.pressure "some" total).
struct CpuTime {
  std::chrono::microseconds used{0};
  std::chrono::microseconds waited{0};
};

// What the kernel counted for a box so far.
struct CgroupCounts {
  std::uint64_t oom_kills = 0;     // processes the kernel killed for the memory limit
  std::uint64_t pids_refused = 0;  // forks refused at the process limit
  std::uint64_t memory_peak = 0;   // bytes, the most it held at once (0 where the kernel keeps none)
  // Times the box's own memory limit was reached (v2: memory.events "oom"; v1: memory.failcnt,
  // which recent kernels leave at 0: memory_peak near the limit says it there).
  // A kill for memory with this unchanged came from a limit above the box.
  std::uint64_t own_limit_reached = 0;
  // v1: the most its TCP buffers held at once (bytes; counted apart from memory_peak, under the
  // same limit). The kernel charges past the limit rather than count a failure: a peak at the
  // limit is how it shows that the box's sockets were held back.
  std::uint64_t socket_peak = 0;
  std::optional<CpuTime> cpu;  // BoxCgroup::cpu_time()
};

// Whether the box was starved over a stretch of `wall` (the difference of two readings): ready
// to run, and given nothing, for at least a quarter of it, and given less than a quarter of one
// CPU in all. (A quarter, not half: the stretch includes the box's start, and a spinning program
// held to 2% of a CPU on a busy machine was seen waiting for 1.0 s of 2.) A program that
// sleeps, hangs or waits for input is not ready to run; one that spins gets its share (its own
// group weighs as much as any other box, whatever it runs inside). So a time limit reached so is
// the machine's doing, never the program's.
[[nodiscard]] bool starved(const CpuTime& from, const CpuTime& to, std::chrono::microseconds wall);

// "given 0.3 s of CPU in 20 s, and waited 19.1 s for one": for the line that says why.
[[nodiscard]] std::string describe_starved(const CpuTime& from, const CpuTime& to, std::chrono::microseconds wall);

class BoxCgroup;

// How the machine starved `group`'s box between `since` (when `from` was read) and now, said as
// describe_starved does; empty when it was not, or where nothing was read. The one reading every
// time limit of the grader's (a lab run, a trace, a build) is judged by.
[[nodiscard]] std::string starved_since(const BoxCgroup* group, const std::optional<CpuTime>& from,
                                        std::chrono::steady_clock::time_point since);

class BoxCgroup {
 public:
  // A group named `name` for one box, with its limits (kUnlimited memory: none). A group of that
  // name left by a grader that died is emptied and replaced. Errors say why none can be had.
  [[nodiscard]] static Result<std::unique_ptr<BoxCgroup>> make(const std::string& name, std::uint64_t memory_bytes,
                                                               std::uint64_t processes);
  // Ends everything still in it and removes it.
  ~BoxCgroup();
  BoxCgroup(const BoxCgroup&) = delete;
  BoxCgroup& operator=(const BoxCgroup&) = delete;

  [[nodiscard]] int version() const noexcept { return version_; }
  // Its directories: memory's (v1), then pids'; v2 has one.
  [[nodiscard]] const std::vector<std::string>& dirs() const noexcept { return dirs_; }
  // Its group in the cpu hierarchy (v1; v2: dirs()'s, with its cpu controller), one scheduling
  // entity however many processes and sessions it makes, weighted as every other box; empty
  // where the kernel gives no cpu controller to divide.
  [[nodiscard]] const std::string& cpu_dir() const noexcept { return cpu_dir_; }
  // cgroup.procs of each of its hierarchies, open for writing (close-on-exec): a process that
  // writes "0" to each joins the box (the sandbox's child does, before anything else).
  [[nodiscard]] const std::vector<int>& join_fds() const noexcept { return join_fds_; }
  [[nodiscard]] CgroupCounts counts() const;
  // What its programs got of the CPU so far; nothing where the kernel keeps no pressure for it
  // (no cgroup2 hierarchy, or a kernel without PSI).
  [[nodiscard]] std::optional<CpuTime> cpu_time() const;
  // SIGKILL to every process in it, until none is left (at most two seconds). False if some were.
  bool kill_all() const;

 private:
  BoxCgroup() = default;
  void take_cpu(const CgroupLayout& layout, const std::string& name);
  void take_pressure(const CgroupLayout& layout, const std::string& name);
  int version_ = 0;
  std::vector<std::string> dirs_;     // v1: memory's, then pids'; v2: one
  std::vector<std::string> parents_;  // the grader's `cb-grade` folders above them, removed when empty
  std::string cpu_dir_;
  std::string cpu_parent_;       // v1: the `cb-grade` folder in the cpu hierarchy, removed when empty
  std::string pressure_dir_;     // where cpu.stat and cpu.pressure are read (v2: dirs()'s)
  std::string pressure_parent_;  // hybrid v1: the `cb-grade` folder in the cgroup2 hierarchy
  std::vector<int> join_fds_;
};

// The layout of this machine, read once.
[[nodiscard]] const CgroupLayout& machine_cgroups();

}  // namespace cb::sandbox

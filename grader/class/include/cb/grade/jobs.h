#pragma once
// How many submissions are graded at once when -j is not given. Grading mostly waits (a lab
// run's cool-down, a server's answer, a program starting), so a class takes several submissions
// per CPU; the CPUs are those this process may use (its affinity, its control group's quota, a
// Slurm allocation), not the machine's, and memory bounds the count too. Work that only computes
// (regrade, merge, verify) takes one per CPU. Read once, at the command's start.

#include <cstdint>
#include <optional>
#include <string>

#include "cb/grade/shard.h"

namespace cb::grade {

// What this process may use.
struct Allowance {
  double cpus = 1;                      // the least of affinity, control group quota and Slurm's
  std::string cpus_from = "affinity";   // which of those set it
  std::optional<std::uint64_t> memory;  // bytes: the least of MemAvailable, the group's room, Slurm's --mem
  std::string memory_from;
};

inline constexpr int kJobsPerCpu = 4;                         // bench/class: -j 8 on 2 CPUs is 4 min for 300
inline constexpr std::uint64_t kMemoryPerJob = 512ULL << 20;  // a box's program and its server, with room
inline constexpr int kMostJobs = 64;

struct Jobs {
  int count = 1;
  std::string why;  // "4 per CPU of the 2 this process may use (affinity)"
};

// For grading (batch, queue work, conformance traces): kJobsPerCpu per CPU, at most one per
// kMemoryPerJob of memory, 1 to kMostJobs.
[[nodiscard]] Jobs grading_jobs(const Allowance& a);
// For work that only computes: one per CPU.
[[nodiscard]] int computing_jobs(const Allowance& a);

// Paths read, so a test can lay out a machine of its own.
struct AllowanceSources {
  std::string self_cgroup = "/proc/self/cgroup";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string meminfo = "/proc/meminfo";
};
// Reads sched_getaffinity, the control groups (v2 cpu.max and memory.max; v1 cpu.cfs_quota_us and
// memory.limit_in_bytes; each ancestor's too), /proc/meminfo's MemAvailable and Slurm's
// SLURM_CPUS_PER_TASK (else SLURM_CPUS_ON_NODE), SLURM_MEM_PER_NODE and SLURM_MEM_PER_CPU.
[[nodiscard]] Allowance read_allowance(const EnvReader& env, const AllowanceSources& from = {});

// This process's, read once (getenv and the machine's files).
[[nodiscard]] const Allowance& this_process();

}  // namespace cb::grade

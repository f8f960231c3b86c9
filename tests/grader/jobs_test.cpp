// How many submissions a class grades at once with no -j: from the CPUs and memory this process
// may use (a machine laid out in a temporary folder: its control groups, /proc/meminfo, Slurm's
// variables), never the machine's core count.
#include <doctest/doctest.h>
#include <sched.h>

#include <algorithm>

#include <filesystem>
#include <map>
#include <string>

#include "cb/grade/jobs.h"
#include "env_of.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

using cb::testing::env_of;

Allowance given(double cpus, std::optional<std::uint64_t> memory) {
  Allowance a;
  a.cpus = cpus;
  a.memory = memory;
  a.memory_from = "available memory";
  return a;
}

constexpr std::uint64_t kGiB = 1ULL << 30;

// A machine: /proc/self/cgroup, the files under the cgroup mount, and meminfo.
struct Machine {
  testing::TempDir dir;
  AllowanceSources sources() const { return {dir / "self_cgroup", dir / "cgroup", dir / "meminfo"}; }
  void put(const std::string& path, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(dir / path).parent_path());
    dir.write(path, text);
  }
};

TEST_CASE("jobs: grading takes 4 a CPU it may use, fewer when memory is short, one at least") {
  CHECK(grading_jobs(given(2, 24 * kGiB)).count == 8);
  CHECK(grading_jobs(given(2, 24 * kGiB)).why == "4 per CPU of the 2 this process may use (affinity)");
  CHECK(grading_jobs(given(1, std::nullopt)).count == 4);
  CHECK(grading_jobs(given(0.5, std::nullopt)).count == 2);
  CHECK(grading_jobs(given(100, std::nullopt)).count == kMostJobs);
  const Jobs short_of_memory = grading_jobs(given(2, kGiB));
  CHECK(short_of_memory.count == 2);
  CHECK(short_of_memory.why == "one per 512 MiB of the 1024 MiB this process may use (available memory)");
  CHECK(grading_jobs(given(2, 100ULL << 20)).count == 1);
  CHECK(computing_jobs(given(2, std::nullopt)) == 2);
  CHECK(computing_jobs(given(0.5, std::nullopt)) == 1);
}

TEST_CASE("jobs: a cgroup v2 quota, on the group or an ancestor, and its memory.max bound what is read") {
  Machine m;
  m.put("self_cgroup", "0::/grading/task\n");
  m.put("cgroup/grading/task/cpu.max", "max 100000\n");
  m.put("cgroup/grading/cpu.max", "50000 100000\n");
  m.put("cgroup/grading/task/memory.max", "1073741824\n");
  m.put("cgroup/grading/memory.max", "max\n");
  m.put("meminfo", "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n");
  const Allowance a = read_allowance(env_of({}), m.sources());
  CHECK(a.cpus == doctest::Approx(0.5));
  CHECK(a.cpus_from == "control group");
  REQUIRE(a.memory);
  CHECK(*a.memory == kGiB);
  CHECK(a.memory_from == "control group");
  CHECK(grading_jobs(a).count == 2);
}

TEST_CASE("jobs: a cgroup v1 CFS quota and memory limit, and an unlimited one leaves MemAvailable") {
  Machine m;
  m.put("self_cgroup", "7:memory:/job\n4:cpu,cpuacct:/job\n1:name=systemd:/job\n");
  m.put("cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "100000\n");
  m.put("cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  m.put("cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  m.put("cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  m.put("cgroup/memory/job/memory.limit_in_bytes", "9223372036854771712\n");
  m.put("meminfo", "MemAvailable:    2097152 kB\n");
  const Allowance a = read_allowance(env_of({}), m.sources());
  CHECK(a.cpus == doctest::Approx(1));
  CHECK(a.cpus_from == "control group");
  REQUIRE(a.memory);
  CHECK(*a.memory == 2 * kGiB);
  CHECK(a.memory_from == "available memory");
  CHECK(grading_jobs(a).count == 4);
}

TEST_CASE("jobs: a container's group path, not under its mount, is read at the mount itself") {
  Machine m;
  m.put("self_cgroup", "0::/system.slice/docker-1234.scope\n");
  m.put("cgroup/cpu.max", "150000 100000\n");
  const Allowance a = read_allowance(env_of({}), m.sources());
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
  CHECK(a.cpus == doctest::Approx(std::min(1.5, static_cast<double>(CPU_COUNT(&set)))));
}

TEST_CASE("jobs: a Slurm task's CPUs and --mem, as `sbatch -c1 --mem=100M` sets them") {
  Machine m;
  m.put("self_cgroup", "");
  const Allowance a = read_allowance(
      env_of({{"SLURM_CPUS_PER_TASK", "1"}, {"SLURM_CPUS_ON_NODE", "2"}, {"SLURM_MEM_PER_NODE", "100"}}), m.sources());
  CHECK(a.cpus == doctest::Approx(1));
  CHECK(a.cpus_from == "Slurm allocation");
  REQUIRE(a.memory);
  CHECK(*a.memory == 100ULL << 20);
  CHECK(a.memory_from == "Slurm --mem");
  CHECK(grading_jobs(a).count == 1);
  // Without -c a task is given the node's allocated CPUs; --mem-per-cpu is for each of them.
  const Allowance b = read_allowance(env_of({{"SLURM_CPUS_ON_NODE", "1"}, {"SLURM_MEM_PER_CPU", "4096"}}), m.sources());
  CHECK(b.cpus == doctest::Approx(1));
  REQUIRE(b.memory);
  CHECK(*b.memory == 4 * kGiB);
  CHECK(grading_jobs(b).count == 4);
}

}  // namespace
}  // namespace cb::grade

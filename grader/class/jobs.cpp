#include "cb/grade/jobs.h"

#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <vector>

#include "cb/sandbox/cgroup.h"

namespace cb::grade {

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<double> decimal_in(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == 0 || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The folders of a group and of each ancestor, under the hierarchy mounted at `mount`. In a
// container the path of /proc/self/cgroup may be the host's, not found under the mount, which is
// then the group itself.
std::vector<std::string> group_and_ancestors(const std::string& mount, std::string path) {
  std::vector<std::string> out;
  if (!is_dir(mount + path)) return {mount};
  for (;;) {
    out.push_back(mount + path);
    if (path.empty() || path == "/") return out;
    path.erase(path.rfind('/'));
  }
}

struct Least {
  std::optional<double> value;
  std::string from;
  void offer(std::optional<double> v, const std::string& source) {
    if (v && (!value || *v < *value)) {
      value = v;
      from = source;
    }
  }
};

void offer_cpu_max(const std::string& group, Least& cpus) {
  const auto max = first_line(group + "/cpu.max");
  if (!max) return;
  std::istringstream words(*max);
  std::string quota;
  std::string period;
  words >> quota >> period;
  const auto q = decimal_in(quota);
  const auto p = decimal_in(period);
  if (q && p && *p > 0) cpus.offer(*q / *p, "control group");
}

void read_groups(const AllowanceSources& s, Least& cpus, Least& memory) {
  std::ifstream in(s.self_cgroup);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [controllers, path] : sandbox::own_cgroups(text)) {
    if (controllers.empty()) {  // v2: one hierarchy, every controller
      for (const std::string& g : group_and_ancestors(s.cgroup_root, path)) {
        offer_cpu_max(g, cpus);
        if (const auto max = first_line(g + "/memory.max")) memory.offer(decimal_in(*max), "control group");
      }
      continue;
    }
    // v1: a hierarchy is mounted under its controllers' list ("cpu,cpuacct") or one of them.
    if (sandbox::in_comma_list(controllers, "cpu"))
      for (const std::string& g : group_and_ancestors(s.cgroup_root + "/" + controllers, path)) {
        const auto q = first_line(g + "/cpu.cfs_quota_us");  // -1: none, which decimal_in() refuses
        const auto p = first_line(g + "/cpu.cfs_period_us");
        if (q && p)
          if (const auto quota = decimal_in(*q), period = decimal_in(*p); quota && period && *period > 0)
            cpus.offer(*quota / *period, "control group");
      }
    if (controllers == "memory")
      for (const std::string& g : group_and_ancestors(s.cgroup_root + "/memory", path))
        if (const auto limit = first_line(g + "/memory.limit_in_bytes"))
          memory.offer(decimal_in(*limit), "control group");  // no limit reads as about 2^63: MemAvailable is less
  }
}

std::optional<double> mem_available(const std::string& meminfo) {
  std::ifstream in(meminfo);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("MemAvailable:", 0) == 0)
      if (const auto kib = decimal_in(line.substr(line.find_first_not_of(' ', 13)))) return *kib * 1024;
  return std::nullopt;
}

std::optional<double> env_decimal(const EnvReader& env, const char* name) {
  const char* v = env(name);
  return v == nullptr ? std::nullopt : decimal_in(v);
}

std::string count_text(double cpus) {
  std::ostringstream out;
  out << cpus;
  return out.str();
}

}  // namespace

Allowance read_allowance(const EnvReader& env, const AllowanceSources& from) {
  Least cpus;
  Least memory;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) cpus.offer(CPU_COUNT(&set), "affinity");
  read_groups(from, cpus, memory);
  auto slurm_cpus = env_decimal(env, "SLURM_CPUS_PER_TASK");
  if (!slurm_cpus) slurm_cpus = env_decimal(env, "SLURM_CPUS_ON_NODE");
  cpus.offer(slurm_cpus, "Slurm allocation");
  memory.offer(mem_available(from.meminfo), "available memory");
  if (const auto per_node = env_decimal(env, "SLURM_MEM_PER_NODE"))
    memory.offer(*per_node * 1024 * 1024, "Slurm --mem");
  if (const auto per_cpu = env_decimal(env, "SLURM_MEM_PER_CPU"))
    memory.offer(*per_cpu * 1024 * 1024 * std::max(1.0, cpus.value.value_or(1)), "Slurm --mem-per-cpu");
  Allowance a;
  a.cpus = std::max(cpus.value.value_or(1), 0.01);
  a.cpus_from = cpus.value ? cpus.from : "affinity";
  if (memory.value) a.memory = static_cast<std::uint64_t>(*memory.value);
  a.memory_from = memory.from;
  return a;
}

const Allowance& this_process() {
  static const Allowance once = read_allowance([](const char* name) { return std::getenv(name); });
  return once;
}

Jobs grading_jobs(const Allowance& a) {
  Jobs j;
  const int by_cpu = std::max(1, static_cast<int>(std::lround(kJobsPerCpu * a.cpus)));
  j.count = std::min(by_cpu, kMostJobs);
  j.why = std::to_string(kJobsPerCpu) + " per CPU of the " + count_text(a.cpus) + " this process may use (" +
          a.cpus_from + ")";
  if (by_cpu > kMostJobs) j.why += ", at most " + std::to_string(kMostJobs);
  if (a.memory) {
    const auto by_memory = static_cast<int>(std::max<std::uint64_t>(1, *a.memory / kMemoryPerJob));
    if (by_memory < j.count) {
      j.count = by_memory;
      j.why = "one per " + std::to_string(kMemoryPerJob >> 20) + " MiB of the " + std::to_string(*a.memory >> 20) +
              " MiB this process may use (" + a.memory_from + ")";
    }
  }
  return j;
}

int computing_jobs(const Allowance& a) { return std::clamp(static_cast<int>(std::lround(a.cpus)), 1, kMostJobs); }

}  // namespace cb::grade

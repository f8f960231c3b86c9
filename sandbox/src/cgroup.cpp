#include "cb/sandbox/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "cb/sandbox/limits.h"

namespace cb::sandbox {
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

struct Mount {
  std::string root, point;
};

// `own` (a path in the hierarchy) as a directory under the mount, whose root may be a subtree
// (a cgroup namespace shows one).
std::string under(const Mount& m, const std::string& own) {
  std::string rel = own;
  if (m.root != "/" && rel.rfind(m.root, 0) == 0) rel = rel.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.point + rel;
}

std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

[[nodiscard]] Result<void> write_text(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return Error{"writing '" + text + "' to " + path + ": " + std::strerror(saved)};
  return {};
}

// "key N" from a flat-keyed file (memory.events, pids.events, memory.oom_control).
std::uint64_t key_value(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

std::uint64_t number_in(const std::string& path) {
  const std::string text = read_small(path);
  return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

std::vector<pid_t> procs_of(const std::string& dir) {
  std::vector<pid_t> out;
  std::istringstream in(read_small(dir + "/cgroup.procs"));
  for (long pid = 0; in >> pid;)
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
  return out;
}

// Empties `dir` (SIGKILL to all in it) and removes it; a group a dead grader left is removed
// this way before its name is used again.
bool remove_group(const std::string& dir, int version) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{2};
  bool killed = false;
  for (;;) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY || std::chrono::steady_clock::now() >= until) return false;
    // cgroup.kill (v2, Linux 5.14) ends every process at once, forks in flight too.
    if (version == 2 && !killed) killed = write_text(dir + "/cgroup.kill", "1").ok();
    for (pid_t pid : procs_of(dir)) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
}

// v2, delegated: the grader moves itself into a leaf of its own group once, so the group may hand
// controllers to its children (a group with processes may not, below the top).
Result<void> leave_own_group(const std::string& own) {
  static std::mutex mu;
  static std::optional<Result<void>> done;
  std::lock_guard lock(mu);
  if (done) return *done;
  done = [&]() -> Result<void> {
    const std::string leaf = own + "/cb-grade-self";
    if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return Error{leaf + ": " + std::strerror(errno)};
    if (auto moved = write_text(leaf + "/cgroup.procs", "0"); !moved) return moved;
    (void)write_text(own + "/cgroup.subtree_control", "+cpu");  // where delegated: boxes share CPU evenly
    return write_text(own + "/cgroup.subtree_control", "+memory +pids");
  }();
  return *done;
}

bool lists(const std::string& file, std::string_view a, std::string_view b) {
  bool has_a = false, has_b = false;
  for (std::string_view w : words(read_small(file))) {
    if (!w.empty() && w.back() == '\n') w.remove_suffix(1);
    has_a = has_a || w == a;
    has_b = has_b || w == b;
  }
  return has_a && has_b;
}

// Where the box groups are made, v2: a `cb-grade` group at the top (root), or the grader's own
// group once it has left it for a leaf (delegated).
Result<std::string> v2_parent(const CgroupLayout& layout) {
  const std::string& base = layout.memory_dir;
  if (!lists(base + "/cgroup.controllers", "memory", "pids"))
    return Error{"cgroup v2 at " + base + " offers no memory and pids controllers"};
  if (layout.delegated) {
    if (::access((base + "/cgroup.subtree_control").c_str(), W_OK) != 0 ||
        ::access((base + "/cgroup.procs").c_str(), W_OK) != 0)
      return Error{"cgroup v2: the grader's group " + base + " is not delegated to its user"};
    if (auto left = leave_own_group(base); !left) return left.error();
    return base;
  }
  if (!lists(base + "/cgroup.subtree_control", "memory", "pids"))
    if (auto on = write_text(base + "/cgroup.subtree_control", "+memory +pids"); !on) return on.error();
  const std::string parent = base + "/cb-grade";
  if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return Error{parent + ": " + std::strerror(errno)};
  if (!lists(parent + "/cgroup.subtree_control", "memory", "pids"))
    if (auto on = write_text(parent + "/cgroup.subtree_control", "+memory +pids"); !on) return on.error();
  // The cpu controller where the kernel has it: each box then one scheduling entity. Without it
  // the boxes share CPU as their processes do.
  if (lists(base + "/cgroup.controllers", "cpu", "cpu")) {
    (void)write_text(base + "/cgroup.subtree_control", "+cpu");
    (void)write_text(parent + "/cgroup.subtree_control", "+cpu");
  }
  return parent;
}

// The box's group `name` under `parent` (a `cb-grade` folder), made anew: one of that name a dead
// grader left is emptied first. The parent may be removed by another grader whose last box just
// went (see ~BoxCgroup): it is made again, and the box's group with it.
Result<std::string> make_group(const std::string& parent, const std::string& name, int version) {
  const std::string dir = parent + "/" + name;
  for (int tries = 0;; ++tries) {
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return Error{parent + ": " + std::strerror(errno)};
    if (!remove_group(dir, version)) return Error{dir + ": left by another grader, and cannot be emptied"};
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != ENOENT || tries == 2) return Error{dir + ": " + std::strerror(errno)};
  }
}

// The boxes under `parent` (its subfolders).
std::size_t groups_in(const std::string& parent) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(parent.c_str())) {
    while (const dirent* e = ::readdir(d))
      n += e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0 ? 1 : 0;
    ::closedir(d);
  }
  return n;
}

// The `cb-grade` folder weighs as much as its boxes would beside the machine's other work, one
// default share each: grouping them under it changes nothing of what the boxes together get,
// only how they share it (a box of many sessions no longer takes one share a session). Another
// grader's boxes in the same folder count too; each make and removal sets it again.
void weigh_parent(const std::string& parent, int version) {
  const auto boxes = static_cast<std::uint64_t>(std::max<std::size_t>(1, groups_in(parent)));
  if (version == 1)
    (void)write_text(parent + "/cpu.shares", std::to_string(std::min<std::uint64_t>(1024 * boxes, 262'144)));
  else
    (void)write_text(parent + "/cpu.weight", std::to_string(std::min<std::uint64_t>(100 * boxes, 10'000)));
}

}  // namespace

bool in_comma_list(std::string_view list, std::string_view name) {
  for (std::size_t i = 0; i <= list.size();) {
    const std::size_t comma = std::min(list.find(',', i), list.size());
    if (list.substr(i, comma - i) == name) return true;
    i = comma + 1;
  }
  return false;
}

std::map<std::string, std::string, std::less<>> own_cgroups(std::string_view self_cgroup) {
  std::map<std::string, std::string, std::less<>> own;
  for (std::size_t i = 0; i < self_cgroup.size();) {
    const std::size_t nl = std::min(self_cgroup.find('\n', i), self_cgroup.size());
    const std::string_view line = self_cgroup.substr(i, nl - i);
    i = nl + 1;
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path(line.substr(c2 + 1));
    own[std::string(controllers)] = path;
    for (std::size_t j = 0; j <= controllers.size() && controllers.find(',') != std::string_view::npos;) {
      const std::size_t comma = std::min(controllers.find(',', j), controllers.size());
      own[std::string(controllers.substr(j, comma - j))] = path;
      j = comma + 1;
    }
  }
  return own;
}

CgroupLayout cgroup_layout(std::string_view mountinfo, std::string_view self_cgroup, bool root) {
  CgroupLayout out;
  std::optional<Mount> v2, memory, pids, cpu;
  for (std::size_t i = 0; i < mountinfo.size();) {
    const std::size_t nl = std::min(mountinfo.find('\n', i), mountinfo.size());
    const auto w = words(mountinfo.substr(i, nl - i));
    i = nl + 1;
    std::size_t dash = 0;
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (w.size() < 5 || dash + 3 >= w.size()) continue;
    const Mount m{std::string(w[3]), std::string(w[4])};
    if (w[dash + 1] == "cgroup2" && !v2) v2 = m;
    if (w[dash + 1] == "cgroup" && in_comma_list(w[dash + 3], "memory") && !memory) memory = m;
    if (w[dash + 1] == "cgroup" && in_comma_list(w[dash + 3], "pids") && !pids) pids = m;
    if (w[dash + 1] == "cgroup" && in_comma_list(w[dash + 3], "cpu") && !cpu) cpu = m;
  }
  auto own = own_cgroups(self_cgroup);
  if (memory) {  // v1 (a hybrid machine's v2 has no memory controller: v1 holds it)
    if (!root) {
      out.why_none = "cgroup v1 is divided only by root";
      return out;
    }
    if (own.count("memory") == 0) {
      out.why_none = "/proc/self/cgroup names no memory group";
      return out;
    }
    out.version = 1;
    out.memory_dir = under(*memory, own["memory"]);
    if (pids && own.count("pids") > 0) out.pids_dir = under(*pids, own["pids"]);
    if (cpu && own.count("cpu") > 0) out.cpu_dir = under(*cpu, own["cpu"]);
    if (v2 && own.count("") > 0) out.pressure_dir = under(*v2, own[""]);
    return out;
  }
  if (v2 && own.count("") > 0) {
    out.version = 2;
    out.delegated = !root;
    out.memory_dir = root ? v2->point : under(*v2, own[""]);
    out.pids_dir = out.memory_dir;
    out.cpu_dir = out.memory_dir;
    return out;
  }
  out.why_none = "no cgroup hierarchy is mounted";
  return out;
}

const CgroupLayout& machine_cgroups() {
  static const CgroupLayout layout = [] {
    // Read whole: mountinfo is larger than read_small's page on a busy machine.
    const auto whole = [](const char* path) {
      std::string text;
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return text;
      char buf[8192];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
      ::close(fd);
      return text;
    };
    return cgroup_layout(whole("/proc/self/mountinfo"), whole("/proc/self/cgroup"), ::geteuid() == 0);
  }();
  return layout;
}

Result<std::unique_ptr<BoxCgroup>> BoxCgroup::make(const std::string& name, std::uint64_t memory_bytes,
                                                   std::uint64_t processes) {
  const CgroupLayout& layout = machine_cgroups();
  if (layout.version == 0) return Error{layout.why_none};
  std::unique_ptr<BoxCgroup> g(new BoxCgroup());
  g->version_ = layout.version;
  std::vector<std::string> parents;
  if (layout.version == 2) {
    auto parent = v2_parent(layout);
    if (!parent) return parent.error();
    parents.push_back(*parent);
  } else {
    parents.push_back(layout.memory_dir + "/cb-grade");
    if (!layout.pids_dir.empty()) parents.push_back(layout.pids_dir + "/cb-grade");
  }
  for (const std::string& parent : parents) {
    auto dir = make_group(parent, name, layout.version);
    if (!dir) return dir.error();
    g->dirs_.push_back(*dir);
    if (layout.version == 1 || !layout.delegated) g->parents_.push_back(parent);
  }
  const std::string& mem = g->dirs_.front();
  const std::string bytes = std::to_string(memory_bytes);
  if (layout.version == 2) {
    if (memory_bytes != kUnlimited) {
      if (auto w = write_text(mem + "/memory.max", bytes); !w) return w.error();
      (void)write_text(mem + "/memory.swap.max", "0");  // absent without swap accounting
    }
    // One out-of-memory kill ends the whole box, not the largest process alone.
    (void)write_text(mem + "/memory.oom.group", "1");
  } else if (memory_bytes != kUnlimited) {
    if (auto w = write_text(mem + "/memory.limit_in_bytes", bytes); !w) return w.error();
    (void)write_text(mem + "/memory.memsw.limit_in_bytes", bytes);  // absent without swap accounting
    // v1 counts a group's TCP buffers only once they have a limit of their own (v2 counts them in
    // memory.current): without it, a box held 512 MiB of loopback buffers under a limit of 128.
    (void)write_text(mem + "/memory.kmem.tcp.limit_in_bytes", bytes);
  }
  if (layout.version == 2 || g->dirs_.size() > 1)
    if (auto w = write_text(g->dirs_.back() + "/pids.max", std::to_string(processes)); !w) return w.error();
  for (const std::string& dir : g->dirs_) {
    const int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Error{dir + "/cgroup.procs: " + std::strerror(errno)};
    g->join_fds_.push_back(fd);
  }
  // The pressure group is joined before the cpu group: a box's child, once in a starved cpu group,
  // is kept waiting where nothing yet counts its wait.
  g->take_pressure(layout, name);
  g->take_cpu(layout, name);
  return g;
}

void BoxCgroup::take_cpu(const CgroupLayout& layout, const std::string& name) {
  if (layout.cpu_dir.empty()) return;
  if (version_ == 2) {
    // The box's one group, where its parent handed it the cpu controller.
    if (!lists(dirs_.front() + "/cgroup.controllers", "cpu", "cpu")) return;
    cpu_dir_ = dirs_.front();
    if (!parents_.empty()) weigh_parent(parents_.front(), 2);
    return;
  }
  const std::string parent = layout.cpu_dir + "/cb-grade";
  auto dir = make_group(parent, name, 1);
  if (!dir) return;
  const int fd = ::open((*dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    (void)::rmdir(dir->c_str());
    return;
  }
  join_fds_.push_back(fd);
  cpu_dir_ = *dir;
  cpu_parent_ = parent;
  weigh_parent(parent, 1);
}

void BoxCgroup::take_pressure(const CgroupLayout& layout, const std::string& name) {
  if (version_ == 2) {
    if (::access((dirs_.front() + "/cpu.pressure").c_str(), R_OK) == 0) pressure_dir_ = dirs_.front();
    return;
  }
  if (layout.pressure_dir.empty()) return;
  const std::string parent = layout.pressure_dir + "/cb-grade";
  auto dir = make_group(parent, name, 2);
  if (!dir) return;
  const int fd = ::open((*dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::access((*dir + "/cpu.pressure").c_str(), R_OK) != 0) {
    if (fd >= 0) ::close(fd);
    (void)::rmdir(dir->c_str());
    (void)::rmdir(parent.c_str());
    return;
  }
  join_fds_.push_back(fd);
  pressure_dir_ = *dir;
  pressure_parent_ = parent;
}

std::optional<CpuTime> BoxCgroup::cpu_time() const {
  if (pressure_dir_.empty()) return std::nullopt;
  const std::string pressure = read_small(pressure_dir_ + "/cpu.pressure");
  // "some avg10=0.00 avg60=0.00 avg300=0.00 total=N" first
  const auto at = pressure.find("total=");
  if (pressure.rfind("some", 0) != 0 || at == std::string::npos) return std::nullopt;
  CpuTime t;
  t.waited = std::chrono::microseconds{std::strtoll(pressure.c_str() + at + 6, nullptr, 10)};
  t.used = std::chrono::microseconds{
      static_cast<long long>(key_value(read_small(pressure_dir_ + "/cpu.stat"), "usage_usec"))};
  return t;
}

bool starved(const CpuTime& from, const CpuTime& to, std::chrono::microseconds wall) {
  return (to.waited - from.waited) * 4 >= wall && (to.used - from.used) * 4 < wall;
}

std::string describe_starved(const CpuTime& from, const CpuTime& to, std::chrono::microseconds wall) {
  const auto s = [](std::chrono::microseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
    return std::string(buf);
  };
  return "given " + s(to.used - from.used) + " of CPU in " + s(wall) + ", and waited " + s(to.waited - from.waited) +
         " for one";
}

std::string starved_since(const BoxCgroup* group, const std::optional<CpuTime>& from,
                          std::chrono::steady_clock::time_point since) {
  const auto now = from && group != nullptr ? group->cpu_time() : std::nullopt;
  const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since);
  if (!now || !starved(*from, *now, wall)) return "";
  return describe_starved(*from, *now, wall);
}

CgroupCounts BoxCgroup::counts() const {
  CgroupCounts c;
  const std::string& mem = dirs_.front();
  if (version_ == 2) {
    const std::string events = read_small(mem + "/memory.events");
    c.oom_kills = key_value(events, "oom_kill");
    c.own_limit_reached = key_value(events, "oom");
    c.memory_peak = number_in(mem + "/memory.peak");
  } else {
    c.oom_kills = key_value(read_small(mem + "/memory.oom_control"), "oom_kill");
    c.memory_peak = number_in(mem + "/memory.max_usage_in_bytes");
    c.own_limit_reached = number_in(mem + "/memory.failcnt");  // 0 on kernels that no longer count it
    c.socket_peak = number_in(mem + "/memory.kmem.tcp.max_usage_in_bytes");
  }
  if (version_ == 2 || dirs_.size() > 1) c.pids_refused = key_value(read_small(dirs_.back() + "/pids.events"), "max");
  c.cpu = cpu_time();
  return c;
}

bool BoxCgroup::kill_all() const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{2};
  if (version_ == 2) (void)write_text(dirs_.front() + "/cgroup.kill", "1");
  for (;;) {
    bool any = false;
    for (const std::string& dir : dirs_)
      for (pid_t p : procs_of(dir)) {
        any = true;
        ::kill(p, SIGKILL);
      }
    if (!any) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
}

BoxCgroup::~BoxCgroup() {
  for (int fd : join_fds_) ::close(fd);
  for (const std::string& dir : dirs_) (void)remove_group(dir, version_);
  if (!cpu_parent_.empty()) {
    (void)remove_group(cpu_dir_, 1);
    if (::rmdir(cpu_parent_.c_str()) != 0) weigh_parent(cpu_parent_, 1);
  } else if (!cpu_dir_.empty() && !parents_.empty()) {
    weigh_parent(parents_.front(), 2);
  }
  if (!pressure_parent_.empty()) {
    (void)remove_group(pressure_dir_, 2);
    (void)::rmdir(pressure_parent_.c_str());
  }
  // The grader's own `cb-grade` folder goes with its last box: nothing of a grading stays in a
  // parent that is not the grader's (a Slurm job's group, whose end finds it empty). Another
  // box in it keeps it (EBUSY), and a grader making one makes it again.
  for (const std::string& parent : parents_) (void)::rmdir(parent.c_str());
}

}  // namespace cb::sandbox

#include "plan.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <climits>
#include <fstream>

#include "cb/sandbox/cgroup.h"
#include "landlock_abi.h"
#include "seccomp_filter.h"

extern char** environ;

namespace cb::sandbox {
namespace {

// What a program may read and run, read-only: the system, nothing of anybody's.
constexpr const char* kSystemDirs[] = {"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom"};
int last_capability() {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int n = 40;
  f >> n;
  return n;
}

// The processes `uid` runs now: without a uid of its own, the fallback's process limit counts
// from there (RLIMIT_NPROC counts every process of the user).
std::uint64_t processes_of(uid_t uid) {
  std::uint64_t n = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (const dirent* d = ::readdir(proc)) {
    if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + d->d_name + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0) {
        if (std::strtoul(line.c_str() + 4, nullptr, 10) == uid) ++n;
        break;
      }
    }
  }
  ::closedir(proc);
  return n;
}

rlimit capped(std::uint64_t soft, std::uint64_t hard, int resource) {
  rlimit now{};
  ::getrlimit(resource, &now);
  // Only lowered: raising a hard limit takes a privilege the grader may not have.
  const auto cap = [&](std::uint64_t v) {
    return now.rlim_max == RLIM_INFINITY ? v : std::min<std::uint64_t>(v, now.rlim_max);
  };
  return rlimit{static_cast<rlim_t>(cap(soft)), static_cast<rlim_t>(cap(hard))};
}

void add_dirs(std::vector<jail::MountOp>& ops, const std::string& path) {
  std::string at;
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    at = path.substr(0, i);
    ops.push_back({jail::MountOp::Kind::Dir, "", "/newroot" + at, "", false, false, false});
  }
}

std::vector<jail::MountOp> root_of(const Box& box, const Limits& limits) {
  using Op = jail::MountOp;
  std::vector<Op> ops;
  for (const char* dir : kSystemDirs) {
    struct stat st {};
    if (::lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlink(dir, target, sizeof target - 1);
      if (n <= 0) continue;
      ops.push_back({Op::Kind::Symlink, std::string(target, static_cast<std::size_t>(n)), std::string("/newroot") + dir,
                     "", false, false, false});
    } else if (S_ISDIR(st.st_mode)) {
      ops.push_back({Op::Kind::Dir, "", std::string("/newroot") + dir, "", false, false, false});
      ops.push_back(
          {Op::Kind::Bind, std::string("/oldroot") + dir, std::string("/newroot") + dir, "", true, true, false});
    }
  }
  ops.push_back({Op::Kind::Dir, "", "/newroot/proc", "", false, false, false});
  ops.push_back({Op::Kind::Proc, "", "/newroot/proc", "", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/dev", "", false, false, false});
  ops.push_back({Op::Kind::Tmpfs, "", "/newroot/dev", "mode=0755,size=64k", false, false, false});
  for (const char* dev : kDevices) {
    ops.push_back({Op::Kind::File, "", std::string("/newroot/dev/") + dev, "", false, false, false});
    ops.push_back({Op::Kind::Bind, std::string("/oldroot/dev/") + dev, std::string("/newroot/dev/") + dev, "", false,
                   false, true});
  }
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd", "/newroot/dev/fd", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/0", "/newroot/dev/stdin", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/1", "/newroot/dev/stdout", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/2", "/newroot/dev/stderr", "", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/dev/shm", "", false, false, false});
  ops.push_back({Op::Kind::Tmpfs, "", "/newroot/dev/shm", "mode=1777,size=64m", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/tmp", "", false, false, false});
  ops.push_back(
      {Op::Kind::Tmpfs, "", "/newroot/tmp",
       "mode=1777,size=" + std::to_string(limits.tmp_bytes) + ",nr_inodes=" + std::to_string(limits.box_files), false,
       false, false});
  // The box's copy where the submission was, and the output directory where it was, so every
  // path a program or a message names is the one the student knows.
  add_dirs(ops, box.submission());
  ops.push_back({Op::Kind::Bind, "/oldroot" + box.copy_dir(), "/newroot" + box.submission(), "", false, false, false});
  if (!box.out_dir().empty() && !box.out_inside_submission()) {
    add_dirs(ops, box.out_dir());
    ops.push_back({Op::Kind::Bind, "/oldroot" + box.out_host(), "/newroot" + box.out_dir(), "", false, false, false});
  }
  ops.push_back({Op::Kind::ReadOnly, "", "/newroot", "", false, false, false});
  return ops;
}

void add_landlock(jail::Plan& plan, const Box& box, int port) {
  namespace ll = landlock_abi;
  const int abi = landlock_version();
  if (abi <= 0) return;
  plan.landlock_abi = abi;
  plan.landlock_fs = ll::fs_rights(abi);
  plan.landlock_net = abi >= 4 ? ll::kBindTcp | ll::kConnectTcp : 0;
  plan.landlock_scope = abi >= 6 ? ll::kScopeSignal | ll::kScopeAbstractUnix : 0;
  plan.landlock_port = port;
  const std::uint64_t read = ll::kExecute | ll::kReadFile | ll::kReadDir;
  for (const char* dir : kSystemDirs) plan.landlock_rules.push_back({dir, read});
  plan.landlock_rules.push_back({"/proc", ll::kReadFile | ll::kReadDir});
  // A shell's "> /dev/null" truncates (ABI 3); isatty() asks the device (ABI 5).
  const std::uint64_t device =
      ll::kReadFile | ll::kWriteFile | (abi >= 3 ? ll::kTruncate : 0) | (abi >= 5 ? ll::kIoctlDev : 0);
  for (const char* dev : kDevices) plan.landlock_rules.push_back({std::string("/dev/") + dev, device});
  plan.landlock_rules.push_back({box.copy_dir(), plan.landlock_fs});
  plan.landlock_rules.push_back({box.tmp_host(), plan.landlock_fs});
  if (!box.out_inside_submission() && !box.out_host().empty())
    plan.landlock_rules.push_back({box.out_host(), plan.landlock_fs});
}

std::vector<std::string> sandbox_env(const std::string& home, const std::vector<std::string>& extra) {
  // A fixed environment: the grader's may hold secrets (a CI token) and names of its own files.
  std::vector<std::string> env{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, "TERM=dumb"};
  bool lang = false;
  for (const char* name : {"LANG", "LC_ALL", "LC_CTYPE", "TZ"}) {
    if (const char* v = std::getenv(name); v != nullptr) {
      env.push_back(std::string(name) + "=" + v);
      lang = lang || std::strcmp(name, "TZ") != 0;
    }
  }
  if (!lang) env.emplace_back("LANG=C.UTF-8");
  // A name set again replaces what came before it (an environment should hold a name once).
  for (const std::string& kv : extra) {
    const auto name = kv.substr(0, kv.find('=') + 1);
    env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name, 0) == 0; }),
              env.end());
    env.push_back(kv);
  }
  return env;
}

// What the policy sets for every program (--program-env), then what this start sets (CB_SERVER,
// CB_DIR), which wins.
std::vector<std::string> with_policy_env(const Policy& policy, const std::vector<std::string>& start) {
  std::vector<std::string> env = policy.env;
  env.insert(env.end(), start.begin(), start.end());
  return env;
}

std::vector<std::string> grader_env(const std::vector<std::string>& extra) {
  const auto replaced = [&](const std::string& kv) {
    for (const std::string& s : extra) {
      const auto eq = s.find('=');
      if (eq != std::string::npos && kv.compare(0, eq + 1, s, 0, eq + 1) == 0) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (!replaced(*e)) env.emplace_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

Result<void> address_of(const Program::Listen& l, jail::Plan& plan) {
  std::memset(&plan.address, 0, sizeof plan.address);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&plan.address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&plan.address);
  const std::string host = l.host == "localhost" ? "127.0.0.1" : l.host;
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(l.port));
    plan.address_length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(l.port));
    plan.address_length = sizeof(sockaddr_in6);
  } else {
    return Error{"the server's address '" + l.host + "' is not an IP address"};
  }
  plan.listen = true;
  return {};
}

}  // namespace

bool in_system_dirs(const std::string& real) {
  for (const char* dir : kSystemDirs) {
    char resolved[PATH_MAX];
    if (::realpath(dir, resolved) == nullptr) continue;
    const std::string base = resolved;
    if (real == base || real.rfind(base + "/", 0) == 0) return true;
  }
  return false;
}

int landlock_version() {
  static const int abi = [] {
    const long v = ::syscall(landlock_abi::kCreateRuleset, nullptr, 0, landlock_abi::kCreateRulesetVersion);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

Result<jail::Plan> make_plan(const Policy& policy, Kind kind, const Box& box, const Program& program) {
  jail::Plan plan;
  plan.kind = kind;
  const bool root = ::geteuid() == 0;
  plan.in_fd = program.in_fd;
  plan.out_fd = program.out_fd;
  plan.err_fd = program.err_fd;
  plan.command = program.command;
  if (kind == Kind::None) {
    plan.cwd = box.submission();
    plan.env = grader_env(with_policy_env(policy, program.env));
  } else {
    const Limits& l = policy.limits;
    const BoxCgroup* group = box.cgroup();
    // Without a group, memory the kernel would charge to nobody's process (memfd, System V
    // shared memory) is refused: RLIMIT_DATA cannot see it.
    const bool per_process = group == nullptr && l.memory_bytes != kUnlimited;
    const unsigned additions = (per_process ? kNoSharedMemory : 0U) |
                               (kind == Kind::Fallback ? kTcpOnly | kMachineIpcNamespace : 0U) |
                               (policy.harness_may_answer ? kNoBeacon : 0U);
    if (auto filter = syscall_filter(additions); filter)
      plan.seccomp = *filter;
    else
      return filter.error();
    if (group != nullptr)
      for (std::size_t i = 0; i < group->join_fds().size() && i < std::size(plan.cgroup_fds); ++i)
        plan.cgroup_fds[i] = group->join_fds()[i];
    const std::uint64_t nproc =
        kind == Kind::Fallback && !box.own_uid() ? processes_of(::getuid()) + l.processes : l.processes;
    const auto cpu = static_cast<std::uint64_t>(l.cpu.count());
    // Memory is the group's to count; without one, each process's data (never its address
    // space: a JVM or Node reserves gigabytes it never touches).
    if (per_process) plan.limits.push_back({RLIMIT_DATA, capped(l.memory_bytes, l.memory_bytes, RLIMIT_DATA)});
    plan.limits.insert(plan.limits.end(),
                       {{RLIMIT_NPROC, capped(nproc, nproc, RLIMIT_NPROC)},
                        {RLIMIT_NOFILE, capped(l.open_files, l.open_files, RLIMIT_NOFILE)},
                        {RLIMIT_FSIZE, capped(l.file_bytes, l.file_bytes, RLIMIT_FSIZE)},
                        // SIGXCPU at the limit, SIGKILL a second later for a program that ignores it.
                        {RLIMIT_CPU, capped(cpu, cpu + 1, RLIMIT_CPU)},
                        {RLIMIT_CORE, rlimit{0, 0}}});
    plan.last_capability = last_capability();
    plan.drop_bounding = root || kind == Kind::Namespaces;
    plan.change_ids = root && box.own_uid();
    plan.uid = box.uid();
    plan.gid = box.gid();
  }
  if (kind == Kind::Namespaces) {
    plan.user_namespace = !root;
    plan.uid_map = std::to_string(kInsideId) + " " + std::to_string(::getuid()) + " 1\n";
    plan.gid_map = std::to_string(kInsideId) + " " + std::to_string(::getgid()) + " 1\n";
    plan.mounts = root_of(box, policy.limits);
    plan.cwd = box.submission();
    plan.env = sandbox_env("/tmp", with_policy_env(policy, program.env));
    if (program.listen)
      if (auto a = address_of(*program.listen, plan); !a) return a.error();
  } else if (kind == Kind::Fallback) {
    plan.cwd = box.copy_dir();
    plan.env = sandbox_env(box.tmp_host(), with_policy_env(policy, program.env));
    add_landlock(plan, box, program.connect_port);
  }

  return plan;
}

}  // namespace cb::sandbox

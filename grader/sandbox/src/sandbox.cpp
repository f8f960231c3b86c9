#include "cb/sandbox/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "children.h"
#include "jail.h"
#include "landlock_abi.h"
#include "seccomp_filter.h"

extern char** environ;

namespace cb::sandbox {
namespace {

// What a program may read and run, read-only: the system, nothing of anybody's.
constexpr const char* kSystemDirs[] = {"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom"};
// The uid and gid a program sees in a user namespace (the grader not root).
constexpr unsigned kInsideId = 1000;

int landlock_version() {
  static const int abi = [] {
    const long v = ::syscall(landlock_abi::kCreateRuleset, nullptr, 0, landlock_abi::kCreateRulesetVersion);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

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
  const auto cap = [&](std::uint64_t v) { return now.rlim_max == RLIM_INFINITY ? v : std::min<std::uint64_t>(v, now.rlim_max); };
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
      ops.push_back({Op::Kind::Symlink, std::string(target, static_cast<std::size_t>(n)), std::string("/newroot") + dir, "",
                     false, false, false});
    } else if (S_ISDIR(st.st_mode)) {
      ops.push_back({Op::Kind::Dir, "", std::string("/newroot") + dir, "", false, false, false});
      ops.push_back({Op::Kind::Bind, std::string("/oldroot") + dir, std::string("/newroot") + dir, "", true, true, false});
    }
  }
  ops.push_back({Op::Kind::Dir, "", "/newroot/proc", "", false, false, false});
  ops.push_back({Op::Kind::Proc, "", "/newroot/proc", "", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/dev", "", false, false, false});
  ops.push_back({Op::Kind::Tmpfs, "", "/newroot/dev", "mode=0755,size=64k", false, false, false});
  for (const char* dev : kDevices) {
    ops.push_back({Op::Kind::File, "", std::string("/newroot/dev/") + dev, "", false, false, false});
    ops.push_back({Op::Kind::Bind, std::string("/oldroot/dev/") + dev, std::string("/newroot/dev/") + dev, "", false, false, true});
  }
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd", "/newroot/dev/fd", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/0", "/newroot/dev/stdin", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/1", "/newroot/dev/stdout", "", false, false, false});
  ops.push_back({Op::Kind::Symlink, "/proc/self/fd/2", "/newroot/dev/stderr", "", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/dev/shm", "", false, false, false});
  ops.push_back({Op::Kind::Tmpfs, "", "/newroot/dev/shm", "mode=1777,size=64m", false, false, false});
  ops.push_back({Op::Kind::Dir, "", "/newroot/tmp", "", false, false, false});
  ops.push_back({Op::Kind::Tmpfs, "", "/newroot/tmp", "mode=1777,size=" + std::to_string(limits.tmp_bytes), false, false, false});
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
  const std::uint64_t device = ll::kReadFile | ll::kWriteFile | (abi >= 3 ? ll::kTruncate : 0) | (abi >= 5 ? ll::kIoctlDev : 0);
  for (const char* dev : kDevices) plan.landlock_rules.push_back({std::string("/dev/") + dev, device});
  plan.landlock_rules.push_back({box.copy_dir(), plan.landlock_fs});
  plan.landlock_rules.push_back({box.tmp_host(), plan.landlock_fs});
  if (!box.out_inside_submission() && !box.out_host().empty()) plan.landlock_rules.push_back({box.out_host(), plan.landlock_fs});
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
  env.insert(env.end(), extra.begin(), extra.end());
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

std::string failure_text(const jail::Plan& plan, const jail::Message& m) {
  const auto step = static_cast<jail::Step>(m.step);
  std::string what = jail::step_name(step);
  if (step == jail::Step::MountStep && m.index >= 0 && static_cast<std::size_t>(m.index) < plan.mounts.size()) {
    const jail::MountOp& op = plan.mounts[static_cast<std::size_t>(m.index)];
    what += " (" + op.target.substr(std::strlen("/newroot")) + (op.source.empty() ? "" : " from " + op.source) + ")";
  }
  if (step == jail::Step::Landlock && m.index >= 0 && static_cast<std::size_t>(m.index) < plan.landlock_rules.size())
    what += " (" + plan.landlock_rules[static_cast<std::size_t>(m.index)].path + ")";
  return what + ": " + std::strerror(m.error);
}

// Kills and reaps a child that did not get as far as its program.
void abandon(pid_t pid) {
  ::kill(pid, SIGKILL);
  Child c;
  c.pid = pid;
  c.kind = Kind::Namespaces;
  (void)end_child(c);
}

Result<Child> launch(const Policy& policy, Kind kind, const Box& box, const Program& program) {
  jail::Plan plan;
  plan.kind = kind;
  const bool root = ::geteuid() == 0;
  plan.in_fd = program.in_fd;
  plan.out_fd = program.out_fd;
  plan.err_fd = program.err_fd;
  plan.command = program.command;
  if (kind == Kind::None) {
    plan.cwd = box.submission();
    plan.env = grader_env(program.env);
  } else {
    if (auto filter = syscall_filter(); filter) plan.seccomp = *filter;
    else return filter.error();
    const Limits& l = policy.limits;
    const std::uint64_t nproc = kind == Kind::Fallback && !box.own_uid() ? processes_of(::getuid()) + l.processes : l.processes;
    const auto cpu = static_cast<std::uint64_t>(l.cpu.count());
    plan.limits = {{RLIMIT_AS, capped(l.memory_bytes, l.memory_bytes, RLIMIT_AS)},
                   {RLIMIT_NPROC, capped(nproc, nproc, RLIMIT_NPROC)},
                   {RLIMIT_NOFILE, capped(l.open_files, l.open_files, RLIMIT_NOFILE)},
                   {RLIMIT_FSIZE, capped(l.file_bytes, l.file_bytes, RLIMIT_FSIZE)},
                   // SIGXCPU at the limit, SIGKILL a second later for a program that ignores it.
                   {RLIMIT_CPU, capped(cpu, cpu + 1, RLIMIT_CPU)},
                   {RLIMIT_CORE, rlimit{0, 0}}};
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
    plan.env = sandbox_env("/tmp", program.env);
    if (program.listen)
      if (auto a = address_of(*program.listen, plan); !a) return a.error();
  } else if (kind == Kind::Fallback) {
    plan.cwd = box.copy_dir();
    plan.env = sandbox_env(box.tmp_host(), program.env);
    add_landlock(plan, box, program.connect_port);
  }
  plan.seal();

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Error{std::string("cannot start the program: socketpair: ") + std::strerror(errno)};
  plan.control = sv[1];
  // Opened here, not in the child (it makes raw system calls on the plan only).
  plan.devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  unsigned long flags = SIGCHLD;
  if (kind == Kind::Namespaces)
    flags |= CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC | (root ? 0UL : CLONE_NEWUSER);
  long pid = -1;
  {
    auto lock = children::lock();  // registered before any reaper can take it for an orphan
    if (kind != Kind::Namespaces) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) jail::enter(plan);
    if (pid > 0) children::add(static_cast<pid_t>(pid));
  }
  const int clone_errno = errno;
  ::close(sv[1]);
  if (plan.devnull >= 0) ::close(plan.devnull);
  if (pid < 0) {
    ::close(sv[0]);
    return Error{std::string("clone: ") + std::strerror(clone_errno)};
  }
  Child child;
  child.pid = static_cast<pid_t>(pid);
  child.kind = kind;

  // The conversation: a socket to serve (the full sandbox with a server), then the end of the
  // control socket, which its close-on-exec gives at the exec; or why it failed.
  Result<void> outcome;
  for (;;) {
    pollfd pfd{sv[0], POLLIN, 0};
    if (::poll(&pfd, 1, 10'000) <= 0) {
      outcome = Error{"the sandbox did not start the program within 10 s"};
      break;
    }
    jail::Message m;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    iovec iov{&m, sizeof m};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;  // exec'd
    if (n != static_cast<ssize_t>(sizeof m)) {
      outcome = Error{"the sandbox's child sent something unexpected"};
      break;
    }
    if (m.kind == jail::Message::Failed) {
      outcome = Error{failure_text(plan, m)};
      break;
    }
    int fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (fd < 0 || !program.listen) {
      if (fd >= 0) ::close(fd);
      outcome = Error{"the sandbox's child sent no socket"};
      break;
    }
    outcome = program.listen->serve(fd);
    if (!outcome) break;
    const char go = 'g';
    if (::write(sv[0], &go, 1) != 1) {
      outcome = Error{"the sandbox's child went away before its program started"};
      break;
    }
  }
  ::close(sv[0]);
  if (!outcome) {
    abandon(child.pid);
    return outcome.error();
  }
  return child;
}

}  // namespace

Result<Sandbox::Decision> Sandbox::decide() {
  std::lock_guard lock(mu_);
  if (!decision_) {
    switch (policy_.mode) {
      case Mode::None: decision_ = Decision{Kind::None, "asked for (--sandbox none)"}; break;
      case Mode::Fallback: decision_ = Decision{Kind::Fallback, "asked for (--sandbox fallback)"}; break;
      case Mode::Auto:
      case Mode::Strict: decision_ = probe(); break;
    }
  }
  if (policy_.mode == Mode::Strict && decision_->kind != Kind::Namespaces)
    return Error{"--sandbox strict: the full sandbox cannot be had here: " + decision_->why};
  return *decision_;
}

// A whole start of an empty program in the full sandbox, in a box of an empty directory: what
// is refused shows here, once, instead of in a student's grade.
Sandbox::Decision Sandbox::probe() {
  char dir[] = "/tmp/cb-grade-probe.XXXXXX";
  if (::mkdtemp(dir) == nullptr) return {Kind::Fallback, std::string("cannot make a directory to probe in: ") + std::strerror(errno)};
  Decision d{Kind::Namespaces, ""};
  {
    BoxOptions o;
    o.submission = dir;
    o.own_uid = ::geteuid() == 0;
    o.first_uid = policy_.first_uid;
    o.uid_count = policy_.uid_count;
    auto box = Box::make(o);
    if (!box) {
      d = {Kind::Fallback, box.error().message};
    } else {
      Program p;
      p.command = "exit 0";
      auto child = launch(policy_, Kind::Namespaces, **box, p);
      if (!child) {
        d = {Kind::Fallback, child.error().message};
      } else {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
        while (!reap_if_exited(*child) && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds{1});
        const bool exited = child->reaped;
        (void)end_child(*child);
        if (!exited) d = {Kind::Fallback, "an empty program in the full sandbox did not finish"};
        else if (child->exit_code() != 0)
          d = {Kind::Fallback, "an empty program in the full sandbox exited with " + std::to_string(child->exit_code())};
      }
    }
  }
  (void)remove_tree(dir);
  return d;
}

Result<std::unique_ptr<Box>> Sandbox::box(const std::string& submission, const std::string& out_dir) {
  auto decision = decide();
  if (!decision) return decision.error();
  BoxOptions o;
  o.submission = submission;
  o.out_dir = out_dir;
  o.copy = decision->kind != Kind::None;
  o.own_uid = o.copy && ::geteuid() == 0;
  o.first_uid = policy_.first_uid;
  o.uid_count = policy_.uid_count;
  return Box::make(o);
}

Containment Sandbox::containment(const Box& box) {
  Containment c;
  auto decision = decide();
  c.kind = decision ? decision->kind : Kind::None;
  c.why = decision ? decision->why : decision.error().message;
  c.limits = policy_.limits;
  c.uid = box.uid();
  c.own_uid = box.own_uid();
  c.uid_inside = box.uid();
  if (c.kind == Kind::None) return c;
  c.seccomp = syscall_filter().ok();
  if (c.kind == Kind::Namespaces) {
    c.user_namespace = ::geteuid() != 0;
    if (c.user_namespace) c.uid_inside = kInsideId;
    c.own_network = true;
  } else {
    c.landlock_abi = landlock_version();
  }
  return c;
}

Result<Child> Sandbox::start(const Box& box, const Program& program) {
  auto decision = decide();
  if (!decision) return decision.error();
  auto child = launch(policy_, decision->kind, box, program);
  if (!child) return Error{"cannot start the program in the sandbox: " + child.error().message};
  return child;
}

std::string Sandbox::visible_out(const Box& box) {
  auto decision = decide();
  return decision && decision->kind == Kind::Fallback ? box.out_host() : box.out_dir();
}

std::string Sandbox::visible_cwd(const Box& box) {
  auto decision = decide();
  return decision && decision->kind == Kind::Fallback ? box.copy_dir() : box.submission();
}

}  // namespace cb::sandbox

#include "jail.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "landlock_abi.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace cb::sandbox::jail {

const char* step_name(Step step) noexcept {
  switch (step) {
    case Step::Cgroup: return "joining the box's control group";
    case Step::Dumpable: return "making itself dumpable for its user namespace's maps";
    case Step::SetGroupsFile: return "writing /proc/self/setgroups";
    case Step::UidMap: return "writing /proc/self/uid_map";
    case Step::GidMap: return "writing /proc/self/gid_map";
    case Step::Loopback: return "bringing up the loopback interface";
    case Step::Socket: return "making the server's socket";
    case Step::Bind: return "binding the server's address";
    case Step::Listen: return "listening on the server's address";
    case Step::SendSocket: return "handing the server's socket to the grader";
    case Step::WaitForGo: return "waiting for the grader";
    case Step::Hostname: return "naming its host";
    case Step::PrivateMounts: return "making its mounts private";
    case Step::BaseTmpfs: return "mounting the tmpfs it builds its root in";
    case Step::PivotToBase: return "pivot_root into the tmpfs";
    case Step::MountStep: return "building its root";
    case Step::HideHost: return "letting go of the host's root";
    case Step::PivotToRoot: return "pivot_root into its root";
    case Step::WorkDir: return "entering its working directory";
    case Step::Limit: return "setting a resource limit";
    case Step::Capabilities: return "dropping capabilities";
    case Step::Groups: return "dropping supplementary groups";
    case Step::Gid: return "setting its gid";
    case Step::Uid: return "setting its uid";
    case Step::Session: return "starting a session of its own";
    case Step::DeathSignal: return "asking to die with the grader";
    case Step::NoNewPrivileges: return "setting no_new_privs";
    case Step::Descriptors: return "closing inherited descriptors";
    case Step::Landlock: return "applying Landlock";
    case Step::Seccomp: return "installing the system-call filter";
    case Step::Exec: return "starting /bin/sh";
  }
  return "starting";
}

void Plan::seal() {
  envp.clear();
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  argv[0] = sh;
  argv[1] = dash_c;
  argv[2] = command.data();
  argv[3] = nullptr;
}

namespace {

// Raw system calls only (see jail.h). syscall() sets errno, which is this thread's own.
long sys(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
  return ::syscall(number, a, b, c, d, e);
}
template <class T>
long p(T* ptr) {
  return reinterpret_cast<long>(ptr);
}
long p(const char* s) { return reinterpret_cast<long>(s); }

[[noreturn]] void die(const Plan& plan, Step step, int index = -1) {
  const Message m{Message::Failed, static_cast<std::int32_t>(step), index, errno};
  sys(SYS_write, plan.control, p(&m), sizeof m);
  sys(SYS_exit_group, 126);
  __builtin_unreachable();
}

bool write_file(const char* path, const std::string& text) {
  const long fd = sys(SYS_openat, AT_FDCWD, p(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const long n = sys(SYS_write, fd, p(text.data()), static_cast<long>(text.size()));
  sys(SYS_close, fd);
  return n == static_cast<long>(text.size());
}

void user_namespace(const Plan& plan) {
  // The grader is not dumpable, and /proc/self of a process that is not belongs to root, whom
  // this namespace does not map: the child could not write its own maps.
  if (sys(SYS_prctl, PR_SET_DUMPABLE, 1) != 0) die(plan, Step::Dumpable);
  if (!write_file("/proc/self/setgroups", "deny")) die(plan, Step::SetGroupsFile);
  if (!write_file("/proc/self/uid_map", plan.uid_map)) die(plan, Step::UidMap);
  if (!write_file("/proc/self/gid_map", plan.gid_map)) die(plan, Step::GidMap);
}

void network(const Plan& plan) {
  const long s = sys(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) die(plan, Step::Loopback);
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  if (sys(SYS_ioctl, s, SIOCGIFFLAGS, p(&ifr)) != 0) die(plan, Step::Loopback);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  if (sys(SYS_ioctl, s, SIOCSIFFLAGS, p(&ifr)) != 0) die(plan, Step::Loopback);
  sys(SYS_close, s);
  if (!plan.listen) return;

  const long fd = sys(SYS_socket, plan.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) die(plan, Step::Socket);
  const int one = 1;
  sys(SYS_setsockopt, fd, SOL_SOCKET, SO_REUSEADDR, p(&one), sizeof one);
  if (sys(SYS_bind, fd, p(&plan.address), plan.address_length) != 0) die(plan, Step::Bind);
  if (sys(SYS_listen, fd, SOMAXCONN) != 0) die(plan, Step::Listen);

  Message m{Message::Listening, 0, -1, 0};
  iovec iov{&m, sizeof m};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  const int sent_fd = static_cast<int>(fd);
  std::memcpy(CMSG_DATA(c), &sent_fd, sizeof sent_fd);
  if (sys(SYS_sendmsg, plan.control, p(&msg), MSG_NOSIGNAL) < 0) die(plan, Step::SendSocket);
  sys(SYS_close, fd);
  // The program may connect the moment it starts: the grader serves the socket first.
  char go = 0;
  if (sys(SYS_read, plan.control, p(&go), 1) != 1) die(plan, Step::WaitForGo);
}

void bind_op(const Plan& plan, const MountOp& op, int index) {
  const unsigned long flags = MS_BIND | (op.recursive ? MS_REC : 0);
  if (sys(SYS_mount, p(op.source.c_str()), p(op.target.c_str()), 0, static_cast<long>(flags), 0) != 0)
    die(plan, Step::MountStep, index);
  // mount_setattr only adds flags, so it never trips over the flags a user namespace locks on
  // the host's mounts (a remount would have to repeat each of them).
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_NOSUID | (op.read_only ? MOUNT_ATTR_RDONLY : 0) | (op.devices ? 0 : MOUNT_ATTR_NODEV);
  if (sys(SYS_mount_setattr, AT_FDCWD, p(op.target.c_str()), op.recursive ? AT_RECURSIVE : 0, p(&attr), sizeof attr) !=
      0)
    die(plan, Step::MountStep, index);
}

void mounts(const Plan& plan) {
  // bubblewrap's order: build the new root in a tmpfs, with the host's root reachable under
  // /oldroot until the end, then let go of it and pivot again.
  if (sys(SYS_mount, 0, p("/"), 0, MS_REC | MS_PRIVATE, 0) != 0) die(plan, Step::PrivateMounts);
  if (sys(SYS_mount, p("tmpfs"), p("/tmp"), p("tmpfs"), MS_NOSUID | MS_NODEV, p("mode=0755,size=1m")) != 0)
    die(plan, Step::BaseTmpfs);
  if (sys(SYS_chdir, p("/tmp")) != 0 || sys(SYS_mkdirat, AT_FDCWD, p("newroot"), 0755) != 0 ||
      sys(SYS_mount, p("newroot"), p("newroot"), 0, MS_BIND, 0) != 0 ||
      sys(SYS_mkdirat, AT_FDCWD, p("oldroot"), 0755) != 0 || sys(SYS_pivot_root, p("/tmp"), p("oldroot")) != 0 ||
      sys(SYS_chdir, p("/")) != 0)
    die(plan, Step::PivotToBase);
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) {
    const MountOp& op = plan.mounts[i];
    const int index = static_cast<int>(i);
    const long target = p(op.target.c_str());
    switch (op.kind) {
      case MountOp::Kind::Dir:
        if (sys(SYS_mkdirat, AT_FDCWD, target, 0755) != 0 && errno != EEXIST) die(plan, Step::MountStep, index);
        break;
      case MountOp::Kind::File: {
        const long fd = sys(SYS_openat, AT_FDCWD, target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) die(plan, Step::MountStep, index);
        sys(SYS_close, fd);
        break;
      }
      case MountOp::Kind::Symlink:
        if (sys(SYS_symlinkat, p(op.source.c_str()), AT_FDCWD, target) != 0) die(plan, Step::MountStep, index);
        break;
      case MountOp::Kind::Bind: bind_op(plan, op, index); break;
      case MountOp::Kind::Tmpfs:
        if (sys(SYS_mount, p("tmpfs"), target, p("tmpfs"), MS_NOSUID | MS_NODEV, p(op.options.c_str())) != 0)
          die(plan, Step::MountStep, index);
        break;
      case MountOp::Kind::Proc:
        if (sys(SYS_mount, p("proc"), target, p("proc"), MS_NOSUID | MS_NODEV | MS_NOEXEC, 0) != 0)
          die(plan, Step::MountStep, index);
        break;
      case MountOp::Kind::ReadOnly: {
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (sys(SYS_mount_setattr, AT_FDCWD, target, 0, p(&attr), sizeof attr) != 0) die(plan, Step::MountStep, index);
        break;
      }
    }
  }
  if (sys(SYS_umount2, p("/oldroot"), MNT_DETACH) != 0) die(plan, Step::HideHost);
  // pivot_root(".", ".") stacks the old root under the new one; detaching "." then drops it.
  if (sys(SYS_chdir, p("/newroot")) != 0 || sys(SYS_pivot_root, p("."), p(".")) != 0 ||
      sys(SYS_umount2, p("."), MNT_DETACH) != 0 || sys(SYS_chdir, p("/")) != 0)
    die(plan, Step::PivotToRoot);
}

void landlock(const Plan& plan) {
  if (plan.landlock_abi <= 0) return;
  landlock_abi::RulesetAttr attr{plan.landlock_fs, plan.landlock_net, plan.landlock_scope};
  // Each ABI reads only the fields it knows: before 4 no network, before 6 no scope.
  const long size = plan.landlock_abi >= 6 ? static_cast<long>(sizeof attr) : plan.landlock_abi >= 4 ? 16 : 8;
  const long ruleset = sys(landlock_abi::kCreateRuleset, p(&attr), size, 0);
  if (ruleset < 0) die(plan, Step::Landlock);
  for (std::size_t i = 0; i < plan.landlock_rules.size(); ++i) {
    const LandlockRule& rule = plan.landlock_rules[i];
    const long fd = sys(SYS_openat, AT_FDCWD, p(rule.path.c_str()), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;  // not on this machine (no /opt, say): nothing to grant
    landlock_abi::PathBeneath beneath{rule.access, static_cast<std::int32_t>(fd)};
    const long r = sys(landlock_abi::kAddRule, ruleset, landlock_abi::kRulePathBeneath, p(&beneath), 0);
    sys(SYS_close, fd);
    if (r != 0) die(plan, Step::Landlock, static_cast<int>(i));
  }
  if (plan.landlock_port >= 0 && plan.landlock_net != 0) {
    landlock_abi::NetPort port{landlock_abi::kConnectTcp, static_cast<std::uint64_t>(plan.landlock_port)};
    if (sys(landlock_abi::kAddRule, ruleset, landlock_abi::kRuleNetPort, p(&port), 0) != 0) die(plan, Step::Landlock);
  }
  if (sys(landlock_abi::kRestrictSelf, ruleset, 0) != 0) die(plan, Step::Landlock);
  sys(SYS_close, ruleset);
}

// The descriptors 0, 1, 2 from the plan's, even when one of those is itself 0, 1 or 2 (a grader
// started with a standard stream closed gets a pipe there): each is first moved out of the way.
void standard_streams(const Plan& plan) {
  const int from[3] = {plan.in_fd >= 0 ? plan.in_fd : plan.devnull, plan.out_fd >= 0 ? plan.out_fd : plan.devnull,
                       plan.err_fd >= 0 ? plan.err_fd : plan.devnull};
  long high[3];
  for (int i = 0; i < 3; ++i) {
    high[i] = sys(SYS_fcntl, from[i], F_DUPFD_CLOEXEC, 10);
    if (high[i] < 0) die(plan, Step::Descriptors);
  }
  for (int i = 0; i < 3; ++i)
    if (sys(SYS_dup3, high[i], i, 0) < 0) die(plan, Step::Descriptors);
  // Everything else the grader had open goes at the exec, including the control socket, whose
  // closing tells the grader the exec happened.
  if (sys(SYS_close_range, 3, ~0L & 0xffffffffL, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 65536; ++fd) sys(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  }
}

}  // namespace

void enter(const Plan& plan) noexcept {
  // The grader blocks the signals that stop it (a thread of its own waits for them): the program
  // starts with none blocked, as from a shell.
  const std::uint64_t none = 0;
  sys(SYS_rt_sigprocmask, SIG_SETMASK, p(&none), 0, sizeof none);
  // First, so that every page and process from here on is the box's.
  for (const int fd : plan.cgroup_fds)
    if (fd >= 0 && sys(SYS_write, fd, p("0"), 1) != 1) die(plan, Step::Cgroup);
  if (plan.kind == Kind::Namespaces) {
    if (plan.user_namespace) user_namespace(plan);
    network(plan);
    if (sys(SYS_sethostname, p(plan.hostname.c_str()), static_cast<long>(plan.hostname.size())) != 0 ||
        sys(SYS_setdomainname, p(plan.hostname.c_str()), static_cast<long>(plan.hostname.size())) != 0)
      die(plan, Step::Hostname);
    mounts(plan);
  }
  if (sys(SYS_setsid) < 0) die(plan, Step::Session);
  if (!plan.cwd.empty() && sys(SYS_chdir, p(plan.cwd.c_str())) != 0) die(plan, Step::WorkDir);
  for (const Plan::Limit& l : plan.limits)
    if (sys(SYS_prlimit64, 0, l.resource, p(&l.value), 0) != 0) die(plan, Step::Limit);
  if (plan.drop_bounding) {
    for (int cap = 0; cap <= plan.last_capability; ++cap)
      if (sys(SYS_prctl, PR_CAPBSET_DROP, cap) != 0 && errno != EINVAL) die(plan, Step::Capabilities);
    sys(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  }
  if (plan.change_ids) {
    if (sys(SYS_setgroups, 0, 0) != 0) die(plan, Step::Groups);
    if (sys(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0) die(plan, Step::Gid);
    if (sys(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0) die(plan, Step::Uid);
  }
  // After the ids change: changing them clears the death signal.
  if (sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL) != 0) die(plan, Step::DeathSignal);
  if (plan.kind != Kind::None && sys(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(plan, Step::NoNewPrivileges);
  standard_streams(plan);
  landlock(plan);
  if (plan.seccomp != nullptr && sys(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p(plan.seccomp), 0, 0) != 0)
    die(plan, Step::Seccomp);
  sys(SYS_execve, p(plan.sh), p(plan.argv), p(plan.envp.data()));
  die(plan, Step::Exec);
}

}  // namespace cb::sandbox::jail

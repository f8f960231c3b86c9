#include "seccomp_filter.h"

#include "cb/sandbox/beacon.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string_view>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace cb::sandbox {
namespace {

// Refused with EPERM, whatever the arguments:
// - reaching into other processes: ptrace, process_vm_*, pidfd_getfd, kcmp;
// - the mount table and namespaces (a nested user namespace would hand the program every
//   capability inside it, and the kernel code behind them): mount and its new API, pivot_root,
//   chroot, unshare, setns;
// - the machine: reboot, kexec, modules, swap, acct, quotactl, the clock, syslog, vhangup, iopl;
// - kernel surface no lab touches and exploits favour: bpf, perf_event_open, userfaultfd,
//   keyctl and its keyrings (not namespaced), open_by_handle_at.
constexpr const char* kRefused[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "syslog",
    "vhangup",
    "iopl",
    "ioperm",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "open_by_handle_at",
    "fanotify_init",
    "lookup_dcookie",
    "nfsservctl",
};
// ENOSYS, so that the runtime falls back to what it did before them: clone3 (its flags are in
// memory, where a filter cannot look, so glibc's pthread_create falls back to clone, whose flags
// it can), io_uring (libuv falls back to its thread pool).
// Memory outside any process's data: a box without a control group could hold gigabytes there
// (memory files, shared memory, the messages of System V and POSIX queues).
constexpr const char* kSharedMemory[] = {"memfd_create", "memfd_secret", "shmget", "msgget", "mq_open"};
// Every IPC object that lives in the IPC namespace rather than in a process: in the machine's own
// namespace (the fallback) each would outlive the grading, owned by a uid the next student leases.
constexpr const char* kMachineIpc[] = {"shmget",    "shmat",        "shmctl",    "msgget",       "msgsnd",
                                       "msgrcv",    "msgctl",       "semget",    "semop",        "semtimedop",
                                       "semctl",    "mq_open",      "mq_unlink", "mq_timedsend", "mq_timedreceive",
                                       "mq_notify", "mq_getsetattr"};
constexpr const char* kAbsent[] = {"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"};

constexpr unsigned long kNamespaceFlags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,   CLONE_NEWNET,
                                             CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP};

struct Built {
  std::vector<sock_filter> code;
  sock_fprog program{};
  std::string error;
};

std::string lib_error(const char* what, int rc) { return std::string("seccomp: ") + what + ": " + std::strerror(-rc); }

Built build(unsigned additions) {
  Built b;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    b.error = "seccomp: cannot start a filter";
    return b;
  }
  struct Release {
    scmp_filter_ctx c;
    ~Release() { seccomp_release(c); }
  } release{ctx};
  // A system call of another architecture's table (int 0x80 on x86_64) is how filters are
  // bypassed: it kills.
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  const auto add = [&](std::uint32_t action, const char* name, unsigned n, const scmp_arg_cmp* args) -> bool {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return true;  // not on this architecture
    const int rc = seccomp_rule_add_array(ctx, action, nr, n, args);
    if (rc != 0) b.error = lib_error(name, rc);
    return rc == 0;
  };
  if ((additions & kNoBeacon) == 0) {
    const scmp_arg_cmp arg = SCMP_A0_32(SCMP_CMP_EQ, static_cast<std::uint32_t>(kBeaconFd));
    if (!add(SCMP_ACT_ERRNO(kBeaconErrno), "close", 1, &arg)) return b;
  }
  for (const char* name : kRefused)
    if (!add(SCMP_ACT_ERRNO(EPERM), name, 0, nullptr)) return b;
  for (const char* name : kAbsent)
    if (!add(SCMP_ACT_ERRNO(ENOSYS), name, 0, nullptr)) return b;
  // A name in both lists is refused once: libseccomp takes one rule per system call and action.
  std::vector<std::string_view> ipc;
  if ((additions & kNoSharedMemory) != 0) ipc.insert(ipc.end(), std::begin(kSharedMemory), std::end(kSharedMemory));
  if ((additions & kMachineIpcNamespace) != 0) ipc.insert(ipc.end(), std::begin(kMachineIpc), std::end(kMachineIpc));
  std::sort(ipc.begin(), ipc.end());
  ipc.erase(std::unique(ipc.begin(), ipc.end()), ipc.end());
  for (const std::string_view name : ipc)
    if (!add(SCMP_ACT_ERRNO(EPERM), std::string(name).c_str(), 0, nullptr)) return b;
  // Another process's limits, priority, CPUs, I/O priority or scheduling: where the program shares
  // the grader's uid (an ordinary user's fallback), the grader's and its classmates'. Only its own
  // (0: the caller) may be changed; the argument is a pid (who, for the priorities, is the
  // second), compared on its 32 bits.
  for (const char* name : {"prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam"}) {
    const scmp_arg_cmp arg = SCMP_A0_32(SCMP_CMP_NE, 0);
    if (!add(SCMP_ACT_ERRNO(EPERM), name, 1, &arg)) return b;
  }
  for (const char* name : {"setpriority", "ioprio_set"}) {
    const scmp_arg_cmp arg = SCMP_A1_32(SCMP_CMP_NE, 0);
    if (!add(SCMP_ACT_ERRNO(EPERM), name, 1, &arg)) return b;
  }
  if ((additions & kTcpOnly) != 0) {
    const scmp_arg_cmp unix_domain = SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX);
    if (!add(SCMP_ACT_ERRNO(EPERM), "socket", 1, &unix_domain)) return b;
    for (const int family : {AF_INET, AF_INET6}) {
      // The type's low four bits (SOCK_NONBLOCK and SOCK_CLOEXEC are above them).
      const scmp_arg_cmp args[2] = {SCMP_A0_32(SCMP_CMP_EQ, static_cast<std::uint32_t>(family)),
                                    SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM)};
      if (!add(SCMP_ACT_ERRNO(EPERM), "socket", 2, args)) return b;
    }
  }
  // clone with any namespace flag; plain forks and threads pass.
  for (unsigned long flag : kNamespaceFlags) {
    const scmp_arg_cmp arg = SCMP_A0_64(SCMP_CMP_MASKED_EQ, flag, flag);
    if (!add(SCMP_ACT_ERRNO(EPERM), "clone", 1, &arg)) return b;
  }
  // Typing into a terminal (TIOCSTI pushes input into it; TIOCLINUX can too, on a console).
  // The request is compared on its low 32 bits: an int passed as the request can arrive with
  // anything above them.
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI), static_cast<unsigned long>(TIOCLINUX)}) {
    const scmp_arg_cmp arg = SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffUL, request);
    if (!add(SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &arg)) return b;
  }
  // kill(-1, ...): every process the program may signal. In the sandbox that is only its own;
  // in the fallback without a uid of its own it would be the grader and the batch.
  {
    const scmp_arg_cmp arg = SCMP_A0_64(SCMP_CMP_MASKED_EQ, 0xffffffffUL, 0xffffffffUL);
    if (!add(SCMP_ACT_ERRNO(EPERM), "kill", 1, &arg)) return b;
  }

  // The program as the kernel reads it, through a memory file (libseccomp 2.5 exports to a
  // descriptor only).
  const int fd = ::memfd_create("cb-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    b.error = std::string("seccomp: memfd_create: ") + std::strerror(errno);
    return b;
  }
  if (const int rc = seccomp_export_bpf(ctx, fd); rc != 0) {
    ::close(fd);
    b.error = lib_error("export", rc);
    return b;
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    ::close(fd);
    b.error = "seccomp: the exported filter has an odd size";
    return b;
  }
  b.code.resize(static_cast<std::size_t>(size) / sizeof(sock_filter));
  const ssize_t got = ::pread(fd, b.code.data(), static_cast<std::size_t>(size), 0);
  ::close(fd);
  if (got != size) {
    b.error = "seccomp: cannot read the exported filter back";
    b.code.clear();
    return b;
  }
  b.program.len = static_cast<unsigned short>(b.code.size());
  b.program.filter = b.code.data();
  return b;
}

}  // namespace

Result<const sock_fprog*> syscall_filter(unsigned additions) {
  // Built the first time each combination is asked for, then kept for every later start.
  static std::mutex mu;
  static std::array<std::unique_ptr<Built>, 16> built;
  const std::lock_guard lock(mu);
  auto& b = built.at(additions & 15U);
  if (!b) {
    b = std::make_unique<Built>(build(additions & 15U));
    b->program.filter = b->code.data();  // where the code now lives
  }
  if (!b->error.empty()) return Error{b->error};
  return &b->program;
}

}  // namespace cb::sandbox

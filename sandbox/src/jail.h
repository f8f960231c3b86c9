#pragma once
// The child's side of a start: everything between the clone and the exec, as data the parent
// builds first. The grader has threads, so the child of its clone may not allocate, take a lock
// or call into glibc functions that assume the threads it copied still exist (setresuid would
// wait for them). It makes raw system calls on this plan and nothing else; a step that fails is
// sent back as numbers (which step, which entry, errno) for the parent to put into words.

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cb/sandbox/policy.h"

namespace cb::sandbox::jail {

enum class Step : std::int32_t {
  Cgroup,
  Dumpable,
  SetGroupsFile,
  UidMap,
  GidMap,
  Loopback,
  Socket,
  Bind,
  Listen,
  SendSocket,
  WaitForGo,
  Hostname,
  PrivateMounts,
  BaseTmpfs,
  PivotToBase,
  MountStep,
  HideHost,
  PivotToRoot,
  WorkDir,
  Limit,
  Capabilities,
  Groups,
  Gid,
  Uid,
  Session,
  DeathSignal,
  NoNewPrivileges,
  Descriptors,
  Landlock,
  Seccomp,
  Exec,
};
[[nodiscard]] const char* step_name(Step step) noexcept;

// One step of building the new root, in order. Targets are under /newroot, sources under
// /oldroot (the host's root, until it is let go).
struct MountOp {
  enum class Kind : std::uint8_t { Dir, File, Symlink, Bind, Tmpfs, Proc, ReadOnly };
  Kind kind = Kind::Dir;
  std::string source;  // Bind: what; Symlink: the link's text
  std::string target;
  std::string options;  // Tmpfs: mount data ("mode=1777,size=...")
  bool read_only = false;
  bool recursive = false;
  bool devices = false;  // Bind: device nodes work through it (/dev/null and friends)
};

struct LandlockRule {
  std::string path;
  std::uint64_t access = 0;
};

// What the parent hears on the control socket.
struct Message {
  enum : std::int32_t { Listening = 1, Failed = 2 };
  std::int32_t kind = 0;
  std::int32_t step = 0;
  std::int32_t index = -1;  // the MountOp or LandlockRule, for MountStep and Landlock
  std::int32_t error = 0;   // errno
};

struct Plan {
  Kind kind = Kind::None;
  int control = -1;  // the child's end of the control socket (close-on-exec)
  // The box's control group: cgroup.procs of each hierarchy (memory, pids, cpu), joined first
  // (-1: none).
  int cgroup_fds[4] = {-1, -1, -1, -1};

  // Namespaces: the user namespace's maps, written by the child itself (one id each, its own).
  bool user_namespace = false;
  std::string uid_map, gid_map;
  // The lab's server: a socket bound and listening inside the new network, handed back.
  bool listen = false;
  sockaddr_storage address{};
  socklen_t address_length = 0;
  std::string hostname = "cb-sandbox";
  std::vector<MountOp> mounts;

  // Both sandboxes.
  struct Limit {
    int resource;
    rlimit value;
  };
  std::vector<Limit> limits;
  int last_capability = 40;  // /proc/sys/kernel/cap_last_cap
  bool drop_bounding = false;
  bool change_ids = false;  // root: become uid/gid, with no supplementary groups
  uid_t uid = 0;
  gid_t gid = 0;
  // The fallback: Landlock (ABI 0: none).
  int landlock_abi = 0;
  std::uint64_t landlock_fs = 0;  // rights handled (everything not granted below is denied)
  std::uint64_t landlock_net = 0;
  std::uint64_t landlock_scope = 0;
  std::vector<LandlockRule> landlock_rules;
  int landlock_port = -1;  // the one TCP port it may connect to
  const sock_fprog* seccomp = nullptr;

  // The program.
  std::string cwd;
  int in_fd = -1, out_fd = -1, err_fd = -1;
  int devnull = -1;
  std::string command;
  std::vector<std::string> env;
  // Pointers into the strings above, made by seal() once nothing moves any more.
  std::vector<char*> envp;
  char sh[8] = "/bin/sh";
  char dash_c[3] = "-c";
  char* argv[4] = {nullptr, nullptr, nullptr, nullptr};
  void seal();
};

// In the child, right after the clone: never returns (the program runs, or the child exits with
// 126 having told the parent why).
[[noreturn]] void enter(const Plan& plan) noexcept;

}  // namespace cb::sandbox::jail

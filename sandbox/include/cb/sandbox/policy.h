#pragma once
// What the grader asks of the sandbox (a Policy), and what a program actually ran under (a
// Containment), as plain values: the report carries the second.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"
#include "cb/sandbox/limits.h"

namespace cb::sandbox {

// --sandbox: auto (the full sandbox where the kernel allows it, else the fallback, saying why),
// strict (the full sandbox or nothing), fallback (forced: what a container without namespaces
// gives), none (no containment at all: for debugging a grader; the report says not to trust it).
enum class Mode { Auto, Strict, Fallback, None };
[[nodiscard]] Result<Mode> parse_mode(std::string_view text);
[[nodiscard]] std::string_view to_string(Mode mode) noexcept;

// What a program ran under.
//   Namespaces: its own user (where the grader is not root), mount, PID, network, UTS and IPC
//               namespaces; a private copy of its submission; loopback only.
//   Fallback:   no namespaces (the kernel or a container refused them): a uid of its own when
//               the grader is root, a session of its own, the limits, Landlock where the kernel
//               has it, the same system-call filter.
//   None:       as the grader itself.
enum class Kind { Namespaces, Fallback, None };
[[nodiscard]] std::string_view to_string(Kind kind) noexcept;  // "namespaces", "fallback", "none"

struct Policy {
  Mode mode = Mode::Auto;
  Limits limits;
  // A grader run as root gives each box a uid of its own from this range (isolate's choice of
  // numbers), leased so that two graders on one machine never share one.
  uid_t first_uid = 60000;
  unsigned uid_count = 1000;
  // NAME=value set in every graded program's environment, on top of the sandbox's own
  // (--program-env); CB_SERVER and CB_DIR are the grader's and always win.
  std::vector<std::string> env;
  // The project's own programs (cb-lab, cb-grade) may run in a box and answer for the program
  // there: only where the grading allows a copy of the harness as the student's breaker
  // (refuse_prebuilt none). Otherwise the box's filter tells them where they are (beacon.h).
  bool harness_may_answer = false;
};

struct Containment {
  Kind kind = Kind::None;
  uid_t uid = 0;         // the program's uid as the machine sees it
  uid_t uid_inside = 0;  // as the program sees it (differs in a user namespace)
  bool own_uid = false;  // not the grader's uid
  bool user_namespace = false;
  bool own_network = false;  // a network namespace with loopback only
  bool seccomp = false;
  int landlock_abi = 0;  // Landlock's ABI version applied (fallback), 0 when none
  std::string why;       // why not the full sandbox (fallback), or "asked for" (none)
  Limits limits;
  // What held its memory: a control group of the box (its version; the whole box's memory, as
  // the kernel counts it), else RLIMIT_DATA on each process, and why no group could be had.
  int cgroup_version = 0;
  // The box is one scheduling entity of its own (a cpu group), weighted as every other box.
  bool cpu_group = false;
  std::string no_cgroup_why;
  // What held the box's size: a tmpfs of it (the kernel refuses past it), else the grader's count
  // while the program ran (and why no tmpfs).
  bool box_tmpfs = false;
  std::string box_unbounded_why;
  // "cgroup v2", "cgroup v1", "RLIMIT_DATA" or "none": the report's name for it.
  [[nodiscard]] std::string memory_bound() const;
  [[nodiscard]] bool trusted() const noexcept { return kind != Kind::None; }
  // One line for a person: "namespaces (uid 60001, own network, ...)".
  [[nodiscard]] std::string describe() const;
};

}  // namespace cb::sandbox

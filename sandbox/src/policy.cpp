#include "cb/sandbox/policy.h"

namespace cb::sandbox {

Result<Mode> parse_mode(std::string_view text) {
  if (text == "auto") return Mode::Auto;
  if (text == "strict") return Mode::Strict;
  if (text == "fallback") return Mode::Fallback;
  if (text == "none") return Mode::None;
  return Error{"'" + std::string(text) + "' is not one of auto, strict, fallback, none"};
}

std::string_view to_string(Mode mode) noexcept {
  switch (mode) {
    case Mode::Auto: return "auto";
    case Mode::Strict: return "strict";
    case Mode::Fallback: return "fallback";
    case Mode::None: return "none";
  }
  return "auto";
}

std::string_view to_string(Kind kind) noexcept {
  switch (kind) {
    case Kind::Namespaces: return "namespaces";
    case Kind::Fallback: return "fallback";
    case Kind::None: return "none";
  }
  return "none";
}

std::string Containment::memory_bound() const {
  if (kind == Kind::None) return "none";
  if (cgroup_version > 0) return "cgroup v" + std::to_string(cgroup_version);
  return limits.memory_bytes == kUnlimited ? "none" : "RLIMIT_DATA";
}

std::string Containment::describe() const {
  if (kind == Kind::None)
    return "none (" + why + "): the program ran as the grader and could reach all it can; do not trust this grade";
  std::string s(to_string(kind));
  s += " (";
  if (kind == Kind::Fallback) s += why + "; ";
  s += "uid " + std::to_string(uid);
  if (user_namespace) s += ", " + std::to_string(uid_inside) + " inside its user namespace";
  s += own_uid          ? ", its own"
       : user_namespace ? ", the grader's"
                        : ", the grader's, shared with every program it grades";
  if (kind == Kind::Namespaces)
    s += "; its own mount, PID, network (loopback only), UTS and IPC namespaces";
  else
    s += "; a session of its own";
  if (kind == Kind::Fallback)
    s += landlock_abi > 0 ? "; Landlock ABI " + std::to_string(landlock_abi) : "; no Landlock (the kernel has none)";
  if (seccomp) s += "; system calls filtered";
  s += "; limits: " + size_text(limits.memory_bytes);
  if (cgroup_version > 0)
    s += " of memory for the box (cgroup v" + std::to_string(cgroup_version) + ")";
  else if (limits.memory_bytes != kUnlimited)
    s += " of data a process (RLIMIT_DATA; no cgroup: " + no_cgroup_why +
         "; memory files, shared memory and message queues refused; socket buffers not counted)";
  else
    s += " memory";
  s += ", " + std::to_string(limits.processes) + " processes, a box of " + size_text(limits.box_bytes) + " and " +
       std::to_string(limits.box_files) + " files (" + (box_tmpfs ? "a tmpfs" : "counted: " + box_unbounded_why) +
       "), " + std::to_string(limits.open_files) + " open files, files up to " + size_text(limits.file_bytes) + ", " +
       std::to_string(limits.cpu.count()) + " s of CPU" +
       (cpu_group ? ", an even share of the CPU beside the other boxes, however many processes it runs)" : ")");
  return s;
}

}  // namespace cb::sandbox

#pragma once
// From what to run and in which box, the plan its child carries out (jail.h): the new root's
// mounts, who it is, its limits, Landlock's rules, its environment; and the start that carries it
// out and talks with the child until the program runs.

#include "cb/result.h"
#include "cb/sandbox/box.h"
#include "cb/sandbox/child.h"
#include "cb/sandbox/policy.h"
#include "jail.h"

namespace cb::sandbox {

// The uid and gid a program sees in a user namespace (the grader not root).
inline constexpr unsigned kInsideId = 1000;

// `real` (a path with its links resolved) lies in the system's folders every program sees.
[[nodiscard]] bool in_system_dirs(const std::string& real);

// Landlock's ABI on this kernel (0: none), asked once.
[[nodiscard]] int landlock_version();

// Not sealed (jail::Plan::seal): it is moved on.
[[nodiscard]] Result<jail::Plan> make_plan(const Policy& policy, Kind kind, const Box& box, const Program& program);

// Clones the child in `kind`'s namespaces, serves its socket, and returns once its program runs.
[[nodiscard]] Result<Child, StartError> launch(const Policy& policy, Kind kind, const Box& box, const Program& program);

}  // namespace cb::sandbox

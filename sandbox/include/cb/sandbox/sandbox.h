#pragma once
// The sandbox every graded program runs in. A graded program is hostile: it gets its box (a copy
// of its submission, its output directory, a private /tmp), the system read-only, its own
// loopback with the lab's server on it, a uid of its own and the limits, and nothing else.
// docs/GRADER.md has the table of what it can and cannot do, each row a test.
//
// The kernel decides what can be had: the first box probes it with a whole start of an empty
// program in the full sandbox; where that is refused (a container without namespaces, user
// namespaces turned off), `auto` runs everything in the fallback and every report says why.

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cb/result.h"
#include "cb/sandbox/box.h"
#include "cb/sandbox/child.h"
#include "cb/sandbox/policy.h"

namespace cb::sandbox {

class Sandbox {
 public:
  explicit Sandbox(Policy policy) : policy_(std::move(policy)) {}

  [[nodiscard]] const Policy& policy() const noexcept { return policy_; }

  // A box for one submission: `out_dir` is where its programs are told to write (empty: they
  // write nothing the grader reads). Errors: the copy (too large, unreadable), no uid free, or
  // under `strict`, no full sandbox.
  [[nodiscard]] Result<std::unique_ptr<Box>, BoxError> box(const std::string& submission, const std::string& out_dir);

  // What every program of this sandbox runs in (the probe's decision, made once). Errors: under
  // `strict`, no full sandbox.
  [[nodiscard]] Result<Kind> kind();

  // Why a program graded from `submission` could read the file at `path` (a secret of the
  // grader's, such as a course key), or nothing when none could: the programs' view (the
  // system's folders and their box, a copy of the submission), their uid (the grader's in the
  // user modes) and the file's permissions.
  [[nodiscard]] std::optional<std::string> readable_by_programs(const std::string& path, const std::string& submission);

  // What the box's programs run under, for the report.
  [[nodiscard]] Containment containment(const Box& box);

  // Starts the program in the box. It has begun to run (past the sandbox's set-up) when this
  // returns; a set-up step that fails is an error naming it, and says when what the box already
  // runs kept it from starting (StartError::box_full).
  [[nodiscard]] Result<Child, StartError> start(const Box& box, const Program& program);

  // Where the box's programs are told to write, and where they work, as they see it.
  [[nodiscard]] std::string visible_out(const Box& box);
  [[nodiscard]] std::string visible_cwd(const Box& box);

 private:
  struct Decision {
    Kind kind = Kind::None;
    std::string why;  // why not Namespaces
  };
  Result<Decision> decide();
  Decision probe();

  Policy policy_;
  std::mutex mu_;
  std::optional<Decision> decision_;
};

}  // namespace cb::sandbox

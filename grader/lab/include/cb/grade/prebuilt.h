#pragma once
// A submission graded on a breaker of its own, not on a copy of this project's: cb-lab answers
// the conformance protocol with the project's engine (`cb-lab conform`), and a submission whose
// replay.sh runs a copy of it would pass as the student's work. Every build of cb-lab and
// cb-grade carries kHarnessMark, the same in all of them; a file of the submission that holds it
// is such a copy, whatever its name or build.

#include <optional>
#include <string>
#include <string_view>

#include "cb/dir_handle.h"
#include "cb/result.h"

namespace cb::grade {

// The same in every build of the project's programs: what is searched for. (Changing it makes
// copies of older builds unrecognisable.)
inline constexpr char kHarnessMark[] = "cb-lab harness mark: 1f6e0c7a-93b2-4d55-a8e1-5c0d2b7f9e41";

// What a submission may not hand in ready-made (the rubric's "refuse_prebuilt", --refuse-prebuilt).
enum class Prebuilt {
  HarnessRefused,  // "harness", the default: a copy of cb-lab or cb-grade fails the conformance part
  AllRefused,      // "all": any executable file (ELF) does; programs are built from their sources in the box
  NoneRefused,     // "none": nothing is looked for (the project's own tests drive cb-lab as a breaker)
};
// "harness", "all", "none"; errors say what was expected.
[[nodiscard]] Result<Prebuilt> parse_prebuilt(std::string_view text);

// The first file under `root` (a box's copy of the submission, walked without following a
// link) that Prebuilt refuses, as a path below it, or nothing.
[[nodiscard]] std::optional<std::string> prebuilt_in(const DirHandle& root, Prebuilt rule);

// The sentence the conformance part fails with.
[[nodiscard]] std::string prebuilt_reason(const std::string& path, Prebuilt rule);

}  // namespace cb::grade

#pragma once
// What a grade was given by: the grader's version and the lab it graded against. Every report
// and gradebook row carries both, so a regrade can say whether a changed verdict came from a
// changed grader or a changed lab (LabSpec::sha256), and an instructor can tell two runs apart.

#include <string_view>

namespace cb::grade {

// "0.1.0+g1a2b3c4d5e": the project's version and the commit it was built from (when built in a
// git checkout; "+dirty" when it had uncommitted changes).
[[nodiscard]] std::string_view grader_version() noexcept;

}  // namespace cb::grade

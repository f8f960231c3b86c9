#pragma once
// Test-only: in a sanitizer build, the project's own programs carry the sanitizer. Where the
// grader runs one in its sandbox it needs room for the sanitizer's shadow memory (terabytes of
// address space) and must do without LeakSanitizer, which stops the world with ptrace, a call
// the sandbox refuses. Elsewhere nothing is added.

#include <string>
#include <vector>

namespace cb::testing {

inline std::vector<std::string> sanitized_program_flags() {
  if (CB_SANITIZED == 0) return {};
  return {"--limit-memory", "unlimited", "--program-env", "ASAN_OPTIONS=detect_leaks=0"};
}

}  // namespace cb::testing

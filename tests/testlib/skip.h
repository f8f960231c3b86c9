#pragma once
// A test that cannot run here (not root, no control group) says so: under ctest it ends its
// process with the code ctest counts as skipped (each test case runs alone there, and CMake sets
// CB_TEST_SKIP_CODE); run by hand it logs why and the case returns.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace cb::testing {

// True when the case must stop: `if (skip_unless(am_root(), "not root")) return;`
inline bool skip_unless(bool can_run, const std::string& why) {
  if (can_run) return false;
  if (const char* code = std::getenv("CB_TEST_SKIP_CODE"); code != nullptr) {
    std::printf("skipped: %s\n", why.c_str());
    std::fflush(stdout);
    std::_Exit(std::atoi(code));
  }
  MESSAGE("skipped: " << why);
  return true;
}

}  // namespace cb::testing

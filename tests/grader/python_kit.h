#pragma once
// The student the class tests grade: a Python kit as cb-lab init makes it, with the reference
// rules (tests/kits/python/breaker.py), and one line of them changed (a classic mistake) when
// `from` is not empty.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "process.h"

namespace cb::testing {

inline void python_kit(const std::string& dir, const std::string& from = "", const std::string& to = "") {
  REQUIRE(run({CB_LAB_BIN, "init", dir, "--lang", "python"}).exit_code == 0);
  std::ifstream in(std::string(CB_KIT_REFERENCE) + "/python/breaker.py");
  std::string rules((std::istreambuf_iterator<char>(in)), {});
  if (!from.empty()) {
    const auto at = rules.find(from);
    REQUIRE(at != std::string::npos);
    rules.replace(at, from.size(), to);
  }
  std::ofstream(dir + "/breaker.py") << rules;
}

}  // namespace cb::testing

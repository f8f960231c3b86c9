#pragma once

#include <array>
#include <string_view>

#include "cb/grade/lab_spec.h"
#include "cb/result.h"

namespace cb::grade {

// Points per step. Equal by default (one each); a rubric file can weigh them:
//   {"points": {"1": 5, "2": 10, ..., "conformance": 20}}   (parts left out keep one point)
struct Rubric {
  std::array<double, kGradedSteps + 1> points{};  // [1..kGradedSteps]
  double conformance = 1;                         // --conformance, all or nothing
  [[nodiscard]] static Rubric equal();
  [[nodiscard]] static Result<Rubric> parse(std::string_view json);
};

}  // namespace cb::grade

#include "cb/grade/rubric.h"

#include <cmath>

#include "json_limits.h"

namespace cb::grade {

Rubric Rubric::equal() {
  Rubric r;
  for (int s = 1; s <= kGradedSteps; ++s) r.points[static_cast<std::size_t>(s)] = 1.0;
  return r;
}

Result<Rubric> Rubric::parse(std::string_view text) {
  auto j = parse_bounded_json(text, 4);
  if (!j) return Error{"rubric: " + j.error().message};
  if (!j->is_object() || !j->contains("points") || !(*j)["points"].is_object())
    return Error{"rubric: expected {\"points\": {\"1\": <points>, ...}}"};
  Rubric r = equal();
  for (const auto& [key, value] : (*j)["points"].items()) {
    const bool step = key.size() == 1 && key[0] >= '1' && key[0] < '1' + kGradedSteps;
    if (!step && key != "conformance")
      return Error{"rubric: points.\"" + key.substr(0, 20) + "\": the parts are steps \"1\" to \"" +
                   std::to_string(kGradedSteps) + "\" and \"conformance\""};
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
      return Error{"rubric: points.\"" + key + "\": expected a number of points, 0 or more"};
    (step ? r.points[static_cast<std::size_t>(key[0] - '0')] : r.conformance) = value.get<double>();
  }
  return r;
}

}  // namespace cb::grade

#pragma once
// Test-only: a cb-grade JSON report's checks by id, from whichever step holds them.

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cb::testing {

inline std::map<std::string, nlohmann::json> checks_by_id(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> checks;
  for (const auto& step : report["steps"])
    for (const auto& c : step["checks"]) checks[c["id"].get<std::string>()] = c;
  return checks;
}

}  // namespace cb::testing

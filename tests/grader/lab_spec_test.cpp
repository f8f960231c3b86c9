// The grader's specification of the lab (lab_spec.h) against the scenario the lab really runs
// (scenarios/lab.json): the same steps, titles, numbers, files and paths, so neither can drift.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cb/grade/lab_spec.h"

namespace cb::grade {
namespace {

nlohmann::json lab_scenario() {
  std::ifstream f(std::string(CB_SCENARIOS) + "/lab.json");
  std::stringstream s;
  s << f.rdbuf();
  return nlohmann::json::parse(s.str());
}

// The step's first action of `kind` (with `path`, when given).
nlohmann::json action(const nlohmann::json& step, const std::string& kind, const std::string& path = {}) {
  for (const auto& a : step["do"])
    if (a["action"] == kind && (path.empty() || a.value("path", "") == path)) return a;
  return nullptr;
}

TEST_CASE("lab spec: the steps and titles are the scenario's") {
  const auto s = lab_scenario();
  REQUIRE(s["steps"].size() == static_cast<std::size_t>(lab::kSteps));
  for (int n = 1; n <= lab::kSteps; ++n) {
    CAPTURE(n);
    CHECK(s["steps"][static_cast<std::size_t>(n - 1)]["title"].get<std::string>() == lab::step_title(n));
  }
}

TEST_CASE("lab spec: the numbers are the scenario's") {
  const auto s = lab_scenario();
  const auto& st = s["steps"];
  CHECK(action(st[1], "call", std::string(lab::kFastPath))["times"] == lab::kFast);
  CHECK(action(st[2], "call", std::string(lab::kFailPath))["times"] == lab::kBurst);
  CHECK(action(st[3], "call", std::string(lab::kFailPath))["times"] == lab::kBlocked);
  CHECK(action(st[6], "call", std::string(lab::kBadPath))["times"] == lab::kBad);
  CHECK(s["breakers"]["main"]["wait_in_open"] == std::to_string(static_cast<int>(lab::kWaitMs / 1000)) + "s");
  CHECK(s["breakers"]["main"]["profile"] == "lab");
}

TEST_CASE("lab spec: the files are the ones the scenario writes") {
  const auto s = lab_scenario();
  std::set<std::string> written;
  for (const auto& step : s["steps"])
    for (const auto& a : step["do"])
      if (a.contains("file")) written.insert(a["file"].get<std::string>());
  std::set<std::string> known;
  for (auto f : lab::kFiles) known.insert(std::string(f));
  CHECK(written == known);
}

TEST_CASE("lab spec: every check is well formed") {
  std::set<std::string_view> ids;
  for (const lab::CheckSpec& c : lab::checks()) {
    CAPTURE(c.id);
    CHECK(ids.insert(c.id).second);  // unique
    CHECK(c.id.rfind("s" + std::to_string(c.step) + ".", 0) == 0);
    CHECK(c.step >= 1);
    CHECK(c.step <= lab::kSteps);
    CHECK(!c.title.empty());
    // A prerequisite is the server's record, a file, or an earlier check of the same step.
    for (std::string_view need : c.needs) {
      CAPTURE(need);
      if (need == "record" || need == "server" || need.rfind("file:", 0) == 0) continue;
      const lab::CheckSpec* n = lab::find_check(need);
      REQUIRE(n != nullptr);
      CHECK(n->step == c.step);
      CHECK(ids.count(need) == 1);
    }
    // It needs the server when it reads the record, or stands on a check that does.
    const bool on_server = std::any_of(c.needs.begin(), c.needs.end(), [](std::string_view need) {
      if (need == "record" || need == "server") return true;
      const lab::CheckSpec* n = lab::find_check(need);
      return n != nullptr && n->needs_server;
    });
    CHECK(c.needs_server == on_server);
  }
}

}  // namespace
}  // namespace cb::grade

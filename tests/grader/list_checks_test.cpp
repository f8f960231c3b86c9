// cb-grade --list-checks is the catalogue of checks, and docs/GRADER.md's table is its output.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cb/grade/grade.h"
#include "cb/grade/lab_spec.h"
#include "process.h"

namespace cb::grade {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("catalogue: cb-grade --list-checks is docs/GRADER.md's table of every check") {
  const auto listed = cb::testing::run({CB_GRADE_BIN, "--list-checks"});
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out == list_checks(lab_spec(), false));
  const std::string doc = slurp(std::string(CB_SOURCE_DIR) + "/docs/GRADER.md");
  const std::string open = "<!-- cb-grade --list-checks -->\n";
  const auto from = doc.find(open);
  const auto to = doc.find("<!-- end -->", from);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  CHECK_MESSAGE(doc.substr(from + open.size(), to - from - open.size()) == listed.out,
                "docs/GRADER.md's table is not cb-grade --list-checks' output: paste it again");
  const auto json = nlohmann::json::parse(cb::testing::run({CB_GRADE_BIN, "--list-checks", "--format", "json"}).out);
  REQUIRE(json.is_array());
  CHECK(json.size() == 41);
  CHECK(json[0]["id"] == "s1.server");
  CHECK(json.back()["id"] == "s8.seen");
}

}  // namespace
}  // namespace cb::grade

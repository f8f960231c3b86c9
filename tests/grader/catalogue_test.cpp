// The catalogue of checks is open to one more check with one definition, which then runs, skips
// its dependants when it does not pass, and is listed (list_checks_test.cpp: --list-checks and
// docs/GRADER.md's table).
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cb/grade/check.h"
#include "cb/grade/grade.h"
#include "cb/grade/judge.h"
#include "evidence_of.h"

namespace cb::grade {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One more check for step 2, and one that stands on it: as a course adding a rule would write them.
void never_passes(CheckVerdict& v, const Inputs&, bool) { v.fail("the extra rule is never met"); }
void stands_on_it(CheckVerdict& v, const Inputs&, bool) { v.pass(); }
constexpr CheckDef kExtra{"s2.extra_rule", When::Always, "an extra rule of {window} calls", never_passes, {}};
constexpr CheckDef kAfterExtra{
    "s2.after_extra", When::Always, "a rule that stands on it", stands_on_it, {after(kExtra)}};

TEST_CASE("catalogue: a check added with one definition runs, skips its dependants, and is listed") {
  const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
  auto files = SubmissionDir::open(good);
  REQUIRE(files.ok());
  auto record = parse_record(slurp(good + "/record.json"));
  REQUIRE(record.ok());
  const ExtraCheck extra(2, kExtra);
  const ExtraCheck after_it(2, kAfterExtra);
  const Report r = judge(cb::testing::evidence_of(*files, *record), GradeOptions{});
  const StepReport& step2 = r.steps[1];
  REQUIRE(step2.checks.size() >= 2);
  const Check& ran = step2.checks[step2.checks.size() - 2];
  const Check& skipped = step2.checks.back();
  CHECK(ran.id == "s2.extra_rule");
  CHECK(ran.name == "an extra rule of 10 calls");
  CHECK(ran.status == Status::Fail);
  CHECK(skipped.id == "s2.after_extra");
  CHECK(skipped.status == Status::Skip);
  CHECK(skipped.message == "not judged: it stands on s2.extra_rule, which did not pass: the extra rule is never met");
  CHECK(step2.status == Status::Fail);
  CHECK(list_checks(lab_spec(), false)
            .find("| 2 | `s2.after_extra` | always | s2.extra_rule | a rule that stands on it |") != std::string::npos);
}

}  // namespace
}  // namespace cb::grade

// A stamp is worth its last digit: a right run whose transitions.log is stamped in whole seconds,
// milliseconds or microseconds gets one verdict at each resolution, wherever in its second the
// run happened to fall. Each case moves a saved run (its record and its log together) by an
// offset inside the second, writes the log's stamps truncated to the resolution as a breaker
// would, and grades it again: no check's status may move with the offset. (A whole-second log
// once failed step 5 on 4 gradings in 10 of the same folder: :50Z -> :53Z read as exactly 3 s.)
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cb/grade/grade.h"
#include "cb/grade/variant.h"
#include "evidence_of.h"
#include "cb/utc_time.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

namespace fs = std::filesystem;
using cb::testing::slurp;
using cb::testing::TempDir;

// The saved run moved by `shift_us`: the record's wall times, and the log's stamps written
// with `digits` after the second (0: whole seconds), truncated as a clock read then would be.
struct Moved {
  Record record;
  std::string log;
};
Moved moved(const std::string& fixture, std::int64_t shift_us, int digits) {
  nlohmann::json record = nlohmann::json::parse(slurp(fixture + "/record.json"));
  for (auto& e : record["entries"]) e["wall"] = format_utc(*parse_utc(e["wall"].get<std::string>()) + shift_us, 6);
  auto parsed = parse_record(record.dump());
  REQUIRE(parsed.ok());
  std::int64_t unit = 1;
  for (int d = digits; d < 6; ++d) unit *= 10;
  std::string log;
  std::istringstream in(slurp(fixture + "/transitions.log"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const std::int64_t at = *parse_utc(line.substr(0, line.find(' '))) + shift_us;
    std::string stamp = format_utc(at / unit * unit, digits == 0 ? 3 : digits);
    if (digits == 0) stamp.erase(stamp.size() - 5, 4);  // ".000Z" -> "Z": a whole-second stamp
    log += stamp + line.substr(line.find(' ')) + "\n";
  }
  return {std::move(*parsed), log};
}

std::map<std::string, std::string> statuses(const std::string& fixture, const Moved& run,
                                            const std::shared_ptr<const LabSpec>& spec) {
  TempDir dir;
  for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json"}) fs::copy_file(fixture + "/" + f, dir / f);
  dir.write("transitions.log", run.log);
  auto sub = SubmissionDir::open(dir.path());
  REQUIRE(sub.ok());
  GradeOptions options;
  options.spec = spec;
  const Report report = grade_steps(cb::testing::evidence_of(*sub, run.record, ""), options);
  std::map<std::string, std::string> out;
  for (const StepReport& s : report.steps)
    for (const Check& c : s.checks) out[c.id] = to_string(c.status);
  return out;
}

void one_verdict_per_resolution(const std::shared_ptr<const LabSpec>& spec) {
  const std::string fixture = std::string(CB_FIXTURES) + "/submissions/good";
  for (int digits : {0, 3, 6}) {
    CAPTURE(digits);
    std::optional<std::map<std::string, std::string>> first;
    // Every 50 ms of the second, and a few offsets that fall between the record's milliseconds.
    std::vector<std::int64_t> shifts;
    for (std::int64_t ms = 0; ms < 1000; ms += 50) shifts.push_back(ms * 1000);
    for (std::int64_t us : {123'457, 851'999, 948'001, 999'999}) shifts.push_back(us);
    for (const std::int64_t shift : shifts) {
      CAPTURE(shift);
      const Moved run = moved(fixture, shift, digits);
      CAPTURE(run.log);
      const auto got = statuses(fixture, run, spec);
      if (!first) first = got;
      std::string differs;
      for (const auto& [id, status] : got)
        if (first->at(id) != status) differs += id + ": " + first->at(id) + " -> " + status + "\n";
      CAPTURE(differs);
      CHECK(differs.empty());
    }
  }
}

TEST_CASE("stamps at their resolution: one verdict at each resolution, wherever in its second the run fell") {
  SUBCASE("the handout's numbers") { one_verdict_per_resolution(std::make_shared<const LabSpec>(lab_spec())); }
  SUBCASE("a cool-down that is no whole number of seconds (3.05 s; the run waited 3.052 s)") {
    // Stamped in whole seconds, the wait reads 3 s or 4 s: 3 is a reading the stamps allow, and
    // so is 3.999, so it passes (with a note); it must not fail on the offsets that read 3.
    LabNumbers n = numbers_of(lab_spec());
    n.wait_ms = 3050;
    auto spec = with_numbers(lab_spec(), n, "");
    REQUIRE(spec.ok());
    one_verdict_per_resolution(std::make_shared<const LabSpec>(std::move(*spec)));
  }
}

TEST_CASE("stamps at their resolution: a wait no reading of the stamps allows still fails") {
  // The same run against a 5 s cool-down: it waited 3.052 s, so its whole-second stamps read 3 s
  // or 4 s apart, and no reading of either (at most 4.999 s) waits 5 s: it fails at every offset.
  LabNumbers n = numbers_of(lab_spec());
  n.wait_ms = 5000;
  auto spec = with_numbers(lab_spec(), n, "");
  REQUIRE(spec.ok());
  const auto shared = std::make_shared<const LabSpec>(std::move(*spec));
  const std::string fixture = std::string(CB_FIXTURES) + "/submissions/good";
  for (std::int64_t ms = 0; ms < 1000; ms += 100) {
    CAPTURE(ms);
    CHECK(statuses(fixture, moved(fixture, ms * 1000, 0), shared).at("s5.log_wait") == "fail");
  }
}

}  // namespace
}  // namespace cb::grade

// judge() reads only the evidence: what gather() (and a regrade) read of the lab's files, each once,
// and never the folder they were in. A folder changed after the evidence was taken changes no
// verdict.
#include <doctest/doctest.h>

#include <filesystem>

#include "cb/grade/gather.h"
#include "cb/grade/judge.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

using cb::testing::slurp;
using cb::testing::TempDir;

TEST_CASE("evidence only: the files gather() found in a folder are judged as found, whatever the folder holds after") {
  const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
  TempDir dir;
  // Copied with their times: the grader places the files' times among the record's requests.
  for (const char* name : {"state.json", "fastfail.txt", "ignore4xx.json", "transitions.log"}) {
    std::filesystem::copy_file(good + "/" + name, dir / name);
    std::filesystem::last_write_time(dir / name, std::filesystem::last_write_time(good + "/" + name));
  }
  auto record = parse_record(slurp(good + "/record.json"));
  REQUIRE(record.ok());
  auto opened = SubmissionDir::open(dir.path());
  REQUIRE(opened.ok());
  Submission s;
  s.found = files_and_record(std::move(*opened), *record);
  auto evidence = gather(std::move(s), nullptr);
  REQUIRE(evidence.ok());
  // After the evidence was taken: every file wrong, one of them gone.
  dir.write("state.json", "{\"state\": \"CLOSED\", \"failures\": 0}\n");
  dir.write("fastfail.txt", "before=1 after=99 blocked=0 max_ms=900.0\n");
  std::filesystem::remove(dir / "transitions.log");
  const Report report = judge(*evidence, GradeOptions{});
  CHECK(report.score == report.max_score);
  for (const StepReport& step : report.steps) {
    INFO("step ", step.step);
    CHECK(step.status == Status::Pass);
  }
}

}  // namespace
}  // namespace cb::grade

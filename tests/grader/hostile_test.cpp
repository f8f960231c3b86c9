// Broken and hostile submissions: each is a failed check with a clear message (or accepted
// where the contract allows it), in bounded time and memory, and never a crash.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "cb/grade/grade.h"
#include "evidence_of.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

using cb::testing::TempDir;

const Check* find(const Report& r, int step, const std::string& name) {
  for (const StepReport& s : r.steps)
    if (s.step == step)
      for (const Check& c : s.checks)
        if (c.name == name) return &c;
  return nullptr;
}

Report grade_dir(const TempDir& t) {
  auto dir = SubmissionDir::open(t.path());
  REQUIRE(dir.ok());
  return grade_steps(cb::testing::evidence_of(*dir, std::nullopt, "no server in this test"), GradeOptions{});
}

const std::string kGoodState = R"({"state":"CLOSED","failures":0,"window_size":10,"permitted_in_half_open":3})";

TEST_CASE("hostile: each broken state.json fails its contract check - and what depends on it is skipped") {
  TempDir t;
  std::string content;
  std::string message;
  SUBCASE("missing") { message = "state.json is missing"; }
  SUBCASE("empty") {
    content = "";
    t.write("state.json", content);
    message = "state.json is empty";
  }
  SUBCASE("not JSON") {
    t.write("state.json", "state: CLOSED");
    message = "state.json: line 1, column 1: syntax error while parsing value - invalid literal; last read: 's'";
  }
  SUBCASE("JSON of the wrong shape") {
    t.write("state.json", "[1, 2, 3]");
    message = "state.json: expected a JSON object, got an array";
  }
  SUBCASE("trailing garbage") {
    t.write("state.json", kGoodState + "garbage");
    message =
        "state.json: line 1, column 76: syntax error while parsing value - invalid literal; last read: '3}g'; expected end "
        "of input";
  }
  SUBCASE("bytes that are not UTF-8") {
    t.write("state.json", "{\"state\":\"CLOSED\xff\"}");
    message = "state.json is not UTF-8 text (an invalid byte at offset 16)";
  }
  SUBCASE("a million nested brackets") {
    t.write("state.json", std::string(1'000'000, '['));
    message = "state.json: nested deeper than 32 levels; not a lab file";
  }
  SUBCASE("100 MiB") {
    std::ofstream big(t / "state.json", std::ios::binary);
    big.seekp((100 << 20) - 1);
    big.put('}');
    big.close();
    message = "state.json is 104857600 bytes, more than the 1048576 a lab file can be; it was not read";
  }
  SUBCASE("a directory") {
    std::filesystem::create_directory(t / "state.json");
    message = "state.json is a directory, not a file the lab writes";
  }
  SUBCASE("a link out of the submission") {
    std::filesystem::create_symlink("/etc/hostname", t / "state.json");
    message = "state.json is a symbolic link that leads outside the submission; only files inside it are read";
  }
  const Report r = grade_dir(t);
  const Check* contract = find(r, 6, "state.json follows the contract");
  REQUIRE(contract != nullptr);
  CHECK(contract->status == Status::Fail);
  CHECK(contract->message == message);
  const Check* dependent = find(r, 6, "state.json: \"state\" is \"CLOSED\"");
  REQUIRE(dependent != nullptr);
  CHECK(dependent->status == Status::Skip);
  // Said once, by the contract's check; a dependant points to it.
  CHECK(dependent->message == (message == "state.json is missing"
                                   ? "needs state.json, which is missing"
                                   : "needs state.json, which cannot be used (s6.state_contract says why)"));
  CHECK(r.steps[5].status == Status::Fail);
}

TEST_CASE("hostile: what the contracts allow is accepted") {
  TempDir t;
  t.write("state.json",
          "{\r\n  \"state\": \"CLOSED\", \"failures\": 0,\r\n  \"window_size\": 10, \"permitted_in_half_open\": 3,"
          " \"extra\": [1, {\"nested\": true}]\r\n}\r\n");
  t.write("ignore4xx.json", kGoodState);
  t.write("fastfail.txt", "  max_ms=0.01   blocked=10 after=6  before=6 \r\n");
  t.write("transitions.log",
          "2026-01-01T10:00:00.000Z CLOSED->OPEN\r\n2026-01-01T10:00:03.500Z OPEN->HALF_OPEN\r\n"
          "2026-01-01T10:00:03.520Z HALF_OPEN->CLOSED\r\n");
  const Report r = grade_dir(t);
  CHECK(r.passed);
  for (const StepReport& s : r.steps)
    for (const Check& c : s.checks) {
      CAPTURE(c.name);
      CHECK(c.status != Status::Fail);
    }
}

TEST_CASE("hostile: a whole submission of bad files grades without a crash") {
  TempDir t;
  t.write("state.json", std::string(100'000, '{'));
  t.write("ignore4xx.json", std::string("\x00\x01\x02", 3));
  std::filesystem::create_directory(t / "fastfail.txt");
  std::filesystem::create_symlink("/proc/self/environ", t / "transitions.log");
  const Report r = grade_dir(t);
  CHECK_FALSE(r.passed);
  CHECK(r.steps.size() == 8);
  for (int step : {4, 6, 7, 8}) {
    CAPTURE(step);
    CHECK(r.steps[static_cast<std::size_t>(step - 1)].status == Status::Fail);
  }
}

}  // namespace
}  // namespace cb::grade

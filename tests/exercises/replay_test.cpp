// The replay exercise's examples and every edge case it lists, through the replay (and so the engine).
#include <doctest/doctest.h>

#include "cb/exercises/replay.h"

namespace cb::exercises {
namespace {

using namespace std::chrono_literals;

std::string run(int threshold, std::string_view cooldown_seconds, std::string_view trace) {
  auto calls = parse_trace(trace);
  REQUIRE_MESSAGE(calls.ok(), (calls.ok() ? "" : calls.error().message));
  auto cooldown =
      std::chrono::duration_cast<Duration>(std::chrono::duration<double>(std::stod(std::string(cooldown_seconds))));
  auto out = replay(threshold, cooldown, *calls);
  REQUIRE(out.ok());
  return to_json(*out);
}

TEST_CASE("replay exercise: the first example") {
  CHECK(run(2, "10", "[[0, false], [1, false], [2, true], [11, true], [12, true]]") ==
        R"(["fail","fail","rejected","ok","ok"])");
}

TEST_CASE("replay exercise: the two-state counter-example sends one probe - then rejects") {
  CHECK(run(2, "10", "[[0, false], [1, false], [11, false], [12, false]]") == R"(["fail","fail","fail","rejected"])");
}

TEST_CASE("replay exercise: edge cases") {
  SUBCASE("exactly at opened_at + cooldown is the probe; a moment before is not") {
    CHECK(run(1, "10", "[[0, false], [9.999, true], [10, true]]") == R"(["fail","rejected","ok"])");
  }
  SUBCASE("a failed probe restarts the cool-down from its own time") {
    CHECK(run(1, "10", "[[0, false], [10, false], [15, true], [20, true]]") == R"(["fail","fail","rejected","ok"])");
  }
  SUBCASE("failures split by a success never trip") {
    CHECK(run(2, "10", "[[0, false], [1, true], [2, false], [3, true]]") == R"(["fail","ok","fail","ok"])");
  }
  SUBCASE("rejections change nothing") {
    CHECK(run(1, "100", "[[0, false], [50, true], [99, true], [100, true]]") ==
          R"(["fail","rejected","rejected","ok"])");
  }
  SUBCASE("a cool-down of 0 makes the very next call the probe") {
    CHECK(run(1, "0", "[[0, false], [0, true], [0, true]]") == R"(["fail","ok","ok"])");
  }
  SUBCASE("an empty trace") { CHECK(run(1, "10", "[]") == "[]"); }
}

TEST_CASE("times are exact decimals: 0.1 + 0.2 lands exactly on 0.3") {
  // Opened at 0.1 with a 0.2 s cool-down: t = 0.3 is the probe. In doubles 0.1 + 0.2 is
  // 0.30000000000000004 > 0.3, and the probe would wrongly be rejected.
  auto calls = parse_trace("[[0.1, false], [0.3, true]]");
  REQUIRE(calls.ok());
  auto out = replay(1, 200ms, *calls);
  REQUIRE(out.ok());
  CHECK(to_json(*out) == R"(["fail","ok"])");
}

TEST_CASE("times need not increase: each call is judged at its own t - as the reference does") {
  CHECK(run(1, "10", "[[20, false], [5, true], [30, true]]") == R"(["fail","rejected","ok"])");
}

TEST_CASE("a malformed trace is an error naming the position") {
  auto error = [](std::string_view text) {
    auto r = parse_trace(text);
    return r.ok() ? std::string("(accepted)") : r.error().message;
  };
  CHECK(error(R"({"calls": []})") == "the trace must be a JSON array of [t, ok] pairs, got an object");
  CHECK(error("[[0, true], 5]") == "[1]: expected a pair [t, ok], got the number 5");
  CHECK(error("[[0, true], [1]]") == "[1]: expected a pair [t, ok], got 1 element(s)");
  CHECK(error("[[0, true], [1, true, 3]]") == "[1]: expected a pair [t, ok], got a third element the number 3");
  CHECK(error(R"([["0", true]])") == "[0][0]: t must be a number of seconds, got the string \"0\"");
  CHECK(error("[[0, 1]]") == "[0][1]: ok must be true or false, got the number 1");
  CHECK(error("[[0, null]]") == "[0][1]: ok must be true or false, got null");
  CHECK(error("[[true, 0]]") == "[0][0]: t must be a number of seconds, got true");
  CHECK(error("[[0.0000001, true]]") ==
        "[0][0]: t '0.0000001' is finer than a microsecond; times are exact to 0.000001 s");
  CHECK(error("[[0, [true]]]") == "[0][1]: ok must be true or false, got an array");
  CHECK(error("[[1000000001, true]]") ==
        "[0][0]: t 1000000001 is out of range: expected -1000000000 to 1000000000 seconds");
  CHECK(error("[[0, true]] x").rfind("line 1, column 13: syntax error", 0) == 0);
  CHECK(error("[[0, true],\n [1, tru]]").rfind("line 2, column", 0) == 0);
  CHECK(error("").rfind("line 1, column 1:", 0) == 0);
  SUBCASE("a bracket bomb stops at the third level, without recursion") {
    const std::string bomb(1'000'000, '[');
    CHECK(error(bomb) == "[0][0]: t must be a number of seconds, got an array");
  }
}

}  // namespace
}  // namespace cb::exercises

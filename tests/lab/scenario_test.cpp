// Scenarios are data: the lab's own file loads, and every mistake in one names its field.
#include <doctest/doctest.h>

#include "cb/lab/scenario.h"

namespace cb::lab {
namespace {

std::string error_of(const std::string& json) {
  auto s = parse_scenario(json, "x.json");
  return s.ok() ? std::string("(accepted)") : s.error().message;
}

const std::string kBreakers = R"("breakers": {"main": {"profile": "lab", "wait_in_open": "3s"}})";

std::string with_step(const std::string& action) {
  return "{" + kBreakers + R"(, "steps": [{"title": "t", "do": [)" + action + "]}]}";
}

TEST_CASE("scenario: the lab's own file loads - 8 steps on the lab profile") {
  auto s = load_scenario(std::string(CB_SCENARIOS) + "/lab.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  CHECK(s->steps.size() == 8);
  CHECK(s->breakers.at("main").options.cooldown.base == std::chrono::seconds{3});
  CHECK(s->breakers.at("main").options.half_open.permitted_calls == 3);
  CHECK(s->steps[2].actions[0].path == "/always500");
  CHECK(s->steps[2].actions[0].times == 5);
  CHECK(s->steps[4].actions[0].wait_for_cooldown);
  CHECK(s->steps[5].actions[0].until == State::Closed);
  CHECK(s->call_timeout == std::chrono::seconds{2});
}

TEST_CASE("scenario: breaker settings override the profile - and are validated") {
  auto s = parse_scenario("{" + std::string(R"("breakers": {"main": {"profile": "payment", "window_size": 20,
      "minimum_calls": 10, "failure_rate": 40, "permitted_in_half_open": 5, "classification": "429=failure 4xx=ignored"}},
      "steps": [{"do": []}]})"),
                          "x.json");
  REQUIRE(s.ok());
  const auto& o = s->breakers.at("main").options;
  CHECK(o.trip.window.size == 20);
  CHECK(o.trip.window.minimum_calls == 10);
  CHECK(*o.trip.failure_rate_percent == 40);
  CHECK(o.half_open.permitted_calls == 5);
  CHECK(s->breakers.at("main").classifier.has_value());
  CHECK(error_of(R"({"breakers": {"main": {"window_size": 0}}, "steps": [{"do": []}]})") ==
        "x.json: breakers.main.window_size: expected a whole number from 1 to 100000");
  CHECK(error_of(R"({"breakers": {"main": {"failure_rate": 150}}, "steps": [{"do": []}]})") ==
        "x.json: breakers.main: trip.failure_rate_percent: must be in (0, 100], got 150");
  CHECK(error_of(R"({"breakers": {"main": {"profile": "nope"}}, "steps": [{"do": []}]})")
            .rfind("x.json: breakers.main.profile: profile: unknown name 'nope'", 0) == 0);
  CHECK(error_of(R"({"breakers": {"main": {"wait": "3s"}}, "steps": [{"do": []}]})") ==
        "x.json: breakers.main.wait: not a field here");
  CHECK(error_of(R"({"breakers": {"main": {"wait_in_open": "soon"}}, "steps": [{"do": []}]})") ==
        "x.json: breakers.main.wait_in_open: 'soon' is not a duration (a number with us, ms, s, m or h)");
}

TEST_CASE("scenario: a malformed action names the step - the action and the field") {
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast", "times": 0})")) ==
        "x.json: steps[0].do[0].times: expected a whole number from 1 to 1000");
  CHECK(error_of(with_step(R"({"action": "call", "path": "fast"})")) ==
        "x.json: steps[0].do[0].path: expected a path that starts with '/', such as \"/fast\"");
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast", "breaker": "other"})")) ==
        "x.json: steps[0].do[0].breaker: no breaker named 'other' under \"breakers\"");
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast", "until": "closed"})")) ==
        "x.json: steps[0].do[0].until: expected CLOSED, OPEN or HALF_OPEN");
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast", "tmes": 3})")) ==
        "x.json: steps[0].do[0].tmes: not a field here");
  CHECK(
      error_of(with_step(R"({"action": "jump"})")).rfind("x.json: steps[0].do[0].action: 'jump' is not an action", 0) ==
      0);
  CHECK(error_of(with_step(R"({"action": "wait"})")) ==
        "x.json: steps[0].do[0]: a wait takes either \"for\": \"cooldown\" or a \"duration\"");
  const std::string not_a_name =
      "x.json: steps[0].do[0].file: expected a file name (no directories, no control characters, at most 241 bytes)";
  CHECK(error_of(with_step(R"({"action": "write_state", "file": "../etc/passwd"})")) == not_a_name);
  // A NUL once cut the name short: the file was written as "st".
  CHECK(error_of(with_step(R"({"action": "write_state", "file": "st\u0000ate.json"})")) == not_a_name);
  CHECK(error_of(with_step(R"({"action": "write_state", "file": "a\nb"})")) == not_a_name);
  CHECK(error_of(with_step(R"({"action": "write_state", "file": ")" + std::string(242, 'a') + R"("})")) == not_a_name);
  CHECK(error_of(with_step(R"({"action": "write_state", "file": ")" + std::string(241, 'a') + R"("})")) ==
        "(accepted)");
  CHECK(error_of(with_step(R"("call")")) == "x.json: steps[0].do[0]: expected an object with an \"action\"");
}

TEST_CASE("scenario: a path that would write its own request line is refused when the scenario loads") {
  // Sent raw, "/fast\r\nX-Injected: 1" would add a header, and "/fast HTTP/1.1\r\n\r\nGET /bad"
  // a second request the record would charge to the breaker.
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast\r\nX-Injected: 1"})")) ==
        "x.json: steps[0].do[0].path: has a carriage return (CR) at byte 5, which would end the request line; "
        "write it percent-encoded (%20, %0D, %0A)");
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast\nGET /bad"})")).find("a line feed (LF) at byte 5") !=
        std::string::npos);
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast HTTP/1.1"})")).find("a space at byte 5") !=
        std::string::npos);
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fa\u0000st"})")).find("a control character at byte 3") !=
        std::string::npos);
  CHECK(error_of(with_step(R"({"action": "call", "path": "/fast%0D%0A"})")) == "(accepted)");
  SUBCASE("the same for a scene's traffic") {
    const std::string scene = "{" + kBreakers + R"(, "steps": [{"title": "t", "do": [{"action": "traffic",
        "path": "/toggle\r\n", "rate": 10, "duration": "1s"}]}]})";
    CHECK(error_of(scene).find("path: has a carriage return (CR) at byte 7") != std::string::npos);
  }
}

TEST_CASE("scenario: the file as a whole") {
  CHECK(error_of("{").rfind("x.json: line 1, column 2: syntax error", 0) == 0);
  CHECK(error_of("[]") == "x.json: expected a JSON object");
  CHECK(error_of(R"({"steps": [{"do": []}]})") == "x.json: breakers: expected an object naming at least one breaker");
  CHECK(error_of("{" + kBreakers + "}") == "x.json: steps: expected a non-empty array");
  CHECK(error_of("{" + kBreakers + R"(, "steps": [{"do": []}], "extra": 1})") == "x.json: extra: not a field here");
  CHECK(error_of("{" + kBreakers + R"(, "call_timeout": "0ms", "steps": [{"do": []}]})") ==
        "x.json: call_timeout: must be at least 1ms");
  CHECK_FALSE(load_scenario("/nonexistent.json").ok());
}

TEST_CASE("scenario: a duration past 24 hours and a key said twice are refused, naming them") {
  // 100000000h once overflowed the wait's time point: "waited 359999999999.99652 s" in 0.06 s.
  CHECK(error_of(R"({"breakers": {"main": {"wait_in_open": "100000000h"}}, "steps": [{"do": []}]})") ==
        "x.json: breakers.main.wait_in_open: '100000000h' is out of range (0 to 24h)");
  CHECK(error_of(with_step(R"({"action": "wait", "duration": "2562048h"})")) ==
        "x.json: steps[0].do[0].duration: '2562048h' is out of range (0 to 24h)");
  CHECK(error_of(with_step(R"({"action": "wait", "duration": "24h"})")) == "(accepted)");
  // nlohmann keeps the last of two: the run used 8 s while the reader saw 3 s.
  CHECK(error_of(R"({"breakers": {"main": {"wait_in_open": "3s", "wait_in_open": "8s"}}, "steps": [{"do": []}]})") ==
        "x.json: the key \"wait_in_open\" appears twice in one object; each key once");
}

}  // namespace
}  // namespace cb::lab

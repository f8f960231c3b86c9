// The lab files' parsers: what the contracts allow, and a clear one-line error for the rest.
#include <doctest/doctest.h>

#include <string>

#include "cb/grade/artifacts.h"
#include "cb/grade/record.h"
#include "cb/grade/rubric.h"

namespace cb::grade {
namespace {

template <class R>
std::string error_of(const R& r) {
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST_CASE("state.json: the contract's four keys with their types") {
  auto ok = parse_state_file(R"({"state":"OPEN","failures":3,"window_size":10,"permitted_in_half_open":3,"calls":6})");
  REQUIRE(ok.ok());
  CHECK(ok->state == "OPEN");
  CHECK(ok->failures == 3);
  CHECK(ok->window_size == 10);
  CHECK(ok->permitted_in_half_open == 3);
  SUBCASE("values are the checks' business: a lower-case state parses") {
    CHECK(parse_state_file(R"({"state":"open","failures":0,"window_size":10,"permitted_in_half_open":3})").ok());
  }
  SUBCASE("whitespace - CRLF and a trailing newline are fine") {
    CHECK(parse_state_file("{\r\n \"state\": \"CLOSED\",\r\n \"failures\": 0, \"window_size\": 10,\r\n"
                           " \"permitted_in_half_open\": 3\r\n}\r\n")
              .ok());
  }
  CHECK(error_of(parse_state_file(R"({"failures":0,"window_size":10,"permitted_in_half_open":3})")) ==
        "\"state\" is missing");
  CHECK(error_of(parse_state_file(R"({"state":3,"failures":0,"window_size":10,"permitted_in_half_open":3})")) ==
        "\"state\" is 3; expected a string such as \"CLOSED\"");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":"0","window_size":10,"permitted_in_half_open":3})")) ==
        "\"failures\" is \"0\" (a string); expected a whole number");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":1.5,"window_size":10,"permitted_in_half_open":3})")) ==
        "\"failures\" is 1.5 (a number written with a decimal point or an exponent); expected a whole number");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":0.0,"window_size":10,"permitted_in_half_open":3})")) ==
        "\"failures\" is 0.0 (a number written with a decimal point or an exponent); expected a whole number");
  CHECK(
      error_of(parse_state_file(R"({"state":"OPEN","failures":1e400,"window_size":10,"permitted_in_half_open":3})")) ==
      "the number '1e400' is too large for any field of a lab file");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":-1,"window_size":10,"permitted_in_half_open":3})")) ==
        "\"failures\" is -1; expected 0 or more");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":0,"window_size":0,"permitted_in_half_open":3})")) ==
        "\"window_size\" is 0; expected 1 or more");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":0,"window_size":10})")) ==
        "\"permitted_in_half_open\" is missing");
  SUBCASE("every missing key is named at once") {
    CHECK(error_of(parse_state_file(R"({"state":"OPEN","failures":0})")) ==
          "\"window_size\" and \"permitted_in_half_open\" are missing");
    CHECK(error_of(parse_state_file(R"({})")) ==
          "\"state\", \"failures\", \"window_size\" and \"permitted_in_half_open\" are missing");
    CHECK(error_of(parse_fastfail("before=6\n")) == "\"after=\", \"blocked=\" and \"max_ms=\" are missing");
  }
  CHECK(error_of(parse_state_file(R"(["OPEN"])")) == "expected a JSON object, got an array");
  CHECK(error_of(parse_state_file(R"({"state":"OPEN"} trailing)")).rfind("line 1, column 20: syntax error", 0) == 0);
  CHECK(error_of(parse_state_file("{\"state\": \"OP")).rfind("line 1, column", 0) == 0);
  CHECK(error_of(parse_state_file("")).rfind("line 1, column 1", 0) == 0);
  SUBCASE("a key twice is refused - naming it - rather than the last one winning") {
    CHECK(error_of(parse_state_file(
              R"({"state":"CLOSED","state":"OPEN","failures":0,"window_size":10,"permitted_in_half_open":3})")) ==
          "the key \"state\" appears twice in one object; each key once");
    CHECK(parse_record(R"({"entries":[{"seq":1,"seq":2}]})").error().message.find("the key \"seq\" appears twice") !=
          std::string::npos);
  }
  SUBCASE("a Python dict written with str() is named as one, not left to the parser's words") {
    CHECK(error_of(parse_state_file("{'state': 'CLOSED', 'failures': 0}")) ==
          "line 1, column 2: a single quote where JSON has a double quote: this looks like a Python dict written "
          "with str() or print(); write the file with json.dump");
    CHECK(error_of(parse_state_file(R"({"state": "CLOSED", "half_open": None})")) ==
          "line 1, column 34: Python's None where JSON has true, false or null: write the file with json.dump");
  }
  SUBCASE("a million nested brackets are refused by a scan - not a recursion") {
    CHECK(error_of(parse_state_file(std::string(1'000'000, '['))) == "nested deeper than 32 levels; not a lab file");
  }
}

TEST_CASE("fastfail.txt and transitions.log: a byte-order mark is named, not taken for a missing key") {
  const std::string bom = "\xEF\xBB\xBF";
  // Once: "\"before=\" is missing", the mark read as part of an unknown key.
  CHECK(error_of(parse_fastfail(bom + "before=6 after=6 blocked=10 max_ms=0.012\n")) ==
        "the file starts with a byte-order mark (bytes EF BB BF); save it as UTF-8 without one");
  CHECK(parse_transitions(bom + "2026-01-01T10:00:00.012345Z CLOSED->OPEN\n").error().message ==
        "the file starts with a byte-order mark (bytes EF BB BF); save it as UTF-8 without one");
}

TEST_CASE("fastfail.txt: one line of four keys - in any order") {
  auto ok = parse_fastfail("before=6 after=6 blocked=10 max_ms=0.012\n");
  REQUIRE(ok.ok());
  CHECK(ok->before == 6);
  CHECK(ok->after == 6);
  CHECK(ok->blocked == 10);
  CHECK(ok->max_ms == doctest::Approx(0.012));
  CHECK(parse_fastfail("max_ms=3 blocked=10 after=6 before=6").ok());
  CHECK(parse_fastfail("  before=6\tafter=6   blocked=10 max_ms=0.5  \r\n").ok());
  CHECK(parse_fastfail("before=6 after=6 blocked=10 max_ms=7\n\n").ok());
  CHECK(error_of(parse_fastfail("before=6 after=6 blocked=10\n")) == "\"max_ms=\" is missing");
  CHECK(error_of(parse_fastfail("before=6 after=6 max_ms=1")) == "\"blocked=\" is missing");
  CHECK(error_of(parse_fastfail("before=6 before=7 after=6 blocked=10 max_ms=1")) == "\"before\" appears twice");
  CHECK(error_of(parse_fastfail("before=six after=6 blocked=10 max_ms=1")) == "before=six is not a whole number");
  CHECK(error_of(parse_fastfail("before=-6 after=6 blocked=10 max_ms=1")) == "before=-6 is not a whole number");
  CHECK(error_of(parse_fastfail("before=6 after=6 blocked=10 max_ms=fast")) ==
        "max_ms=fast is not a number of milliseconds (like 0.012)");
  CHECK(error_of(parse_fastfail("before=6 after=6 blocked=10 max_ms=nan")) ==
        "max_ms=nan is not a number of milliseconds (like 0.012)");
  CHECK(error_of(parse_fastfail("before=6 after=6 blocked=10 max_ms=1\nbefore=7")) ==
        "expected one line; there is more after line 1");
  CHECK(error_of(parse_fastfail("before 6 after=6 blocked=10 max_ms=1")) == "'before' is not key=value");
}

TEST_CASE("transitions.log: FROM->TO per line - optionally stamped") {
  auto ok = parse_transitions(
      "2026-01-01T10:00:00.000Z CLOSED->OPEN\r\n2026-01-01T10:00:03.012Z OPEN->HALF_OPEN\nHALF_OPEN->CLOSED\n\n");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 3);
  CHECK((*ok)[0].from == "CLOSED");
  CHECK((*ok)[1].to == "HALF_OPEN");
  CHECK(*(*ok)[1].at_us - *(*ok)[0].at_us == 3'012'000);
  CHECK_FALSE((*ok)[2].at_us.has_value());
  CHECK((*ok)[2].line == 3);
  CHECK(parse_transitions("").ok());
  CHECK(parse_transitions("")->empty());
  CHECK(error_of(parse_transitions("CLOSED->OPEN\nclosed->open\n")) ==
        "line 2: 'closed' is not a state; states are upper case: CLOSED");
  CHECK(error_of(parse_transitions("CLOSED => OPEN\n")) ==
        "line 1: 'CLOSED' is not an ISO-8601 UTC time like 2026-01-01T10:00:03.012Z");
  CHECK(error_of(parse_transitions("CLOSED>OPEN\n")) ==
        "line 1: expected FROM->TO (like CLOSED->OPEN), got 'CLOSED>OPEN'");
  CHECK(error_of(parse_transitions("yesterday CLOSED->OPEN\n")).rfind("line 1: 'yesterday' is not an ISO-8601", 0) ==
        0);
  CHECK(error_of(parse_transitions("CLOSED->HALF-OPEN\n")) ==
        "line 1: 'HALF-OPEN' is not a state; states are CLOSED, OPEN, HALF_OPEN");
  SUBCASE("spaces round the arrow are named as such - not as a bad stamp or a bad state") {
    CHECK(error_of(parse_transitions("CLOSED -> OPEN\n")) ==
          "line 1: 'CLOSED -> OPEN' has spaces round the arrow; write CLOSED->OPEN");
    CHECK(error_of(parse_transitions(
              "2026-01-01T10:00:00.000Z CLOSED->OPEN\n2026-01-01T10:00:03.000Z OPEN ->HALF_OPEN\n")) ==
          "line 2: 'OPEN ->HALF_OPEN' has spaces round the arrow; write OPEN->HALF_OPEN");
  }
}

TEST_CASE("the server's record: its shape is checked - field by field") {
  auto ok = parse_record(R"({"epoch":2,"count":1,"gap":false,"entries":[
      {"seq":1,"t_ms":1.5,"wall":"2026-01-01T10:00:00.000Z","method":"GET","path":"/fast","status":200,
       "outcome":"answered","duration_ms":0.1,"counted":true},
      {"seq":2,"t_ms":2,"method":"GET","path":"/count","status":200,"outcome":"answered","counted":false,"count":1},
      {"seq":3,"t_ms":3,"method":"GET","path":"/reset","status":null,"outcome":"reset","counted":true}]})");
  REQUIRE(ok.ok());
  CHECK(ok->epoch == 2);
  CHECK(ok->entries.size() == 3);
  CHECK(ok->entries[1].count == 1);
  CHECK_FALSE(ok->entries[2].status.has_value());
  CHECK(error_of(parse_record("[]")) == "the server's record has no \"entries\" array; is this a flaky server?");
  CHECK(error_of(parse_record(R"({"epoch":1,"entries":[{"seq":"1"}]})")) ==
        "the server's record: entries[0].seq: expected a whole number from 1");
  CHECK(error_of(parse_record(
            R"({"epoch":1,"entries":[
                {"seq":2,"t_ms":1,"method":"GET","path":"/","outcome":"answered","counted":true,"status":200},
                {"seq":1,"t_ms":1,"method":"GET","path":"/","outcome":"answered","counted":true,"status":200}]})")) ==
        "the server's record: entries[1].seq does not increase");
  CHECK(error_of(parse_record("{")).rfind("the server's record is not JSON", 0) == 0);
  SUBCASE("round trip through to_json") {
    auto again = parse_record(to_json(*ok));
    REQUIRE(again.ok());
    CHECK(again->entries.size() == 3);
    CHECK(again->entries[0].wall_us == ok->entries[0].wall_us);
    CHECK(again->entries[1].count == 1);
  }
}

// A record given with --record may have been written by anyone: each of these was graded 8/8.
TEST_CASE("the server's record: a forged one is refused, naming the field") {
  const std::string good = R"("seq":1,"t_ms":1,"method":"GET","path":"/fast","outcome":"answered","counted":true)";
  auto with = [&](const std::string& entry, const std::string& top = R"("epoch":1,)") {
    return error_of(parse_record("{" + top + R"("entries":[{)" + entry + "}]}"));
  };
  CHECK(with(good + R"(,"status":200)") == "(accepted)");
  CHECK(with(R"("seq":1,"t_ms":-5,"method":"GET","path":"/fast","outcome":"answered","counted":true,"status":200)") ==
        "the server's record: entries[0].t_ms: expected a number of milliseconds from 0");
  CHECK(with(good + R"(,"status":99999)") ==
        "the server's record: entries[0].status: expected a status code from 100 to 599, or null");
  CHECK(with(R"("seq":1,"t_ms":1,"method":"GET","path":"/fast","outcome":"fine","counted":true,"status":200)") ==
        "the server's record: entries[0].outcome: expected one of pending, answered, reset, garbage, client-gone, "
        "hang-limit, cut");
  CHECK(with(R"("seq":1,"t_ms":1,"method":"get me","path":"/fast","outcome":"answered","counted":true,"status":200)") ==
        "the server's record: entries[0].method: expected a method in capitals, such as \"GET\"");
  CHECK(with(good + R"(,"status":200,"duration_ms":-1)") ==
        "the server's record: entries[0].duration_ms: expected a number of milliseconds from 0, or null");
  CHECK(with(good + R"(,"status":200,"count":-3)") ==
        "the server's record: entries[0].count: expected a whole number from 0");
  CHECK(with(good + R"(,"status":200)", "") ==
        "the server's record has no epoch (a whole number from 1); is this a flaky server?");
  CHECK(with(good + R"(,"status":{"a":[1]})") ==
        "the server's record: entries[0].status: expected a status code from 100 to 599, or null");
  CHECK(error_of(parse_record(R"({"epoch":1,"entries":[7]})")) ==
        "the server's record: entries[0]: expected an object");
  CHECK(error_of(parse_record(R"({"epoch":1,"entries":[[1]]})")) ==
        "the server's record: entries[0]: expected an object");
}

TEST_CASE("rubric: points per step") {
  auto r = Rubric::parse(R"({"points": {"1": 5, "8": 20}})");
  REQUIRE(r.ok());
  CHECK(r->points[1] == 5);
  CHECK(r->points[2] == 1);
  CHECK(r->points[8] == 20);
  CHECK(error_of(Rubric::parse(R"({"points": {"9": 5}})")) ==
        "rubric: points.\"9\": the parts are steps \"1\" to \"8\" and \"conformance\"");
  CHECK(Rubric::parse(R"({"points": {"conformance": 20}})").value().conformance == 20);
  CHECK(Rubric::equal().conformance == 1);
  CHECK(error_of(Rubric::parse(R"({"points": {"1": -5}})")) ==
        "rubric: points.\"1\": expected a number of points, 0 or more");
  CHECK(error_of(Rubric::parse(R"({"weights": {}})")) ==
        "rubric: \"weights\": the fields are points, visibility, stdout_visibility, seed, traces, conformance_timeout, "
        "id_field, cap_other_numbers, cap_no_replay and refuse_prebuilt");
  CHECK(r->max_score(false) == 5 + 6 + 20);
  CHECK(r->max_score(true) == 5 + 6 + 20 + 1);
}

TEST_CASE("rubric: the time one submission's conformance part may take") {
  CHECK(Rubric::parse(R"({"conformance_timeout": 90})").value().conformance_timeout == std::chrono::seconds{90});
  CHECK(!Rubric::equal().conformance_timeout);
  for (const char* bad :
       {R"({"conformance_timeout": 0})", R"({"conformance_timeout": "90s"})", R"({"conformance_timeout": 100000})"})
    CHECK(error_of(Rubric::parse(bad)) == "rubric: conformance_timeout: expected a number of seconds from 1 to 86400");
}

TEST_CASE("rubric: what Gradescope shows when, and the assignment's conformance traces") {
  auto r = Rubric::parse(
      R"({"visibility": {"default": "after_published", "conformance": "after_due_date", "3": "hidden"},
          "stdout_visibility": "hidden", "seed": 77, "traces": 150})");
  REQUIRE(r.ok());
  CHECK(r->visibility[1] == "after_published");
  CHECK(r->visibility[3] == "hidden");
  CHECK(r->conformance_visibility == "after_due_date");
  CHECK(r->stdout_visibility == "hidden");
  CHECK(r->seed == 77u);
  CHECK(r->traces == 150);
  CHECK(Rubric::equal().visibility[4] == "visible");
  CHECK(!Rubric::equal().seed);
  CHECK(error_of(Rubric::parse(R"({"visibility": {"2": "later"}})")) ==
        "rubric: visibility.\"2\": expected visible, hidden, after_due_date or after_published");
  CHECK(error_of(Rubric::parse(R"({"visibility": {"9": "hidden"}})")) ==
        "rubric: visibility.\"9\": the parts are steps \"1\" to \"8\" and \"conformance\"");
  CHECK(error_of(Rubric::parse(R"({"seed": -1})")) == "rubric: seed: expected a whole number, 0 or more");
  CHECK(error_of(Rubric::parse(R"({"traces": 0})")) == "rubric: traces: expected a whole number from 1 to 100000");
}

}  // namespace
}  // namespace cb::grade

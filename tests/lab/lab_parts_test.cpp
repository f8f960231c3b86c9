// The lab client's parts: its HTTP calls against a real flaky server, the files it writes, and
// the session it keeps between steps.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cb/breaker/profiles.h"
#include "cb/flaky/server.h"
#include "cb/lab/anchored_clock.h"
#include "cb/lab/http_call.h"
#include "cb/lab/lab_files.h"
#include "cb/lab/session.h"
#include "temp_dir.h"

namespace cb::lab {
namespace {

using namespace std::chrono_literals;
using classify::Origin;

struct Server {
  std::unique_ptr<flaky::FlakyServer> server;
  ServerUrl url;
  Server() {
    flaky::ServerOptions o;
    o.port = 0;
    o.hang_limit = 10s;
    server = flaky::FlakyServer::start(o).value();
    url = {"127.0.0.1", server->port()};
  }
};

TEST_CASE("lab http: each way a call can end is told apart") {
  Server s;
  SUBCASE("an answer") {
    const HttpAnswer a = http_request(s.url, "GET", "/fast", 2s);
    CHECK(a.observation.origin == Origin::Response);
    CHECK(a.observation.status == 200);
    CHECK(a.body == "fast\n");
    CHECK(outcome_word(a) == "200");
  }
  SUBCASE("a 500 and a 400 are answers too") {
    CHECK(http_request(s.url, "GET", "/always500", 2s).observation.status == 500);
    CHECK(http_request(s.url, "GET", "/bad", 2s).observation.status == 400);
  }
  SUBCASE("no answer in time") {
    const HttpAnswer a = http_request(s.url, "GET", "/hang", 150ms);
    CHECK(a.observation.origin == Origin::Timeout);
    CHECK(a.elapsed >= 150ms);
    CHECK(outcome_word(a) == "timeout");
  }
  SUBCASE("a slow answer past the timeout is a timeout") {
    CHECK(http_request(s.url, "GET", "/slow?ms=500", 100ms).observation.origin == Origin::Timeout);
  }
  SUBCASE("a reset connection") {
    const HttpAnswer a = http_request(s.url, "GET", "/reset", 2s);
    CHECK(a.observation.origin == Origin::ConnectionReset);
  }
  SUBCASE("an answer that is not HTTP") {
    const HttpAnswer a = http_request(s.url, "GET", "/garbage", 2s);
    CHECK(a.observation.origin == Origin::MalformedResponse);
    CHECK(a.detail.rfind("not an HTTP answer: 'GARBAGE", 0) == 0);
  }
  SUBCASE("nothing listening") {
    const ServerUrl closed = s.url;
    s.server->stop();
    CHECK(http_request(closed, "GET", "/fast", 2s).observation.origin == Origin::ConnectRefused);
  }
}

TEST_CASE("lab http: server URLs") {
  CHECK(parse_url("http://127.0.0.1:8110")->port == 8110);
  CHECK(parse_url("http://127.0.0.1:8110/")->host == "127.0.0.1");
  CHECK(parse_url("http://[::1]:9000")->host == "::1");
  CHECK(parse_url("http://[::1]:9000")->text() == "http://[::1]:9000");
  for (const char* bad : {"127.0.0.1:8110", "https://x:1", "http://x", "http://x:0", "http://x:70000", "http://:80"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_url(bad).ok());
  }
}

TEST_CASE("lab files: the contracts' exact forms") {
  SUBCASE("state.json") {
    Status st;
    st.state = State::Open;
    st.metrics.window = {6, 3, 0};
    st.metrics.failure_rate_percent = 50.0;
    const auto j = nlohmann::json::parse(state_file(st, profiles::lab(std::chrono::seconds{3}), TimePoint{}));
    CHECK(j["state"] == "OPEN");
    CHECK(j["failures"] == 3);
    CHECK(j["window_size"] == 10);
    CHECK(j["permitted_in_half_open"] == 3);
    CHECK(j["failure_rate"] == 50.0);
    CHECK(j["updated_at"] == "1970-01-01T00:00:00.000Z");
  }
  SUBCASE("fastfail.txt") { CHECK(fastfail_file(6, 6, 10, 0.00213) == "before=6 after=6 blocked=10 max_ms=0.0021\n"); }
  SUBCASE("transitions.log") {
    std::vector<Transition> t{
        {State::Closed, State::Open, TimePoint{Duration{1'000'123'456}}, Reason::FailureRate, 2},
        {State::Open, State::HalfOpen, TimePoint{Duration{1'003'123'456}}, Reason::CooldownElapsed, 3}};
    CHECK(transitions_file(t) ==
          "1970-01-01T00:16:40.123456Z CLOSED->OPEN\n1970-01-01T00:16:43.123456Z OPEN->HALF_OPEN\n");
  }
}

TEST_CASE("lab clock: on the wall clock's timeline - and never going back") {
  AnchoredClock c;
  const auto wall = std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch());
  const TimePoint a = c.now();
  CHECK(std::chrono::abs(a.time_since_epoch() - wall) < std::chrono::seconds{1});
  CHECK(c.now() >= a);
}

TEST_CASE("lab session: snapshots and transitions survive the trip through the file") {
  cb::testing::TempDir t;
  Session s;
  s.scenario = "/x/lab.json";
  s.server = "http://127.0.0.1:1";
  s.server_pid = 42;
  Snapshot snap;
  snap.state = State::Open;
  snap.generation = 7;
  snap.since = TimePoint{Duration{1'700'000'000'000'000}};
  snap.cooldown = std::chrono::seconds{3};
  snap.window = {{0, 1, 0, 0}, {0, 1, 1, 0}};
  snap.counters.not_permitted = 12;
  s.after[3].breakers["main"] = snap;
  s.after[3].transitions["main"] = {{State::Closed, State::Open, snap.since, Reason::FailureRate, 7}};
  s.after[3].values["before"] = 6;
  s.after[3].ended_at = snap.since + std::chrono::seconds{1};
  s.after[1] = {};
  s.after[2] = {};
  REQUIRE(save_session(t.path(), s).ok());
  auto back = load_session(t.path());
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message));
  CHECK(back->scenario == "/x/lab.json");
  CHECK(back->server_pid == 42);
  CHECK(back->after.at(3).breakers.at("main") == snap);
  CHECK(back->after.at(3).transitions.at("main").front().at == snap.since);
  CHECK(back->after.at(3).values.at("before") == 6);
  SUBCASE("a missing session is an empty one") {
    cb::testing::TempDir empty;
    CHECK(load_session(empty.path())->after.empty());
  }
  SUBCASE("a damaged one is an error naming the file and the field") {
    t.write(".cb-lab/steps/3.json", R"({"breakers": {"main": {"state": "SHUT"}}})");
    CHECK(load_session(t.path()).error().message ==
          t.path() +
              "/.cb-lab/steps/3.json: breakers.main.state: 'SHUT' is not a state "
              "(delete DIR/.cb-lab, or run `cb-lab run`, to start afresh)");
  }
  SUBCASE("each step is its own file, its transitions what it added to the step before's") {
    Session more = s;
    more.after[1] = {};
    more.after[2] = {};
    more.after[4] = more.after[3];
    more.after[4].transitions["main"].push_back({State::Open, State::HalfOpen, snap.since, Reason::CooldownElapsed, 8});
    REQUIRE(save_session(t.path(), more).ok());
    const nlohmann::json four = nlohmann::json::parse(cb::testing::slurp(t / ".cb-lab/steps/4.json"));
    CHECK(four["transitions"]["main"]["keep"] == 1);
    CHECK(four["transitions"]["main"]["added"].size() == 1);
    auto again = load_session(t.path());
    REQUIRE(again.ok());
    CHECK(again->after.at(4).transitions.at("main").size() == 2);
    CHECK(again->after.at(4).transitions.at("main") == more.after[4].transitions["main"]);
    // A shorter session later: the files of steps past its last are gone.
    Session fewer = more;
    fewer.after.erase(4);
    REQUIRE(save_session(t.path(), fewer, 3).ok());
    CHECK_FALSE(std::filesystem::exists(t / ".cb-lab/steps/4.json"));
    CHECK(load_session(t.path())->after.size() == 3);
  }
}

}  // namespace
}  // namespace cb::lab

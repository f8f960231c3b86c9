// `cb-lab step N` run again teaches its lesson whatever time has passed since step N-1: the
// lab's clock stands still between steps. Time passing is made by moving the saved session's
// times back (as if step 3 had ended a minute ago), not by waiting.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cb/flaky/server.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kLab = CB_LAB_BIN;

// A step's lab-time moments ("..._us" keys holding times since the epoch, not durations),
// moved `us` into the past: to the next step, the same as `us` more of the wall clock passing.
// Its transitions are wall-clock stamps of what the server saw, and stay.
void age(json& j, std::int64_t us) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (key == "transitions") continue;
      if (key.size() > 3 && key.compare(key.size() - 3, 3, "_us") == 0 && value.is_number_integer() &&
          value.get<std::int64_t>() > 1'000'000'000'000'000)
        value = value.get<std::int64_t>() - us;
      else
        age(value, us);
    }
  } else if (j.is_array()) {
    for (auto& v : j) age(v, us);
  }
}

std::unique_ptr<flaky::FlakyServer> start_server() {
  flaky::ServerOptions o;
  o.port = 0;
  return flaky::FlakyServer::start(o).value();
}

// `cb-lab step 1` to `step n` in `out`, each passing.
void run_steps(const TempDir& out, const flaky::FlakyServer& server, int n) {
  for (int k = 1; k <= n; ++k)
    REQUIRE(run({kLab, "step", std::to_string(k), "--dir", out.path(), "--server", server.url()}).exit_code == 0);
}

// Steps 1..n of the session in DIR (each in .cb-lab/steps/N.json), changed by `edit`.
void edit_steps(const std::string& dir, int n, const std::function<void(int, json&)>& edit) {
  for (int k = 1; k <= n; ++k) {
    const std::string path = dir + "/.cb-lab/steps/" + std::to_string(k) + ".json";
    json step = json::parse(slurp(path));
    edit(k, step);
    std::ofstream(path) << step.dump();
  }
}

TEST_CASE("cb-lab step: the lab's clock stands still between steps") {
  const auto server = start_server();
  TempDir out;
  run_steps(out, *server, 3);
  // As if steps 1-3 had ended a minute ago: 20 cool-downs have passed on the wall clock. (All of
  // them: a session whose step 3 ends before its step 2 is refused as damaged.)
  REQUIRE(json::parse(slurp(out / ".cb-lab/steps/3.json")).contains("ended_at_us"));
  edit_steps(out.path(), 3, [](int, json& step) { age(step, 60'000'000); });

  SUBCASE("step 4 a minute after step 3 still finds the breaker OPEN, and every call is refused") {
    const Ran r = run({kLab, "step", "4", "--dir", out.path(), "--server", server->url()});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(slurp(out / "fastfail.txt").rfind("before=6 after=6 blocked=10 ", 0) == 0);
  }
  SUBCASE("status shows the cool-down where step 3 left it, and only the breakers that exist by then") {
    const Ran r = run({kLab, "status", "--dir", out.path()});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("main: OPEN") != std::string::npos);
    CHECK(r.out.find("OPEN for 2.") != std::string::npos);  // of 3 s, not "0 s more"
    CHECK(r.out.find("fresh") == std::string::npos);        // made in step 7
  }
}

TEST_CASE("cb-lab step: after a pause the stamps are still wall-clock times the server's record agrees with") {
  const auto server = start_server();
  TempDir out;
  for (int n = 1; n <= 8; ++n) {
    CAPTURE(n);
    const Ran r = run({kLab, "step", std::to_string(n), "--dir", out.path(), "--server", server->url()});
    INFO(r.out, r.err);
    // Step 5 waits out the cool-down, 8 checks every stamp against the record (s8.seen): were
    // a lab time a minute behind the wall written as a stamp, they would fail.
    REQUIRE(r.exit_code == 0);
    if (n == 4) {  // a minute's pause between steps 4 and 5
      edit_steps(out.path(), 4, [](int, json& step) { age(step, 60'000'000); });
    }
  }
}

// A session is a file anyone can edit: one its breakers could never have written is refused,
// naming the field, instead of being waited out ("OPEN for 1000003 s more (of 3 s)").
TEST_CASE("cb-lab step and status: a damaged session is refused, naming the field") {
  const auto server = start_server();
  TempDir out;
  run_steps(out, *server, 3);
  std::map<int, json> good;
  edit_steps(out.path(), 3, [&](int k, json& step) { good[k] = step; });
  auto refused = [&](const std::function<void(int, json&)>& damage, const std::string& message) {
    edit_steps(out.path(), 3, [&](int k, json& step) {
      step = good[k];
      damage(k, step);
    });
    for (const std::string command : {"status", "step"}) {
      std::vector<std::string> argv{kLab, command, "--dir", out.path()};
      if (command == "step") argv.insert(argv.begin() + 2, "4");
      const Ran r = run(argv);
      CAPTURE(command);
      CHECK(r.exit_code == 2);
      CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
      CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
    }
  };
  const std::string three = ".cb-lab/steps/3.json: ";
  refused(
      [](int k, json& s) {
        if (k == 3) s["breakers"]["main"]["cooldown_us"] = 9223372036854775807LL;
      },
      three +
          "breakers.main: snapshot.cooldown: 9223372036854775807 us is longer than this breaker's policy gives "
          "(3000000 us at most)");
  refused([](int, json& s) { s["ended_at_us"] = s["ended_at_us"].get<std::int64_t>() - 1'000'000'000'000; },
          three + "breakers.");  // every step's end moved 10^12 us back, the breakers' times left
  refused(
      [](int k, json& s) {
        if (k == 3) s["breakers"].erase("main");
      },
      three + "breakers: no breaker 'main', which steps 1-3 use");
  refused(
      [](int k, json& s) {
        if (k == 3) s["ended_at_us"] = s["ended_at_us"].get<std::int64_t>() + 86'400'000'000LL;
      },
      three + "ended_at_us: ");
  refused(
      [&](int k, json& s) {
        if (k == 2) s["ended_at_us"] = good[3]["ended_at_us"].get<std::int64_t>() + 1;
      },
      three + "ended_at_us: before the end of step 2");
  refused(
      [](int k, json& s) {
        if (k == 3) s.erase("ended_at_us");
      },
      three + "ended_at_us: missing");
  // The session's own file, cut short: where it broke, not "not a cb-lab session".
  edit_steps(out.path(), 3, [&](int k, json& step) { step = good[k]; });
  { std::ofstream(out / ".cb-lab/session.json", std::ios::trunc) << "{\"steps\": 3,"; }
  for (const std::string command : {"status", "step"}) {
    std::vector<std::string> argv{kLab, command, "--dir", out.path()};
    if (command == "step") argv.insert(argv.begin() + 2, "4");
    const Ran r = run(argv);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(".cb-lab/session.json: line 1, column 13: syntax error") != std::string::npos, r.err);
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

}  // namespace
}  // namespace cb::testing

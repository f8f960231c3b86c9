// cb-lab run / step / status as processes against real servers on free ports.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <httplib.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cb/flaky/server.h"
#include "flaky_fixture.h"
#include "hanging_listener.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kLab = CB_LAB_BIN;

// What must come out the same however the steps were run: everything but the times.
json comparable(const TempDir& d) {
  json state = json::parse(slurp(d / "state.json"));
  json ignore = json::parse(slurp(d / "ignore4xx.json"));
  state.erase("updated_at");
  ignore.erase("updated_at");
  std::string transitions;
  std::istringstream log(slurp(d / "transitions.log"));
  for (std::string line; std::getline(log, line);) transitions += line.substr(line.find(' ') + 1) + "\n";
  std::string fastfail = slurp(d / "fastfail.txt");
  fastfail = fastfail.substr(0, fastfail.find(" max_ms="));
  return {{"state", state}, {"ignore4xx", ignore}, {"transitions", transitions}, {"fastfail", fastfail}};
}

TEST_CASE("cb-lab run: the whole lab passes all eight steps on the server's evidence") {
  Flaky f;
  TempDir out;
  const Ran r = run({kLab, "run", "--dir", out.path(), "--server", f.url, "--json"});
  CHECK(r.exit_code == 0);
  const json summary = json::parse(r.out);
  CHECK(summary["passed"] == true);
  CHECK(summary["score"] == 8);
  CHECK(summary["report"]["checks_run"] == summary["report"]["checks_total"]);  // nothing skipped: full evidence
  REQUIRE(summary["steps"].size() == 8);
  for (const auto& s : summary["steps"]) CHECK(s["status"] == "pass");
  const std::string ff = slurp(out / "fastfail.txt");
  CHECK(ff.rfind("before=6 after=6 blocked=10 max_ms=", 0) == 0);
  CHECK(std::stod(ff.substr(ff.find("max_ms=") + 7)) < 1.0);  // the refusals: far under the lab's 50 ms
  SUBCASE("and status tells where the breakers stand") {
    const Ran st = run({kLab, "status", "--dir", out.path()});
    CHECK(st.exit_code == 0);
    CHECK(st.out.find("main: CLOSED") != std::string::npos);
    CHECK(st.out.find("fresh: CLOSED") != std::string::npos);
    CHECK(st.out.find("Steps run in " + out.path() + ": 1-8 of 8") != std::string::npos);
  }
}

TEST_CASE("cb-lab step: one by one gives the same files and verdicts as a run") {
  Flaky f;
  TempDir stepwise;
  for (int n = 1; n <= 8; ++n) {
    CAPTURE(n);
    const Ran r = run({kLab, "step", std::to_string(n), "--dir", stepwise.path(), "--server", f.url});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("PASS") != std::string::npos);
    CHECK(r.err.empty());
  }
  Flaky g;
  TempDir whole;
  REQUIRE(run({kLab, "run", "--dir", whole.path(), "--server", g.url}).exit_code == 0);
  CHECK(comparable(stepwise) == comparable(whole));
}

// A student's own numbers (a kit made for them holds them in lab-settings.json): the reference
// run they watch is their lab, not the handout's, and a session of steps keeps them.
TEST_CASE("cb-lab run and step --settings: the lab on a student's own numbers, graded on them") {
  TempDir kit;
  kit.write("lab-settings.json", R"({"window_size": 8, "minimum_calls": 5, "failure_rate_percent": 50,
                                     "wait_in_open_ms": 3500, "permitted_in_half_open": 2})");
  const std::string settings = kit / "lab-settings.json";
  const std::string own = "the numbers of lab-settings.json (window 8, minimum 5, 50%, 3.5 s, 2 trials)";
  Flaky f;
  TempDir whole;
  const Ran r = run({kLab, "run", "--dir", whole.path(), "--server", f.url, "--settings", settings, "--json"});
  CHECK(r.exit_code == 0);
  const json summary = json::parse(r.out);
  CHECK(summary["score"] == 8);
  CHECK(summary["report"]["numbers"].get<std::string>().rfind(own, 0) == 0);
  CHECK(json::parse(slurp(whole / "state.json"))["window_size"] == 8);
  SUBCASE("step by step: step 1 names the numbers, the later steps go on with them") {
    Flaky g;
    TempDir stepwise;
    for (int n = 1; n <= 8; ++n) {
      CAPTURE(n);
      std::vector<std::string> argv{kLab, "step", std::to_string(n), "--dir", stepwise.path(), "--server", g.url};
      if (n == 1) argv.insert(argv.end(), {"--settings", settings});
      const Ran step = run(argv);
      CHECK(step.exit_code == 0);
      CHECK(step.out.find("on " + own) != std::string::npos);
    }
    CHECK(comparable(stepwise) == comparable(whole));
  }
}

// In a student's kit folder, with no --settings, cb-lab stood on the handout's numbers while
// cb-grade, run in the same folder, graded on the kit's; and status printed the handout's minimum.
TEST_CASE("cb-lab step and status in a kit's folder: the kit's numbers, with no --settings") {
  TempDir kit;
  kit.write("lab-settings.json", R"({"window_size": 8, "minimum_calls": 4, "failure_rate_percent": 40,
                                     "wait_in_open_ms": 3500, "permitted_in_half_open": 2})");
  const std::string own = "the numbers of lab-settings.json (window 8, minimum 4, 40%, 3.5 s, 2 trials)";
  Flaky f;
  for (int n = 1; n <= 2; ++n) {
    CAPTURE(n);
    const Ran step = run({"/bin/sh", "-c", "cd '" + kit.path() + "' && exec \"$@\"", "sh", kLab, "step",
                          std::to_string(n), "--server", f.url});
    INFO(step.out, step.err);
    CHECK(step.exit_code == 0);
    CHECK(step.out.find("on " + own) != std::string::npos);
  }
  const Ran status = run({"/bin/sh", "-c", "cd '" + kit.path() + "' && exec \"$@\"", "sh", kLab, "status"});
  INFO(status.out);
  CHECK(status.out.find("under the minimum of 4 calls") != std::string::npos);
  CHECK(json::parse(slurp(kit / "cb/state.json"))["window_size"] == 8);
}

TEST_CASE("cb-lab step: a step graded on contaminated evidence is not graded - exit 2, not 0") {
  Flaky f;
  TempDir out;
  for (int n = 1; n <= 7; ++n)
    REQUIRE(run({kLab, "step", std::to_string(n), "--dir", out.path(), "--server", f.url}).exit_code == 0);
  // Someone else's program calls the server between steps: its /fast after the /bad is a second run.
  httplib::Client other(f.url);
  for (int i = 0; i < 3; ++i) REQUIRE(other.Get("/fast"));
  const Ran r = run({kLab, "step", "8", "--dir", out.path(), "--server", f.url});
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("NOT GRADED") != std::string::npos);
  CHECK(r.out.find("holds 2 lab runs") != std::string::npos);
}

// A step done again after later ones (docs/LAB.md: "to redo step 4") found the later steps'
// requests in the record and their state.json on disk, and was failed for "a state.json from a
// later step". The steps before it run again from a reset record, and it is judged on one run.
TEST_CASE("cb-lab step: a step done again after later ones is judged on one run, not on theirs") {
  Flaky f;
  TempDir out;
  for (int n = 1; n <= 8; ++n)
    REQUIRE(run({kLab, "step", std::to_string(n), "--dir", out.path(), "--server", f.url}).exit_code == 0);
  const Ran again = run({kLab, "step", "4", "--dir", out.path(), "--server", f.url});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("step 4 again, after step 8") != std::string::npos);
  CHECK(again.out.find("from a later step") == std::string::npos);
  CHECK(slurp(out / "fastfail.txt").rfind("before=6 after=6 blocked=10 ", 0) == 0);
  // And the lab goes on from there as in order.
  for (int n = 5; n <= 8; ++n)
    CHECK(run({kLab, "step", std::to_string(n), "--dir", out.path(), "--server", f.url}).exit_code == 0);
}

TEST_CASE("cb-lab step: a step whose predecessors have not run is refused - saying which to run") {
  Flaky f;
  TempDir out;
  const Ran early = run({kLab, "step", "4", "--dir", out.path(), "--server", f.url});
  CHECK(early.exit_code == 2);
  CHECK(early.err == "cb-lab step 4: step 4 continues from step 1, which has not run in " + out.path() +
                         ": run `cb-lab step 1` first\n");
  REQUIRE(run({kLab, "step", "1", "--dir", out.path(), "--server", f.url}).exit_code == 0);
  REQUIRE(run({kLab, "step", "2", "--dir", out.path(), "--server", f.url}).exit_code == 0);
  const Ran skip = run({kLab, "step", "4", "--dir", out.path(), "--server", f.url});
  CHECK(skip.exit_code == 2);
  CHECK(skip.err.find("step 4 continues from step 3, which has not run") != std::string::npos);
  CHECK(skip.err.find("run `cb-lab step 3` first") != std::string::npos);
}

TEST_CASE("cb-lab run: a server that never answers - timeouts open the breaker - and the run fails in bounded time") {
  HangingListener hung;
  TempDir out;
  TempDir scenarios;
  // The lab, with a short cool-down so the bound is seconds.
  std::string lab = slurp(std::string(CB_SCENARIOS) + "/lab.json");
  for (std::size_t at; (at = lab.find("\"3s\"")) != std::string::npos;) lab.replace(at, 4, "\"200ms\"");
  scenarios.write("lab.json", lab);
  const auto t0 = std::chrono::steady_clock::now();
  const Ran r = run({kLab, "run", "--dir", out.path(), "--server", "http://127.0.0.1:" + std::to_string(hung.port()),
                     "--scenario", scenarios / "lab.json", "--call-timeout", "100ms"},
                    {}, {}, 60s);
  CHECK(std::chrono::steady_clock::now() - t0 < 30s);  // a bound, far above the ~4 s it takes
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("not answering as a flaky server") != std::string::npos);
  CHECK(r.out.find("timeout") != std::string::npos);
  CHECK(r.out.find("-> OPEN") != std::string::npos);
  CHECK(r.out.find("refused") != std::string::npos);
  CHECK(r.out.find("[ ] 1") != std::string::npos);  // the checklist says the server failed
}

// Reads a running lab's output until step 5 waits out the cool-down (or it ends, or 10 s pass
// without a line).
bool reaches_the_cooldown(Process& lab) {
  while (auto line = lab.read_line(10s))
    if (line->find("waiting for the cool-down") != std::string::npos) return true;
  return false;
}

TEST_CASE("cb-lab run: Ctrl-C stops it - and the files written so far are whole") {
  Flaky f;
  TempDir out;
  Process p({kLab, "run", "--dir", out.path(), "--server", f.url});
  REQUIRE(reaches_the_cooldown(p));
  p.signal(SIGINT);
  CHECK(p.wait(5s) == 130);
  CHECK(p.read_all_stderr() == "cb-lab run: interrupted during step 5; the files written so far are whole\n");
  const json state = json::parse(slurp(out / "state.json"));  // parses: written whole
  CHECK(state["state"] == "OPEN");
  CHECK(std::filesystem::exists(out / "fastfail.txt"));
  CHECK_FALSE(std::filesystem::exists(out / "transitions.log"));
}

TEST_CASE("cb-lab run: one run at a time in a directory, and an interrupted one leaves only its own files") {
  Flaky f;
  TempDir out;
  // An earlier, whole run's files: once they stayed beside an interrupted run's own, and the
  // mix graded 4/8.
  out.write("transitions.log", "2026-01-01T10:00:00.012345Z CLOSED->OPEN\n");
  out.write("ignore4xx.json", "{}\n");
  Process p({kLab, "run", "--dir", out.path(), "--server", f.url});
  REQUIRE(reaches_the_cooldown(p));
  const std::string in_use = out.path() + " is in use by cb-lab run (pid " + std::to_string(p.pid()) +
                             "); wait for it to finish, or give another --dir\n";
  const Ran second = run({kLab, "run", "--dir", out.path(), "--server", f.url});
  CHECK(second.exit_code == 2);
  CHECK(second.err == "cb-lab run: " + in_use);  // once: "state is CLOSED, expected OPEN" in one of them
  const Ran step = run({kLab, "step", "1", "--dir", out.path(), "--server", f.url});
  CHECK(step.exit_code == 2);
  CHECK(step.err == "cb-lab step 1: " + in_use);
  p.signal(SIGINT);
  CHECK(p.wait(5s) == 130);
  CHECK(std::filesystem::exists(out / "state.json"));
  CHECK_FALSE(std::filesystem::exists(out / "transitions.log"));
  CHECK_FALSE(std::filesystem::exists(out / "ignore4xx.json"));
  // The lock went with the process: the directory is free again.
  const Ran after = run({kLab, "step", "1", "--dir", out.path(), "--server", f.url});
  CHECK(after.exit_code == 0);
}

TEST_CASE("cb-lab run: what stops it before it starts is one line and exit 2") {
  SUBCASE("a directory that cannot be written") {
    const Ran r = run({kLab, "run", "--dir", "/proc/cb-lab-test"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("cb-lab run: the output directory: /proc/cb-lab-test: cannot create: ", 0) == 0);
  }
  SUBCASE("a server URL that is not one") {
    const Ran r = run({kLab, "run", "--server", "localhost:8110"});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cb-lab run: --server: 'localhost:8110' is not a server URL like http://127.0.0.1:8110\n");
  }
  SUBCASE("a scenario with a mistake") {
    TempDir t;
    t.write("bad.json", R"({"breakers": {"main": {}}, "steps": [{"do": [{"action": "call"}]}]})");
    const Ran r = run({kLab, "run", "--scenario", t / "bad.json"});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cb-lab run: " + (t / "bad.json") + ": steps[0].do[0].path: expected a path such as \"/fast\"\n");
  }
}

// The evidence failing mid-run is the grader's to report, never the breaker's: the lab is stopped
// at step 5's cool-down (its header is printed before the wait) and something happens to the
// server that the breaker had no part in.
std::string run_until_step5_then(const std::function<void(Flaky&)>& disturb, int& exit_code) {
  Flaky f;
  TempDir out;
  Process lab({kLab, "run", "--server", f.url, "--dir", out.path()});
  for (;;) {
    const auto line = lab.read_line();
    REQUIRE(line.has_value());
    if (line->rfind("Step 5", 0) == 0) break;
  }
  disturb(f);
  std::string rest = lab.read_rest_of_stdout();
  exit_code = lab.wait(30s).value_or(-1);
  return rest;
}

TEST_CASE("cb-lab run: a server that dies mid-run is not the student's fault") {
  int code = 0;
  const std::string out = run_until_step5_then([](Flaky& f) { f.server->stop(); }, code);
  CHECK(code == 2);
  CHECK(out.find("stopped answering during the run") != std::string::npos);
  CHECK(out.find("NOT GRADED") != std::string::npos);
  CHECK(out.find("a 400 is the caller's mistake") == std::string::npos);
}

TEST_CASE("cb-lab run: a record reset by someone else mid-run is reported, not graded") {
  int code = 0;
  const std::string out = run_until_step5_then(
      [](Flaky& f) {
        httplib::Client c(f.url);
        REQUIRE(c.Post("/admin/reset"));
      },
      code);
  CHECK(code == 2);
  CHECK(out.find("was reset during the run") != std::string::npos);
}

TEST_CASE("cb-lab run: a scenario with more steps than the grader knows reports them as not graded") {
  Flaky f;
  TempDir out;
  auto scenario = json::parse(slurp(std::string(CB_SCENARIOS) + "/lab.json"));
  scenario["steps"].push_back(
      {{"title", "An extra step"}, {"do", json::array({{{"action", "write_transitions"}, {"file", "extra.log"}}})}});
  out.write("more.json", scenario.dump());
  const Ran r = run({kLab, "run", "--server", f.url, "--dir", out.path(), "--scenario", out / "more.json"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("the grader knows the lab's 8 steps; this scenario's step 9 is not one of them") !=
        std::string::npos);
}

TEST_CASE("cb-lab status: before any run") {
  TempDir out;
  const Ran r = run({kLab, "status", "--dir", out.path()});
  CHECK(r.exit_code == 1);
  CHECK(r.out == "No lab has run in " + out.path() + " yet: `cb-lab run`, or `cb-lab step 1`.\n");
}

}  // namespace
}  // namespace cb::testing

// The scenes' numbers, each asserted from the simulated run (fast, exact), and one live run of
// payments and of toggle against a real server on a free port.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cb/breaker/reply.h"
#include "cb/lab/scenario.h"
#include "cb/lab/scenes.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::lab {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

Scenario scene(const std::string& name) {
  auto s = load_scenario(std::string(CB_SCENARIOS) + "/" + name + ".json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  return std::move(s).value();
}

std::optional<BreakerOptions> breaker_of(const Scenario& s, const Action& a) {
  if (a.breaker == "none") return std::nullopt;
  return s.breakers.at(a.breaker).options;
}

json run_step(const Scenario& s, std::size_t step, const SceneRun& how = {}) {
  const Action& a = s.steps.at(step).actions.at(0);
  Result<SceneOutput> out = std::visit(
      [&](const auto& spec) -> Result<SceneOutput> {
        using T = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<T, ChargesSpec>) return run_charges(spec, breaker_of(s, a), how);
        if constexpr (std::is_same_v<T, PoolSpec>) return run_pool(spec, breaker_of(s, a), how);
        if constexpr (std::is_same_v<T, TrafficSpec>) return run_traffic(spec, *breaker_of(s, a), how);
        if constexpr (std::is_same_v<T, FleetSpec>) return run_fleet(spec, *breaker_of(s, a), how);
      },
      *a.scene);
  REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().message));
  return out->data;
}

TEST_CASE("scene payments: 4 charges wait out a full timeout (2 3 4 7) and 3 are refused (5 6 8)") {
  const Scenario s = scene("payments");
  const json with = run_step(s, 0);
  CHECK(with["waited"] == json{2, 3, 4, 7});
  CHECK(with["refused"] == json{5, 6, 8});
  CHECK(with["answered"] == json{1, 9, 10});
  CHECK(with["trials"] == json{7, 9});  // one trial per cool-down: the first finds payments down, the second up
  CHECK(with["charges"][6]["state_after"] == "OPEN");
  CHECK(with["charges"][8]["state_after"] == "CLOSED");
  CHECK(with["charges"][4]["reply"] == "degraded");
  SUBCASE("the three honest fallbacks: degraded, cached, a clear error") {
    CHECK(with["charges"][4]["reply"] == "degraded");
    CHECK(run_step(s, 2)["charges"][4]["reply"] == "cached");
    CHECK(run_step(s, 1)["charges"][1]["reply"] == "error");
    CHECK(run_step(s, 2)["waited"] == json{2, 3, 4, 7});  // the fallback changes what the caller gets, not when
  }
  SUBCASE("with no breaker every charge sent while payments is down waits") {
    const json without = run_step(s, 1);
    CHECK(without["waited"] == json{2, 3, 4, 5, 6, 7, 8});
    CHECK(without["refused"] == json::array());
  }
}

TEST_CASE("scene pool: the arithmetic of the payments story") {
  const Scenario s = scene("pool");
  SUBCASE("50/s at 80 ms holds about 4 workers") {
    const json d = run_step(s, 0);
    CHECK(d["peak"] == 4);
    CHECK(d["typical"] == 4);
    CHECK(d["exhausted_s"].is_null());
  }
  SUBCASE("a 30 s hang fills a pool of 200 in 4 s") {
    const json d = run_step(s, 1);
    CHECK(d["exhausted_s"] == 4.0);
    CHECK(d["first_timeout_s"] == 30.0);  // the requests already in still time out, at 30 s
    CHECK(d["peak"] == 200);
  }
  SUBCASE("a 2 s timeout with 3 attempts wants 300 workers") {
    const json d = run_step(s, 2);
    CHECK(d["peak"] == 300);
    CHECK(d["exhausted_s"].is_null());  // an unbounded pool, to see what it wants
  }
  SUBCASE("40/s with a 5 s timeout exhausts 150 workers at 3.75 s - before the first timeout fires") {
    const json d = run_step(s, 3);
    CHECK(d["exhausted_s"] == 3.75);
    CHECK(d["first_timeout_s"] == 5.0);
    CHECK(d["peak"] == 150);
  }
  SUBCASE("a breaker that opens after 3 timeouts keeps the pool alive") {
    const json d = run_step(s, 4);
    CHECK(d["exhausted_s"].is_null());
    CHECK(d["peak"] == 100);  // 2 s of arrivals at 50/s, then refusals
    CHECK(d["refused_by_breaker"].get<int>() > 300);
  }
}

TEST_CASE("scene fleet: 20 trials per 30 s without jitter - spread out with it - repeatable per seed") {
  const Scenario s = scene("fleet");
  const json d = run_step(s, 0);
  const json plain = d["runs"][0];
  CHECK(plain["jitter"] == 0.0);
  for (const auto& n : plain["per_bucket"]) CHECK(n == 20);
  CHECK(plain["max_in_one_second"] == 20);
  const json jittered = d["runs"][1];
  CHECK(jittered["max_in_one_second"].get<int>() < 10);
  // Per second of the outage: the herd is whole seconds of 20 and nothing between; with jitter
  // no whole second holds more than the sliding "any one second" figure.
  for (const json& run : d["runs"]) {
    CHECK(run["per_second"].size() == 600);
    int sum = 0;
    int most = 0;
    for (const auto& n : run["per_second"]) {
      sum += n.get<int>();
      most = std::max(most, n.get<int>());
      if (run["jitter"] == 0.0) CHECK((n == 0 || n == 20));
    }
    CHECK(sum == run["trials"].get<int>());
    CHECK(most <= run["max_in_one_second"].get<int>());
  }
  CHECK(jittered["trials"].get<int>() < plain["trials"].get<int>());  // longer cool-downs, fewer trials
  CHECK(run_step(s, 0) == d);                                         // the same seed, the same run
  SceneRun other_seed;
  other_seed.seed = 2;
  CHECK(run_step(s, 0, other_seed)["runs"][1] != jittered);
}

TEST_CASE("scene toggle: 5 failures open it for 3 s - and a recursive retry bursts") {
  const Scenario s = scene("toggle");
  const json d = run_step(s, 0);
  CHECK(d["requests"] == 200);
  CHECK(d["transitions"][0] == "4.400 s CLOSED->OPEN");  // the 5th failure in a row, from 4.0 s at 10/s
  CHECK(d["transitions"][1] == "7.400 s OPEN->HALF_OPEN");
  CHECK(d["transitions"][2] == "7.400 s HALF_OPEN->OPEN");  // still failing until 8 s: the probe fails
  CHECK(d["per_second"][0]["answered"] == 10);
  CHECK(d["per_second"][5]["fallback"] == 10);
  CHECK(d["simulated_plain_largest_burst"] == 1);
  CHECK(d["simulated_recursive_largest_burst"] == 5);
  CHECK(d["simulated_recursive_backend_calls"].get<int>() > d["simulated_plain_backend_calls"].get<int>());
}

TEST_CASE("fallbacks: a fallback cannot pass for an answer") {
  const Reply<int> answer = Answered<int>{42};
  const Reply<int> degraded = Degraded<int>{0, "pending"};
  const Reply<int> error = FastError{"down"};
  REQUIRE(real_answer(answer) != nullptr);
  CHECK(*real_answer(answer) == 42);
  CHECK(real_answer(degraded) == nullptr);
  CHECK(real_answer(error) == nullptr);
  CHECK(is_fallback(degraded));
  CHECK(std::string(kind_of(Reply<int>{Cached<int>{1, {}}})) == "cached");
}

TEST_CASE("scene files: mistakes name the field") {
  auto error = [](const std::string& action) {
    auto s = parse_scenario(R"({"breakers": {"b": {}}, "steps": [{"do": [)" + action + "]}]}", "s.json");
    return s.ok() ? std::string("(accepted)") : s.error().message;
  };
  CHECK(error(R"({"action": "charges", "breaker": "b", "send_at": ["0s"], "backend": [{"from": "1s"}]})") ==
        "s.json: steps[0].do[0].backend[0].from: the first phase starts at 0s");
  CHECK(error(R"({"action": "charges", "breaker": "b", "send_at": [], "backend": [{"from": "0s"}]})") ==
        "s.json: steps[0].do[0].send_at: expected a non-empty array of durations");
  CHECK(error(R"({"action": "pool", "breaker": "none", "rate": 0, "backend": [{"from": "0s"}]})") ==
        "s.json: steps[0].do[0].rate: expected requests per second, above 0");
  CHECK(error(R"({"action": "fleet", "breaker": "none"})") ==
        "s.json: steps[0].do[0].breaker: this scene needs a breaker");
  CHECK(error(R"({"action": "traffic", "breaker": "b", "speed": 3})") ==
        "s.json: steps[0].do[0].speed: not a field here");
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST_CASE("cb-lab scene payments --live: the real server tells the simulation's story") {
  const auto r = cb::testing::run({CB_LAB_BIN, "scene", "payments", "--live", "--json", "--server",
                                   "http://127.0.0.1:" + std::to_string(free_port())});
  CHECK(r.exit_code == 0);
  const json d = json::parse(r.out);
  CHECK(d["live"] == true);
  CHECK(d["steps"][0]["results"][0]["waited"] == json{2, 3, 4, 7});
  CHECK(d["steps"][0]["results"][0]["refused"] == json{5, 6, 8});
  CHECK(d["steps"][0]["results"][0]["agrees_with_simulation"] == true);
  CHECK(d["steps"][1]["results"][0]["agrees_with_simulation"] == true);
  CHECK(d["steps"][2]["results"][0]["agrees_with_simulation"] == true);
  // The breaker keeps the scene's time, not the wall's: every charge reaches it at the moment the
  // simulation sends it, so a busy machine's late sends and late cuts cannot move a trial.
  const auto r_sim = cb::testing::run({CB_LAB_BIN, "scene", "payments", "--json"});
  const json sim = json::parse(r_sim.out);
  for (std::size_t step = 0; step < 3; ++step)
    for (std::size_t c = 0; c < 10; ++c) {
      CAPTURE(step);
      CAPTURE(c);
      CHECK(d["steps"][step]["results"][0]["charges"][c]["sent_s"] ==
            sim["steps"][step]["results"][0]["charges"][c]["sent_s"]);
    }
}

TEST_CASE("cb-lab scene toggle --live: short periods against a real toggling server") {
  cb::testing::TempDir t;
  std::ifstream in(std::string(CB_SCENARIOS) + "/toggle.json");
  std::stringstream text;
  text << in.rdbuf();
  json scene_file = json::parse(text.str());
  scene_file["breakers"]["client"]["wait_in_open"] = "300ms";
  auto& traffic = scene_file["steps"][0]["do"][0];
  traffic["toggle_period"] = "400ms";
  traffic["rate"] = 50;
  traffic["duration"] = "2s";
  traffic["timeout"] = "200ms";
  t.write("toggle.json", scene_file.dump());
  const auto r = cb::testing::run({CB_LAB_BIN, "scene", t / "toggle.json", "--live", "--json", "--server",
                                   "http://127.0.0.1:" + std::to_string(free_port())});
  CHECK(r.exit_code == 0);
  const json d = json::parse(r.out)["steps"][0]["results"][0];
  CHECK(d["requests"].get<int>() >= 95);  // 50/s for 2 s
  CHECK(d["answered"].get<int>() > 0);
  CHECK(d["fallbacks"].get<int>() > 0);
  CHECK(d["transitions"].size() >= 2);
  CHECK(d["per_second"].size() == 2);
}

}  // namespace
}  // namespace cb::lab

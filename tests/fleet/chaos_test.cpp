// The fleet under faults, with real processes: twenty `cb-lab fleet-member`s share one breaker
// through a real redis-server while the downstream is down for the whole run, and the test
// does to them what production does: kill -9 a process (perhaps holding a permit), restart
// Redis (its state lost), stop Redis (SIGSTOP) for several cool-downs. Each member prints a
// line per trial as it sends it, so what a killed process did is known. These run in real
// time (a 100 ms cool-down, about 4 s a case): the figures are counts, which the leases make
// exact whatever the timing; only the pauses between faults are times.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "process.h"
#include "redis_server.h"
#include "temp_dir.h"

namespace {

using namespace std::chrono_literals;
using cb::testing::Process;
using cb::testing::RedisServer;
using cb::testing::TempDir;
using SteadyTime = std::chrono::steady_clock;

constexpr long long kCooldownUs = 100'000;

struct Figures {
  int worst_shared = 0;        // the most trials any one generation (a HALF_OPEN) had
  int shared_generations = 0;  // how many HALF_OPENs had trials
  int worst_local = 0;         // the most local-rule trials in one cool-down-long stretch
  int local_trials = 0;
};

class ChaosFleet {
 public:
  // The members are started, each says it is ready (its breaker made, Redis reached) on the
  // shared pipe, and only then do all get the same start: a slow machine (CI's ASan build beside
  // clang-tidy) can take seconds to bring twenty processes up, and a start fixed before they
  // were would find them late.
  ChaosFleet(int n, int permits, long long run_us, long long degrade_after_us = 1'000'000) {
    int ready[2];
    REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
    for (int i = 0; i < n; ++i) {
      members_.push_back(std::make_unique<Process>(std::vector<std::string>{CB_LAB_BIN,
                                                                            "fleet-member",
                                                                            "--shared",
                                                                            redis_.address(),
                                                                            "--name",
                                                                            "chaos",
                                                                            "--instance",
                                                                            "c" + std::to_string(i),
                                                                            "--start-from-stdin",
                                                                            "--first-us",
                                                                            std::to_string(i * 100),
                                                                            "--down-us",
                                                                            std::to_string(run_us),
                                                                            "--run-us",
                                                                            std::to_string(run_us),
                                                                            "--every-us",
                                                                            "2000",
                                                                            "--cooldown-us",
                                                                            std::to_string(kCooldownUs),
                                                                            "--permits",
                                                                            std::to_string(permits),
                                                                            "--lease-us",
                                                                            std::to_string(3 * kCooldownUs),
                                                                            "--degrade-after-us",
                                                                            std::to_string(degrade_after_us),
                                                                            "--report-every-us",
                                                                            "50000"},
                                                   std::vector<std::string>{}, ready[1]));
    }
    ::close(ready[1]);
    int said = 0;
    pollfd p{ready[0], POLLIN, 0};
    for (char c = 0; said < n && ::poll(&p, 1, 60'000) == 1 && ::read(ready[0], &c, 1) == 1;) ++said;
    ::close(ready[0]);
    REQUIRE_MESSAGE(said == n, said << " of " << n << " members said they were ready");
    start_ = SteadyTime::now() + 100ms;
    const std::string start_us =
        std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(start_.time_since_epoch()).count()) + "\n";
    for (auto& m : members_) m->send(start_us);
  }

  RedisServer& redis() { return redis_; }
  void at(std::chrono::milliseconds since_start) const { std::this_thread::sleep_until(start_ + since_start); }
  void kill(int i) const { members_[static_cast<std::size_t>(i)]->signal(SIGKILL); }

  Figures finish() {
    std::map<unsigned long long, int> per_generation;
    std::map<long long, int> local_per_stretch;
    Figures f;
    // What the members say of themselves, for a run whose figures are not what they should be.
    long long calls = 0;
    long long refused = 0;
    long long sync_failures = 0;
    std::map<int, int> exits;
    std::string first_error;
    for (auto& m : members_) {
      ++exits[m->wait(60s).value_or(-1)];
      std::istringstream lines(m->read_rest_of_stdout());
      for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) continue;
        if (!j.contains("trial")) {
          calls += j.value("calls", 0LL);
          refused += j.value("refused", 0LL);
          sync_failures += j.value("sync_failures", 0LL);
          if (first_error.empty()) first_error = j.value("last_error", "");
          continue;
        }
        const auto& t = j["trial"];
        if (t["local"].get<bool>()) {
          ++f.local_trials;
          ++local_per_stretch[static_cast<long long>(t["t_ms"].get<double>() * 1000) / kCooldownUs];
        } else {
          ++per_generation[t["generation"].get<unsigned long long>()];
        }
      }
      if (const std::string err = m->read_all_stderr(); first_error.empty() && !err.empty())
        first_error = err.substr(0, 400);
    }
    for (const auto& [g, k] : per_generation) f.worst_shared = std::max(f.worst_shared, k);
    f.shared_generations = static_cast<int>(per_generation.size());
    for (const auto& [s, k] : local_per_stretch) f.worst_local = std::max(f.worst_local, k);
    std::ostringstream exit_codes;
    for (const auto& [code, k] : exits) exit_codes << ' ' << k << "x" << code;
    MESSAGE("worst shared " << f.worst_shared << " over " << f.shared_generations << " HALF_OPENs; local trials "
                            << f.local_trials << ", worst local " << f.worst_local << ". Members: exits"
                            << exit_codes.str() << "; " << calls << " calls, " << refused << " refused, "
                            << sync_failures
                            << " failed syncs; first error: " << (first_error.empty() ? "none" : first_error));
    return f;
  }

 private:
  TempDir dir_;
  RedisServer redis_{dir_.path()};
  std::vector<std::unique_ptr<Process>> members_;
  SteadyTime::time_point start_;
};

TEST_CASE("kill -9 of five members, some holding permits: never more than M trials in a cool-down") {
  ChaosFleet fleet(20, 3, 4'000'000);
  for (int k = 0; k < 5; ++k) {
    fleet.at(std::chrono::milliseconds{1000 + 300 * k});
    fleet.kill(k * 3);
  }
  const Figures f = fleet.finish();
  CHECK(f.worst_shared <= 3);
  CHECK(f.worst_shared >= 1);
  CHECK(f.shared_generations >= 10);  // the fleet went on trying after the kills
  CHECK(f.worst_local <= 6);          // a member starved of Redis by a busy machine ranks too
}

TEST_CASE("Redis restarted mid-outage (its state lost): still at most M trials a cool-down") {
  ChaosFleet fleet(20, 1, 4'000'000);
  fleet.at(1500ms);
  fleet.redis().stop();
  fleet.at(1600ms);
  fleet.redis().start();
  const Figures f = fleet.finish();
  CHECK(f.worst_shared == 1);
  CHECK(f.shared_generations >= 10);
  CHECK(f.worst_local <= 2);  // Redis is back within the 1 s the members wait before going local
}

TEST_CASE("Redis stopped for five cool-downs: the members go local and about M of 20 try") {
  ChaosFleet fleet(20, 3, 4'000'000, 150'000);
  fleet.at(1500ms);
  fleet.redis().pause();
  fleet.at(2000ms);
  fleet.redis().resume();
  const Figures f = fleet.finish();
  CHECK(f.worst_shared <= 3);
  CHECK(f.local_trials >= 1);
  // The ranking lets M instances try in each local cool-down; a stretch of the clock may hold
  // the ends of two of them, so up to 2M: "about M", never the 20 of independent breakers.
  CHECK(f.worst_local <= 6);
}

// The scene itself: 40 cb-lab processes, 20 sharing one breaker.
TEST_CASE("cb-lab scene fleet --shared: 20 processes send one trial a cool-down, 20 with their own send many") {
  TempDir dir;
  RedisServer redis(dir.path());
  // The scene's 10-minute outage in 3 s: a 150 ms cool-down, a call every 5 ms per process.
  const cb::testing::Ran ran =
      cb::testing::run({CB_LAB_BIN, "scene", "fleet", "--shared", redis.address(), "--scale", "0.005", "--json"}, "",
                       {}, std::chrono::seconds{120});
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
  const auto scene = nlohmann::json::parse(ran.out);
  const auto& run = scene["steps"][0]["results"][0]["processes_run"];
  CHECK(run["processes"] == 20);
  const auto& shared = run["shared"];
  CHECK(shared["max_per_cooldown"] == 1);
  // 19 on an idle machine; fewer when a busy one starves Redis past the members' timeouts and
  // they run on local rules for a while (counted apart, as local_trials).
  CHECK(shared["cooldowns"].get<int>() >= 3);
  CHECK(shared["trials"] == shared["cooldowns"]);
  CHECK(run["independent"]["max_per_cooldown"].get<int>() >= 5);
}

}  // namespace

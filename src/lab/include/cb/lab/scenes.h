#pragma once
// The scenes teach by watching: payments hanging behind checkout, a worker pool filling
// up, a server that toggles, a fleet of instances. Each is data in scenarios/NAME.json (steps of
// the actions below), run on the same engine as the lab, simulated on a manual clock (fast,
// exact) or, where it makes sense, live against the flaky server with time scaled down.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cb/breaker/options.h"
#include "cb/result.h"
#include "cb/flaky/endpoints.h"

namespace cb::lab {

using Micros = std::chrono::microseconds;

// A scripted dependency: from each phase's start on, it answers this way.
struct BackendPhase {
  Micros from{0};
  enum class Answer { Ok, Hang, Error } answer = Answer::Ok;
  Micros latency{0};
};

// The payments story's "Predict first": charges one at a time through a breaker (or none), each wrapped in
// a timeout, against a payments service that hangs and recovers.
struct ChargesSpec {
  std::string breaker;  // a name under "breakers", or "none"
  std::vector<Micros> send_at;
  Micros timeout{2'000'000};
  std::vector<BackendPhase> backend;
  std::string fallback = "degraded";  // degraded | cached | error
};

// The payments story's "How one slow service spreads": requests at a fixed rate, each holding a worker for
// as long as its calls take (retries included), against a dependency that slows or hangs.
struct PoolSpec {
  std::string breaker = "none";
  double rate = 50;  // requests per second
  Micros duration{10'000'000};
  int workers = 200;  // 0: as many as needed (to see how many it wants)
  std::vector<BackendPhase> backend;
  Micros timeout{30'000'000};
  int attempts = 1;
  Micros sample_every{500'000};
};

// The toggle scene: a client calling the toggling server, a default action as its fallback; and, beside
// it, how many calls the exercise's own recursive retry would have made for the same traffic.
struct TrafficSpec {
  std::string breaker;
  std::string path{flaky::path::kToggle};
  double rate = 10;  // calls per second
  Micros duration{20'000'000};
  Micros toggle_period{4'000'000};
  Micros timeout{1'000'000};
};

// The payments story's "20 instances": each with its own breaker, payments down for a while, trials counted.
struct FleetSpec {
  std::string breaker;
  int instances = 20;
  Micros down_for{600'000'000};
  Micros request_every{1'000'000};
  Micros start_spread{1'000'000};  // the instances' first calls are spread over this
  Micros bucket{30'000'000};
  std::vector<double> jitters{0.0, 0.5};
  std::uint64_t seed = 1;
};

using SceneSpec = std::variant<ChargesSpec, PoolSpec, TrafficSpec, FleetSpec>;

// Parses one scene action's fields ("charges", "pool", "traffic", "fleet"); errors name the field.
[[nodiscard]] Result<SceneSpec> parse_scene_action(const std::string& kind, const nlohmann::json& j,
                                                   const std::string& path);

// How a scene runs: simulated, or live against a server with time scaled by `scale`.
struct SceneRun {
  bool live = false;
  double scale = 1.0;
  std::string server;              // live: the flaky server's URL
  std::optional<Micros> duration;  // overrides a traffic scene's duration
  std::optional<std::uint64_t> seed;
  bool processes = false;  // fleet: real processes run beside the simulation (cb-lab scene --shared)
};

// A scene's outcome: lines for a person, and the same as data (--json; what tests assert).
struct SceneOutput {
  std::vector<std::string> lines;
  nlohmann::json data;
};

// `breaker` is the configured breaker the action names (nullopt for "none").
[[nodiscard]] Result<SceneOutput> run_charges(const ChargesSpec& spec, const std::optional<BreakerOptions>& breaker,
                                              const SceneRun& how);
[[nodiscard]] Result<SceneOutput> run_pool(const PoolSpec& spec, const std::optional<BreakerOptions>& breaker,
                                           const SceneRun& how);
[[nodiscard]] Result<SceneOutput> run_traffic(const TrafficSpec& spec, const BreakerOptions& breaker,
                                              const SceneRun& how);
[[nodiscard]] Result<SceneOutput> run_fleet(const FleetSpec& spec, const BreakerOptions& breaker, const SceneRun& how);

// Which phase the backend is in at `t` (the last one that has begun).
[[nodiscard]] const BackendPhase& phase_at(const std::vector<BackendPhase>& backend, Micros t);

}  // namespace cb::lab

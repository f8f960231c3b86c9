#pragma once
// `cb-lab scene fleet --shared ADDRESS`: the fleet scene with real processes. Twenty (the
// scene's count) cb-lab fleet-member processes share one breaker through Redis, then as many
// run a breaker each (jittered); both on the scene's outage, its time scaled down. What it
// measures is what the fleet is for: trials reaching the downstream in each cool-down.

#include <string>

#include "cb/lab/scenes.h"

namespace cb::cli {

struct FleetProcessesRun {
  std::string shared;   // the Redis the fleet shares
  double scale = 0.02;  // real seconds per scene second: 10 minutes in 12 s
  std::string live;     // the flaky server to call, or empty to simulate the outage
};

[[nodiscard]] Result<lab::SceneOutput> run_fleet_processes(const lab::FleetSpec& spec, const BreakerOptions& breaker,
                                                           const FleetProcessesRun& how);

}  // namespace cb::cli

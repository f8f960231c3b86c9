#pragma once
// cb-lab fleet-member: one process of `cb-lab scene fleet --shared`, started by the scene
// itself (not listed in --help). It calls a downstream on a beat through a breaker, shared
// through Redis or its own, and prints a JSON line for each trial as it is sent (so a process
// killed with -9 has told what it did) and one with its counts at the end.

#include <cstdint>
#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct FleetMemberOptions {
  std::string shared;        // redis://HOST:PORT or unix:///PATH; empty with --independent
  bool independent = false;  // a breaker of its own, with the cool-down's jitter
  std::string name = "checkout";
  std::string instance;
  long long start_us = 0;         // on CLOCK_MONOTONIC, the same in every process of the machine
  long long start_in_us = -1;     // instead: this long after the process starts (its clock may be faked)
  bool start_from_stdin = false;  // instead: say "ready" on fd 3, then read the start from stdin
  long long first_us = 0;         // this instance's first call, after start
  long long down_from_us = 0;     // the downstream fails from start + down_from ...
  long long down_us = 0;          // ... for this long
  long long run_us = 0;
  long long every_us = 0;
  long long cooldown_us = 0;
  int permits = 1;
  double jitter = 0.0;
  std::uint64_t seed = 1;
  long long report_every_us = 75'000;
  long long lease_us = 2'000'000;
  long long degrade_after_us = 500'000;
  std::string live;          // a flaky server: /always500 while down, /fast after
  bool always_fail = false;  // this instance's own path to the downstream is broken
  int quorum = 1;
};

CLI::App* setup_fleet_member(CLI::App& app, FleetMemberOptions& options);
ExitCode fleet_member_command(const FleetMemberOptions& options);

}  // namespace cb::cli

#pragma once
// How a process takes part in a fleet that shares one breaker through Redis. The breaker's own
// rules (rates, minimum, cool-down, trials) stay in BreakerOptions; these say where the fleet
// is, who this process is, and how often it talks to the fleet.

#include <chrono>
#include <string>

#include "cb/breaker/options.h"
#include "cb/result.h"

namespace cb::fleet {

using namespace std::chrono_literals;

struct FleetOptions {
  // redis://HOST:PORT or unix:///PATH (a socket in a directory only the fleet can reach).
  std::string address;
  // The breaker's name: every process with this name (and the same rules) shares one breaker.
  // Its keys are {cb:NAME}:s, :w, :f and :m (one hash tag, so one cluster slot).
  std::string name;
  // Unique per process; the fleet counts instances by it (the quorum, the ranking when Redis
  // is away). Empty: HOSTNAME:PID.
  std::string instance;
  // How often the reporter sends its counts: one round trip per interval whatever the call
  // rate. 0: no reporter thread; the owner calls sync() itself (tests, the scene's clocked runs).
  Duration report_every{75ms};
  // Each connect, send and receive waits at most this long (hiredis socket timeouts).
  Duration redis_timeout{100ms};
  // With no answer for this long the process applies the rules on its own counts.
  Duration degrade_after{500ms};
  // The fleet trips only on failures from at least this many instances in the window.
  int quorum = 1;
  // A trial permit not settled within this long after it was granted counts as a failed trial.
  Duration lease{5s};
  // The fleet's window: its length and how many buckets it is kept in.
  Duration window{10s};
  int buckets = 10;
  // An instance silent for this long leaves the member list.
  Duration member_ttl{5s};
  // The function library (fleet/redis/cb_fleet.lua) is loaded with FUNCTION LOAD REPLACE when
  // the process first reaches Redis, so a newer build's library replaces an older one, and
  // again on "Function not found". Off when the deployment loads it itself (a Redis user
  // that may not run FUNCTION): a missing library is then an error the status names.
  bool load_functions = true;
};

// Whether `address` names a Redis (redis://HOST:PORT or unix:///PATH) that answers PING within
// `timeout`: for programs that must not start a fleet against nothing (cb-lab scene --shared).
// The error says which: the address's form, or what the connection met.
[[nodiscard]] Result<void> check_redis(const std::string& address, Duration timeout);

// The fleet's rules as the Redis function reads them (13 numbers, "10000,10,..."), after
// checking that the breaker's options can be shared: an error names the field.
[[nodiscard]] Result<std::string> fleet_rules(const BreakerOptions& breaker, const FleetOptions& fleet);

}  // namespace cb::fleet

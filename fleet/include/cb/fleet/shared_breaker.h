#pragma once
// A breaker shared by a fleet of processes through Redis, local first:
//
//   cb::fleet::FleetOptions fleet{.address = "redis://127.0.0.1:6379", .name = "payments"};
//   auto breaker = cb::fleet::SharedBreaker::create(options, fleet, clock).value();
//   cb::Admission a = breaker->try_acquire();       // atomics only: no lock, no system call
//   if (!a) return fallback();
//   breaker->record(a.ticket, {verdict, elapsed});   // atomics only in CLOSED
//
// Every call decides on what this process last heard from the fleet; a reporter thread sends
// the counts every report_every and brings back the fleet's state (Redis decides trips on its
// own clock). Trials are permits leased by Redis: at most permitted_calls fleet-wide per
// cool-down. Without Redis for degrade_after, the process applies the same rules to its own
// calls (a local CircuitBreaker), and only the instances that rank first for the cool-down may
// send a trial. docs/FLEET.md has the protocol and its figures.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/fleet/fleet_options.h"

namespace cb::fleet {

// A ticket of the local rules (Redis away) carries this bit on its generation; without it the
// generation is the fleet's (one HALF_OPEN's, for a trial).
inline constexpr std::uint64_t kLocalTicket = std::uint64_t{1} << 62U;
[[nodiscard]] constexpr bool is_local(const Ticket& t) noexcept { return (t.generation & kLocalTicket) != 0; }

struct FleetStatus {
  State state = State::Closed;      // as this process acts on it
  std::uint64_t generation = 0;     // the fleet's generation (Redis counts them)
  bool local = false;               // Redis has not answered for degrade_after: local rules
  std::uint64_t syncs = 0;          // round trips answered
  std::uint64_t sync_failures = 0;  // round trips that failed or timed out
  std::uint64_t trials = 0;         // trials this process was granted and sent
  int permits_held = 0;             // granted for the current HALF_OPEN, not yet used
  int members = 0;                  // instances the fleet heard from lately
  std::string last_error;           // why the last failed round trip failed
};

class SharedBreaker {
 public:
  // Checks the options (errors name the field), connects and loads the function library if it
  // can; a Redis that is not there yet is not an error (the process starts on local rules and
  // joins when it answers). `clock` and `random` must outlive the breaker.
  [[nodiscard]] static Result<std::unique_ptr<SharedBreaker>> create(const BreakerOptions& breaker, FleetOptions fleet,
                                                                     const Clock& clock,
                                                                     RandomSource* random = nullptr);
  ~SharedBreaker();
  SharedBreaker(const SharedBreaker&) = delete;
  SharedBreaker& operator=(const SharedBreaker&) = delete;

  [[nodiscard]] Admission try_acquire();
  RecordEffect record(const Ticket& ticket, const CallResult& result);
  void release(const Ticket& ticket);

  // One round trip now, on the caller's thread (with report_every 0, the only way one happens).
  // False when Redis did not answer.
  bool sync();
  [[nodiscard]] FleetStatus status() const;
  [[nodiscard]] const std::string& instance() const noexcept;

  class Impl;

 private:
  explicit SharedBreaker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether `instance` is among the first `permits` of `members` for a cool-down: each ranks by a
// hash of (name, key), so every process computes the same order without asking anyone.
[[nodiscard]] bool ranks_first(const std::string& instance, const std::vector<std::string>& members, std::uint64_t key,
                               int permits);

}  // namespace cb::fleet

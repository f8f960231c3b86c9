#pragma once
// The circuit breaker: one configurable, thread-safe state machine for every variant the lab,
// the exercises and the scenes use. Usage:
//
//   auto breaker = cb::CircuitBreaker::create(cb::profiles::lab(3s), clock).value();
//   cb::Admission a = breaker->try_acquire();
//   if (!a) return fallback();                      // refused at once, nothing was called
//   auto t0 = clock.now();
//   auto answer = call_dependency();
//   breaker->record(a.ticket, {classify(answer), clock.now() - t0});
//
// or all of that in one call with a typed fallback: cb::call (call.h).
//
// The rules themselves (when to trip, when to half-open, how trials decide) are all in
// state_machine.cpp, and how the machine is shared between threads is told, once, at the top of
// state_machine.h. This class adds the lock, the clock and the listeners.

#include <memory>
#include <optional>
#include <vector>

#include "cb/breaker/cooldown.h"
#include "cb/breaker/metrics.h"
#include "cb/breaker/options.h"
#include "cb/breaker/outcome.h"
#include "cb/result.h"
#include "cb/breaker/state.h"
#include "cb/breaker/time.h"
#include "cb/breaker/transition.h"
#include "cb/thread_safety.h"

namespace cb {

enum class Decision : std::uint8_t {
  Permitted,
  RefusedOpen,          // OPEN and the cool-down has not ended
  RefusedHalfOpenFull,  // HALF_OPEN and every trial slot is taken
  RefusedForcedOpen,    // Mode::ForcedOpen
};
[[nodiscard]] std::string_view to_string(Decision d) noexcept;

// Identifies the state a permitted call was admitted in. A result whose generation is no
// longer current is late: its state has ended, and it counts toward nothing. Every refusal's
// ticket has generation kRefused (no state has it): recording or releasing it does nothing.
inline constexpr std::uint64_t kRefused = 0;
struct Ticket {
  std::uint64_t generation = 0;
  State admitted_in = State::Closed;
};

struct [[nodiscard]] Admission {
  Decision decision = Decision::Permitted;
  Ticket ticket;
  [[nodiscard]] bool permitted() const noexcept { return decision == Decision::Permitted; }
  explicit operator bool() const noexcept { return permitted(); }
};

enum class RecordEffect : std::uint8_t {
  Counted,      // the outcome counted in the current state
  Ignored,      // Verdict::Ignored: counted nowhere (a half-open slot was given back)
  Late,         // its state had ended; counted nowhere
  NotRecorded,  // Mode::Disabled
  Refused,      // the ticket of a refused call: it never ran, so there is nothing to count
};

class StateMachine;

class CircuitBreaker {
 public:
  // Validates the options (an error names the field). `clock` and `random` must outlive the
  // breaker; `random` is required when the cool-down has jitter.
  [[nodiscard]] static Result<std::unique_ptr<CircuitBreaker>> create(BreakerOptions options, const Clock& clock,
                                                                      RandomSource* random = nullptr);
  ~CircuitBreaker();
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // Decides and reserves in one critical section: two threads can never both take the last
  // half-open slot. Every refusal's ticket is inert (generation kRefused), whichever path
  // refused it: record() answers RecordEffect::Refused and counts nothing.
  [[nodiscard]] Admission try_acquire();
  RecordEffect record(const Ticket& ticket, const CallResult& result);
  // The permitted call was never made, or was abandoned: give back its half-open slot.
  void release(const Ticket& ticket);

  // Status queries apply the lazy time rules too: an OPEN breaker whose cool-down has ended
  // reports HALF_OPEN (and notifies listeners) even if no call has come.
  [[nodiscard]] State state();
  [[nodiscard]] Status status();

  [[nodiscard]] Snapshot snapshot();
  // Continues from a snapshot (replacing all state). Trials that were outstanding when it was
  // taken will never report, so their slots are free again. The generation never moves back:
  // it becomes the snapshot's, or one past this breaker's own if that is higher, so a ticket
  // issued before the restore still arrives late. The listeners are not called.
  [[nodiscard]] Result<void> restore(const Snapshot& snapshot);

  void force_open();
  void force_closed();
  void disable();
  // Back to the state machine (Mode::Normal), CLOSED, with fresh counts.
  void reset();

  void subscribe(TransitionListener listener);

  [[nodiscard]] const BreakerOptions& options() const noexcept;
  // The clock it was created with (cb::call times calls on it).
  [[nodiscard]] const Clock& clock() const noexcept { return clock_; }

 private:
  CircuitBreaker(const ValidOptions& options, const Clock& clock, RandomSource* random);
  class Operation;  // one locked operation on the machine (breaker.cpp)
  void set_mode(Mode mode);
  void deliver_pending() CB_EXCLUDES(mu_);

  const Clock& clock_;
  const Duration coarse_lag_;  // clock_.coarse_lag(), read once
  Mutex mu_;
  std::vector<Transition> undelivered_ CB_GUARDED_BY(mu_);
  bool delivering_ CB_GUARDED_BY(mu_) = false;
  std::shared_ptr<const std::vector<TransitionListener>> listeners_ CB_GUARDED_BY(mu_);
  // Guarded field by field by mu_, which it is made with; the pointer itself never changes.
  const std::unique_ptr<StateMachine> machine_;
};

}  // namespace cb

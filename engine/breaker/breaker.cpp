// The lock, the clock and the listeners around the state machine.
#include "cb/breaker/breaker.h"

#include <type_traits>

#include "state_machine.h"

namespace cb {

Result<std::unique_ptr<CircuitBreaker>> CircuitBreaker::create(BreakerOptions options, const Clock& clock,
                                                               RandomSource* random) {
  auto valid = validate(std::move(options));
  if (!valid) return valid.error();
  if ((*valid)->cooldown.jitter > 0.0 && random == nullptr)
    return Error{"cooldown.jitter: a jittered cool-down needs a RandomSource, and none was given"};
  return std::unique_ptr<CircuitBreaker>(new CircuitBreaker(*valid, clock, random));
}

CircuitBreaker::CircuitBreaker(const ValidOptions& options, const Clock& clock, RandomSource* random)
    : clock_(clock),
      coarse_lag_(clock.coarse_lag()),
      machine_(std::make_unique<StateMachine>(options, random, clock.now(), undelivered_)),
      listeners_(std::make_shared<const std::vector<TransitionListener>>()) {}

CircuitBreaker::~CircuitBreaker() = default;

// Runs f on the machine in one critical section, then hands any transitions it made to the
// listeners, outside the lock and in order.
template <class F>
auto CircuitBreaker::locked(F&& f, std::optional<TimePoint> known_now) {
  std::unique_lock lock(mu_);
  // The lock-free paths act on what was published last: publish whatever f did, even if it
  // threw part-way (an allocation in a transition), before the lock is let go.
  struct PublishOnExit {
    StateMachine& machine;
    bool done = false;
    ~PublishOnExit() {
      if (!done) machine.publish();
    }
  } publish{*machine_};
  LazyNow now(clock_, known_now);
  auto run = [&] { return f(*machine_, now); };
  using R = decltype(run());
  auto finish = [&] {
    machine_->publish();
    publish.done = true;
    bool deliver = false;
    if (!undelivered_.empty()) {
      if (listeners_->empty()) {
        undelivered_.clear();  // nobody to tell
      } else if (!delivering_) {
        delivering_ = true;  // this thread delivers; others just queue behind it
        deliver = true;
      }
    }
    lock.unlock();
    if (deliver) deliver_pending();
  };
  if constexpr (std::is_void_v<R>) {
    run();
    finish();
  } else {
    R result = run();
    finish();
    return result;
  }
}

// One thread at a time delivers, taking batches until the queue is empty; whoever makes a
// transition meanwhile only queues it. So listeners see every transition once, in the order
// the machine made them, never concurrently, and may call back into the breaker.
void CircuitBreaker::deliver_pending() {
  struct ClearOnThrow {
    CircuitBreaker* self;
    bool done = false;
    ~ClearOnThrow() {
      if (done) return;
      std::lock_guard lock(self->mu_);
      self->delivering_ = false;
    }
  } guard{this};
  for (;;) {
    std::vector<Transition> batch;
    std::shared_ptr<const std::vector<TransitionListener>> listeners;
    {
      std::lock_guard lock(mu_);
      if (undelivered_.empty()) {
        delivering_ = false;
        guard.done = true;
        return;
      }
      batch.swap(undelivered_);
      listeners = listeners_;
    }
    for (const Transition& t : batch) {
      for (const auto& listener : *listeners) listener(t);
    }
  }
}

// The common calls take no lock: a call in CLOSED, its plain success while nothing is going
// wrong, and a refusal while OPEN (StateMachine's "without the caller's lock" paths). Anything
// else, or anything they cannot be sure of, takes the lock; a clock reading the refusal path
// made is handed on.
Admission CircuitBreaker::try_acquire() {
  if (const std::optional<Ticket> t = machine_->admit_without_lock()) return {Decision::Permitted, *t};
  std::optional<TimePoint> now;
  if (const std::optional<Decision> refused = machine_->refuse_without_lock(clock_, coarse_lag_, now))
    return {*refused, {kRefused, State::Open}};
  return locked([](StateMachine& m, LazyNow& lazy) { return m.admit(lazy); }, now);
}

RecordEffect CircuitBreaker::record(const Ticket& ticket, const CallResult& result) {
  if (machine_->record_without_lock(ticket, result)) return RecordEffect::Counted;
  return locked([&](StateMachine& m, LazyNow& now) { return m.record(ticket, result, now); });
}

void CircuitBreaker::release(const Ticket& ticket) {
  locked([&](StateMachine& m, LazyNow&) { m.release(ticket); });
}

State CircuitBreaker::state() {
  return locked([](StateMachine& m, LazyNow& now) {
    m.observe(now);
    return m.state();
  });
}

Status CircuitBreaker::status() {
  return locked([](StateMachine& m, LazyNow& now) { return m.status(now); });
}

Snapshot CircuitBreaker::snapshot() {
  return locked([](StateMachine& m, LazyNow&) { return m.snapshot(); });
}

Result<void> CircuitBreaker::restore(const Snapshot& snapshot) {
  return locked([&](StateMachine& m, LazyNow& now) { return m.restore(snapshot, now); });
}

void CircuitBreaker::force_open() {
  locked([](StateMachine& m, LazyNow& now) { m.set_mode(Mode::ForcedOpen, now); });
}
void CircuitBreaker::force_closed() {
  locked([](StateMachine& m, LazyNow& now) { m.set_mode(Mode::ForcedClosed, now); });
}
void CircuitBreaker::disable() {
  locked([](StateMachine& m, LazyNow& now) { m.set_mode(Mode::Disabled, now); });
}
void CircuitBreaker::reset() {
  locked([](StateMachine& m, LazyNow& now) { m.set_mode(Mode::Normal, now); });
}

void CircuitBreaker::subscribe(TransitionListener listener) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<std::vector<TransitionListener>>(*listeners_);
  next->push_back(std::move(listener));
  listeners_ = std::move(next);
}

const BreakerOptions& CircuitBreaker::options() const noexcept { return machine_->options(); }

}  // namespace cb

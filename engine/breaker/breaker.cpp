// The lock, the clock and the listeners around the state machine.
#include "cb/breaker/breaker.h"

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
      listeners_(std::make_shared<const std::vector<TransitionListener>>()),
      machine_(std::make_unique<StateMachine>(options, random, clock.now(), mu_, undelivered_)) {}

CircuitBreaker::~CircuitBreaker() = default;

// One locked operation on the machine: the lock from construction to finish(), one instant for
// every rule that asks the time, and what the machine did published before the lock goes.
//
// The analysis knows the lock by two names, the breaker's mu_ and the machine's mutex(). They
// are one mutex (the machine is made with mu_, above), so taking it takes both; that is the one
// thing the compiler is told here rather than shown, and why these three members are not
// analysed. Everything done between them is.
class CB_SCOPED_CAPABILITY CircuitBreaker::Operation {
 public:
  Operation(CircuitBreaker& b, std::optional<TimePoint> known_now)
      CB_ACQUIRE(b.mu_, b.machine_->mutex()) CB_NO_THREAD_SAFETY_ANALYSIS : now(b.clock_, known_now),
                                                                            b_(b) {
    b_.mu_.lock();
  }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // An exception left the operation part-way (an allocation in a transition): the lock-free
  // paths act on what was published last, so publish whatever it did before letting go.
  ~Operation() CB_RELEASE() CB_NO_THREAD_SAFETY_ANALYSIS {
    if (!held_) return;
    b_.machine_->publish();
    b_.mu_.unlock();
  }

  // Publishes, lets the lock go, then hands the transitions the operation made to the
  // listeners, outside the lock and in order.
  void finish() CB_RELEASE() CB_NO_THREAD_SAFETY_ANALYSIS {
    b_.machine_->publish();
    bool deliver = false;
    if (!b_.undelivered_.empty()) {
      if (b_.listeners_->empty()) {
        b_.undelivered_.clear();  // nobody to tell
      } else if (!b_.delivering_) {
        b_.delivering_ = true;  // this thread delivers; others just queue behind it
        deliver = true;
      }
    }
    held_ = false;
    b_.mu_.unlock();
    if (deliver) b_.deliver_pending();
  }

  LazyNow now;

 private:
  CircuitBreaker& b_;
  bool held_ = true;
};

// One thread at a time delivers, taking batches until the queue is empty; whoever makes a
// transition meanwhile only queues it. So listeners see every transition once, in the order
// the machine made them, never concurrently, and may call back into the breaker.
void CircuitBreaker::deliver_pending() {
  struct ClearOnThrow {
    CircuitBreaker* self;
    bool done = false;
    ~ClearOnThrow() {
      if (done) return;
      MutexLock lock(self->mu_);
      self->delivering_ = false;
    }
  } guard{this};
  for (;;) {
    std::vector<Transition> batch;
    std::shared_ptr<const std::vector<TransitionListener>> listeners;
    {
      MutexLock lock(mu_);
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
  Operation op(*this, now);
  const Admission admitted = machine_->admit(op.now);
  op.finish();
  return admitted;
}

RecordEffect CircuitBreaker::record(const Ticket& ticket, const CallResult& result) {
  if (machine_->record_without_lock(ticket, result)) return RecordEffect::Counted;
  Operation op(*this, std::nullopt);
  const RecordEffect effect = machine_->record(ticket, result, op.now);
  op.finish();
  return effect;
}

void CircuitBreaker::release(const Ticket& ticket) {
  Operation op(*this, std::nullopt);
  machine_->release(ticket);
  op.finish();
}

State CircuitBreaker::state() {
  Operation op(*this, std::nullopt);
  machine_->observe(op.now);
  const State now = machine_->state();
  op.finish();
  return now;
}

Status CircuitBreaker::status() {
  Operation op(*this, std::nullopt);
  Status now = machine_->status(op.now);
  op.finish();
  return now;
}

Snapshot CircuitBreaker::snapshot() {
  Operation op(*this, std::nullopt);
  Snapshot taken = machine_->snapshot();
  op.finish();
  return taken;
}

Result<void> CircuitBreaker::restore(const Snapshot& snapshot) {
  Operation op(*this, std::nullopt);
  Result<void> restored = machine_->restore(snapshot, op.now);
  op.finish();
  return restored;
}

void CircuitBreaker::force_open() { set_mode(Mode::ForcedOpen); }
void CircuitBreaker::force_closed() { set_mode(Mode::ForcedClosed); }
void CircuitBreaker::disable() { set_mode(Mode::Disabled); }
void CircuitBreaker::reset() { set_mode(Mode::Normal); }

void CircuitBreaker::set_mode(Mode mode) {
  Operation op(*this, std::nullopt);
  machine_->set_mode(mode, op.now);
  op.finish();
}

void CircuitBreaker::subscribe(TransitionListener listener) {
  MutexLock lock(mu_);
  auto next = std::make_shared<std::vector<TransitionListener>>(*listeners_);
  next->push_back(std::move(listener));
  listeners_ = std::move(next);
}

const BreakerOptions& CircuitBreaker::options() const noexcept { return machine_->options(); }

}  // namespace cb

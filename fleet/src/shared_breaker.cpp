// The shared breaker: the hot path on this process's atomics, the reporter that keeps them in
// step with the fleet, and the local rules for when Redis is away.
#include "cb/fleet/shared_breaker.h"

#include <unistd.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <random>
#include <stop_token>
#include <thread>

#include "cb/striped_counters.h"
#include "cb/thread_safety.h"
#include "fleet_library.h"
#include "name_chars.h"
#include "cb/redis_link.h"

namespace cb::fleet {
namespace {

// The word every call reads: the fleet's generation, the state this process acts on, and
// whether it acts on its own rules (Redis away). One atomic, so a call never sees the state
// of one generation with the number of another.
constexpr std::uint64_t kGenerationMask = (std::uint64_t{1} << 60U) - 1;
constexpr unsigned kStateShift = 60;
constexpr std::uint64_t kLocalMode = std::uint64_t{1} << 63U;

constexpr std::uint64_t pack(State s, std::uint64_t generation) {
  return (generation & kGenerationMask) | (static_cast<std::uint64_t>(s) << kStateShift);
}
constexpr State state_of(std::uint64_t w) { return static_cast<State>((w >> kStateShift) & 3U); }

// Permits are counted with their generation in one word, so a permit of one HALF_OPEN can
// never be taken for the next.
constexpr std::uint64_t permits_word(std::uint64_t generation, std::uint64_t n) { return (generation << 16U) | n; }

enum Count : std::uint8_t { Calls, Failures, Slow, kCounts };

struct Batch {
  TimePoint at;
  std::array<std::uint64_t, kCounts> n{};
  std::uint64_t seq = 0;  // Redis applies each batch once, however often it is sent
};

struct Answer {
  State state = State::Closed;
  std::uint64_t generation = 0;
  long long ms_left = 0;
  int granted = 0;
  int members = 0;
  long long cooldown_ms = 0;
  bool has_members = false;
  std::vector<std::string> member_list;
  long long redis_ms = 0;  // Redis's TIME when it answered
};

Result<Answer> read_answer(const RedisReply& r) {
  if (r.kind == RedisReply::Kind::Error) return Error{"redis: " + r.text};
  const auto& e = r.elements;
  if (r.kind != RedisReply::Kind::Array || e.size() != 8 || e[0].kind != RedisReply::Kind::String ||
      e[7].kind != RedisReply::Kind::Integer)
    return Error{"redis: cb_fleet_v1_sync answered something else than its 8 fields"};
  for (std::size_t i = 1; i <= 5; ++i)
    if (e[i].kind != RedisReply::Kind::Integer) return Error{"redis: cb_fleet_v1_sync: field " + std::to_string(i + 1)};
  Answer a;
  if (e[0].text == "closed") {
    a.state = State::Closed;
  } else if (e[0].text == "open") {
    a.state = State::Open;
  } else if (e[0].text == "half_open") {
    a.state = State::HalfOpen;
  } else {
    return Error{"redis: cb_fleet_v1_sync: unknown state " + e[0].text};
  }
  a.generation = static_cast<std::uint64_t>(e[1].integer) & kGenerationMask;
  a.ms_left = e[2].integer;
  a.granted = static_cast<int>(e[3].integer);
  a.members = static_cast<int>(e[4].integer);
  a.cooldown_ms = e[5].integer;
  a.redis_ms = e[7].integer;
  if (e[6].kind == RedisReply::Kind::Array && !e[6].elements.empty()) {
    a.has_members = true;
    for (const RedisReply& m : e[6].elements) a.member_list.push_back(m.text);
  }
  return a;
}

// Tells this process's reports from those of an earlier process with the same instance name.
std::string process_token() {
  std::random_device rd;
  const std::uint64_t t = (std::uint64_t{rd()} << 32U) ^ rd() ^ static_cast<std::uint64_t>(getpid());
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(t));
  return text;
}

std::string default_instance() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string name;
  for (const char* p = host; *p != '\0'; ++p)
    if (name_char(*p)) name += *p;
  return (name.empty() ? "host" : name) + ":" + std::to_string(getpid());
}

// Without Redis each instance keeps its own breaker, with one change: a HALF_OPEN admits one
// trial and one outcome decides (any failure reopens, a success closes), so the instances
// that rank first send one trial each, about `permitted_calls` fleet-wide.
BreakerOptions local_rules(BreakerOptions o) {
  o.half_open.permitted_calls = 1;
  o.half_open.decide = HalfOpenOptions::Decide::EachOutcome;
  o.half_open.successes_to_close = 1;
  return o;
}

}  // namespace

class SharedBreaker::Impl {
 public:
  Impl(const BreakerOptions& breaker, FleetOptions fleet, std::string rules, RedisAddress address, const Clock& clock,
       std::unique_ptr<CircuitBreaker> local)
      : clock_(clock),
        lag_(clock.coarse_lag()),
        permits_(static_cast<int>(breaker.half_open.permitted_calls)),
        slow_after_(breaker.trip.slow_call_duration),
        slow_counts_(breaker.trip.slow_call_rate_percent.has_value()),
        slot_ms_(std::max<long long>(1, breaker.cooldown.base.count() / 1000)),
        fleet_(std::move(fleet)),
        rules_(std::move(rules)),
        link_(std::move(address), fleet_.redis_timeout),
        local_(std::move(local)) {
    if (fleet_.instance.empty()) fleet_.instance = default_instance();
    const std::string tag = "{cb:" + fleet_.name + "}";
    keys_ = {tag + ":s", tag + ":w", tag + ":f", tag + ":m", tag + ":q"};
    token_ = process_token();
    last_answer_ = clock_.now();
  }

  ~Impl() {
    if (reporter_.joinable()) {
      reporter_.request_stop();
      wake();
      reporter_.join();
      (void)sync();  // the last counts and trial results, within one redis_timeout
    }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void start() {
    if (fleet_.report_every > Duration{0}) reporter_ = std::jthread([this](const std::stop_token& st) { run(st); });
  }

  // ---- The hot path ---------------------------------------------------------------------------
  Admission try_acquire() {
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    if ((w & kLocalMode) != 0) return acquire_local();
    const std::uint64_t gen = w & kGenerationMask;
    switch (state_of(w)) {
      case State::Closed: return {Decision::Permitted, {gen, State::Closed}};
      case State::Open: {
        const Duration::rep until = open_until_.load(std::memory_order_acquire);
        if ((clock_.coarse_now() + lag_).time_since_epoch().count() < until ||
            clock_.now().time_since_epoch().count() < until)
          return {Decision::RefusedOpen, {kRefused, State::Open}};
        // The cool-down is over here; the fleet decides who tries. One caller asks for this
        // process, the others are refused meanwhile (the breaker is OPEN until Redis says not).
        ask_for_permit();
        return {Decision::RefusedOpen, {kRefused, State::Open}};
      }
      case State::HalfOpen: {
        std::uint64_t p = held_.load(std::memory_order_acquire);
        while ((p >> 16U) == gen && (p & 0xffffU) > 0) {
          if (held_.compare_exchange_weak(p, p - 1, std::memory_order_acq_rel)) {
            trials_.fetch_add(1, std::memory_order_relaxed);
            return {Decision::Permitted, {gen, State::HalfOpen}};
          }
        }
        ask_for_permit();
        return {Decision::RefusedHalfOpenFull, {kRefused, State::HalfOpen}};
      }
    }
    return {Decision::RefusedOpen, {kRefused, State::Open}};
  }

  RecordEffect record(const Ticket& ticket, const CallResult& result) {
    if (ticket.generation == kRefused) return RecordEffect::Refused;
    const bool slow = slow_after_ > Duration{0} && result.elapsed > slow_after_;
    const std::uint64_t gen = word_.load(std::memory_order_acquire) & kGenerationMask;
    if (is_local(ticket)) {
      // The local breaker judges it; the fleet's counts get it too, to be merged when Redis
      // answers again (if the fleet is still in the CLOSED state they were made in).
      const Ticket mine{ticket.generation & ~kLocalTicket, ticket.admitted_in};
      if (ticket.admitted_in == State::Closed && local_closed_gen_.load(std::memory_order_relaxed) == gen)
        count(gen, result.verdict, slow);
      return local_->record(mine, result);
    }
    if (ticket.generation != gen) return RecordEffect::Late;
    if (ticket.admitted_in == State::Closed) {
      if (result.verdict == Verdict::Ignored) return RecordEffect::Ignored;
      count(gen, result.verdict, slow);
      return RecordEffect::Counted;
    }
    if (result.verdict == Verdict::Ignored) {
      give_back(gen);
      return RecordEffect::Ignored;
    }
    {
      MutexLock lock(trial_mu_);
      if (trial_gen_ != gen) return RecordEffect::Late;
      const bool failed = result.verdict == Verdict::Failure || (slow && slow_counts_);
      ++(failed ? trial_bad_ : trial_ok_);
    }
    wake();  // a trial's result goes at once: it decides the fleet's state
    return RecordEffect::Counted;
  }

  void release(const Ticket& ticket) {
    if (ticket.generation == kRefused) return;
    if (is_local(ticket)) {
      local_->release({ticket.generation & ~kLocalTicket, ticket.admitted_in});
      return;
    }
    if (ticket.admitted_in == State::HalfOpen) give_back(ticket.generation);
  }

  // ---- The reporter ---------------------------------------------------------------------------
  bool sync() CB_EXCLUDES(sync_mu_) {
    MutexLock lock(sync_mu_);
    const TimePoint now = clock_.now();
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    const std::uint64_t gen = w & kGenerationMask;
    take_batch(now);

    int ok = 0;
    int bad = 0;
    std::uint64_t settle_gen = 0;
    {
      MutexLock t(trial_mu_);
      settle_gen = trial_gen_;
      ok = trial_ok_;
      bad = trial_bad_;
    }
    const bool want = want_permit_.exchange(false, std::memory_order_acq_rel) &&
                      !(state_of(w) == State::HalfOpen && exhausted_gen_ == gen) && (w & kLocalMode) == 0;

    std::vector<std::string> argv{"FCALL", "cb_fleet_v1_sync", std::to_string(keys_.size())};
    argv.insert(argv.end(), keys_.begin(), keys_.end());
    argv.insert(argv.end(), {rules_, fleet_.instance, token_, std::to_string(counts_gen_), want_members(),
                             std::to_string(settle_gen), std::to_string(ok), std::to_string(bad), want ? "1" : "0",
                             std::to_string(pending_.size())});
    for (const Batch& b : pending_) {
      argv.push_back(std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - b.at).count()));
      for (std::uint64_t n : b.n) argv.push_back(std::to_string(n));
      argv.push_back(std::to_string(b.seq));
    }

    Result<Answer> answer = call(argv);
    if (!answer) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      {
        MutexLock s(status_mu_);
        last_error_ = answer.error().message;
      }
      if (want) want_permit_.store(true, std::memory_order_release);
      if ((w & kLocalMode) == 0 && now - last_answer_ >= fleet_.degrade_after) go_local(now);
      return false;
    }
    pending_.clear();
    apply(*answer, now, want);
    return true;
  }

  FleetStatus status() const {
    FleetStatus s;
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    s.local = (w & kLocalMode) != 0;
    s.generation = w & kGenerationMask;
    s.state = s.local ? local_->state() : state_of(w);
    s.syncs = syncs_.load(std::memory_order_relaxed);
    s.sync_failures = failures_.load(std::memory_order_relaxed);
    s.trials = trials_.load(std::memory_order_relaxed);
    const std::uint64_t p = held_.load(std::memory_order_acquire);
    s.permits_held = (p >> 16U) == s.generation ? static_cast<int>(p & 0xffffU) : 0;
    MutexLock lock(status_mu_);
    s.members = members_count_;
    s.last_error = last_error_;
    return s;
  }

  const std::string& instance() const noexcept { return fleet_.instance; }

 private:
  std::string want_members() const CB_EXCLUDES(status_mu_) {
    MutexLock lock(status_mu_);
    return want_members_ ? "1" : "0";
  }

  void count(std::uint64_t gen, Verdict v, bool slow) {
    StripedCounts<kCounts>& c = counts_[gen & 1U];
    c.bump(Calls);
    if (v == Verdict::Failure) c.bump(Failures);
    if (slow) c.bump(Slow);
  }

  void give_back(std::uint64_t gen) {
    std::uint64_t p = held_.load(std::memory_order_acquire);
    while ((p >> 16U) == gen && !held_.compare_exchange_weak(p, p + 1, std::memory_order_acq_rel)) {
    }
    if ((p >> 16U) == gen) trials_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Refused calls in HALF_OPEN come on every thread at the call rate: a plain load first keeps
  // them from writing the flag's cache line once it is set.
  void ask_for_permit() {
    if (want_permit_.load(std::memory_order_relaxed)) return;
    if (!want_permit_.exchange(true, std::memory_order_acq_rel)) wake();
  }

  void wake() CB_EXCLUDES(wake_mu_) {
    {
      MutexLock lock(wake_mu_);
      woken_ = true;
    }
    wake_cv_.notify_one();
  }

  void run(const std::stop_token& stop) CB_EXCLUDES(wake_mu_) {
    while (!stop.stop_requested()) {
      (void)sync();
      MutexLock lock(wake_mu_);
      wake_cv_.wait_for(lock, stop, fleet_.report_every, [this]() CB_REQUIRES(wake_mu_) { return woken_; });
      woken_ = false;
    }
  }

  // The counts since the last batch, for the CLOSED generation they were made in. Kept until
  // Redis answers (merged then, none lost); a batch older than the window could count for
  // nothing there, so it is not kept.
  void take_batch(TimePoint now) CB_REQUIRES(sync_mu_) {
    const std::size_t p = counts_gen_ & 1U;
    Batch b{now, {}};
    bool any = false;
    for (std::size_t i = 0; i < kCounts; ++i) {
      const std::uint64_t total = counts_[p].sum(i);
      b.n[i] = total - sent_[p][i];
      sent_[p][i] = total;
      any = any || b.n[i] > 0;
    }
    if (any) {
      b.seq = ++batch_seq_;
      pending_.push_back(b);
    }
    while (!pending_.empty() && now - pending_.front().at >= fleet_.window) pending_.pop_front();
  }

  // One FCALL. The library is loaded first at this process's first round trip (REPLACE: this
  // build's over whatever an older one left), and again on "Function not found" (a restarted
  // or failed-over Redis without it), and the call made once more.
  Result<Answer> call(const std::vector<std::string>& argv) CB_REQUIRES(sync_mu_) {
    if (fleet_.load_functions && !loaded_) {
      if (auto loaded = load_library(); !loaded) return loaded.error();
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
      Result<RedisReply> reply = link_.command(argv);
      if (!reply) return reply.error();
      if (reply->kind == RedisReply::Kind::Error && reply->text.find("Function not found") != std::string::npos) {
        if (!fleet_.load_functions)
          return Error{"redis: cb_fleet_v1_sync is not loaded (load fleet/redis/cb_fleet.lua, or set load_functions)"};
        if (attempt == 0) {
          if (auto loaded = load_library(); !loaded) return loaded.error();
          continue;
        }
      }
      return read_answer(*reply);
    }
    return Error{"redis: cb_fleet_v1_sync not found after FUNCTION LOAD"};
  }

  Result<void> load_library() CB_REQUIRES(sync_mu_) {
    Result<RedisReply> loaded = link_.command({"FUNCTION", "LOAD", "REPLACE", std::string(kFleetLibrary)});
    if (!loaded) return loaded.error();
    if (loaded->kind == RedisReply::Kind::Error) return Error{"redis: FUNCTION LOAD: " + loaded->text};
    loaded_ = true;
    return {};
  }

  void apply(const Answer& a, TimePoint now, bool asked) CB_REQUIRES(sync_mu_) CB_EXCLUDES(trial_mu_, status_mu_) {
    syncs_.fetch_add(1, std::memory_order_relaxed);
    last_answer_ = now;
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    if (a.generation != (w & kGenerationMask) || (w & kLocalMode) != 0) {
      // A new state (or back from local rules): counts and trials start again for it.
      counts_gen_ = a.generation;
      const std::size_t p = counts_gen_ & 1U;
      for (std::size_t i = 0; i < kCounts; ++i) sent_[p][i] = counts_[p].sum(i);
      {
        MutexLock t(trial_mu_);
        trial_gen_ = a.generation;
        trial_ok_ = 0;
        trial_bad_ = 0;
      }
      held_.store(permits_word(a.generation, static_cast<std::uint64_t>(a.granted)), std::memory_order_release);
    } else if (a.granted > 0) {
      held_.fetch_add(static_cast<std::uint64_t>(a.granted), std::memory_order_acq_rel);
    }
    // Asked and given nothing: the fleet's permits for this HALF_OPEN are gone; this process
    // does not ask again until the next one.
    if (asked && a.granted == 0 && a.state == State::HalfOpen) exhausted_gen_ = a.generation;
    // ms_left counts from when Redis answered, a little before now: the local end is, if
    // anything, a round trip late, never early.
    open_until_.store((now + std::chrono::milliseconds{a.ms_left}).time_since_epoch().count(),
                      std::memory_order_release);
    last_cooldown_ms_ = a.cooldown_ms;
    word_.store(pack(a.state, a.generation), std::memory_order_release);
    MutexLock s(status_mu_);
    redis_ms_ = a.redis_ms;
    redis_ms_at_ = now;
    members_count_ = a.members;
    if (a.has_members) members_ = a.member_list;
    want_members_ = static_cast<std::size_t>(a.members) != members_.size();
  }

  // Redis has not answered for degrade_after: the local breaker takes over, starting from what
  // the fleet last said.
  void go_local(TimePoint now) CB_REQUIRES(sync_mu_) {
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    Snapshot s;
    s.generation = local_->status().generation + 1;
    const Duration cooldown = std::chrono::milliseconds{last_cooldown_ms_};
    if (state_of(w) == State::Closed) {
      s.state = State::Closed;
      s.since = now;
    } else {
      // OPEN: the rest of the fleet's cool-down; HALF_OPEN: a cool-down that ends now.
      const Duration left = state_of(w) == State::Open
                                ? std::max(Duration{0}, Duration{open_until_.load() - now.time_since_epoch().count()})
                                : Duration{0};
      s.state = State::Open;
      s.cooldown = std::max(cooldown, left);
      s.since = now + left - s.cooldown;
    }
    if (!local_->restore(s)) {
      s.cooldown = local_->options().cooldown.base;
      s.since = now - s.cooldown;
      (void)local_->restore(s);
    }
    local_closed_gen_.store(w & kGenerationMask, std::memory_order_relaxed);
    word_.store(w | kLocalMode, std::memory_order_release);
  }

  Admission acquire_local() {
    Admission a = local_->try_acquire();
    if (!a) return a;
    if (a.ticket.admitted_in == State::HalfOpen) {
      bool first = true;
      {
        MutexLock lock(status_mu_);
        // Whose turn it is depends on which cool-down-long slot of Redis's time this is, as
        // each instance reckons it: Redis's last TIME plus its own clock since. So instances
        // that went to local rules at different moments, or made different transitions since,
        // still agree (to within a round trip), as the chaos test on a loaded machine showed
        // a key of "generations since" did not (14 trials in a slot for M = 3).
        const long long redis_now =
            redis_ms_ + std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - redis_ms_at_).count();
        const auto key = static_cast<std::uint64_t>(std::max(0LL, redis_now) / slot_ms_);
        std::vector<std::string> members = members_;
        if (members.empty()) members.push_back(fleet_.instance);
        first = ranks_first(fleet_.instance, members, key, permits_);
      }
      if (!first) {
        // Not this instance's turn: it sits this cool-down out, as if its trial had failed.
        (void)local_->record(a.ticket, {Verdict::Failure, Duration{0}});
        return {Decision::RefusedHalfOpenFull, {kRefused, State::HalfOpen}};
      }
      trials_.fetch_add(1, std::memory_order_relaxed);
    }
    a.ticket.generation |= kLocalTicket;
    return a;
  }

  const Clock& clock_;
  const Duration lag_;
  const int permits_;
  const Duration slow_after_;
  const bool slow_counts_;
  const long long slot_ms_;  // the ranking's slot: one cool-down (its base) of Redis's time
  FleetOptions fleet_;
  const std::string rules_;
  std::vector<std::string> keys_;

  // Read on every call.
  alignas(64) std::atomic<std::uint64_t> word_{pack(State::Closed, 1)};
  std::atomic<Duration::rep> open_until_{0};
  std::atomic<std::uint64_t> held_{0};  // permits_word(): trial permits this process holds
  std::atomic<bool> want_permit_{false};
  std::atomic<std::uint64_t> local_closed_gen_{0};
  std::atomic<std::uint64_t> trials_{0};
  std::array<StripedCounts<kCounts>, 2> counts_{};  // by the parity of the generation they count for

  Mutex trial_mu_;
  std::uint64_t trial_gen_ CB_GUARDED_BY(trial_mu_) = 1;
  int trial_ok_ CB_GUARDED_BY(trial_mu_) = 0;
  int trial_bad_ CB_GUARDED_BY(trial_mu_) = 0;

  // The reporter's (one round trip at a time, whoever makes it).
  Mutex sync_mu_;
  RedisLink link_ CB_GUARDED_BY(sync_mu_);
  std::deque<Batch> pending_ CB_GUARDED_BY(sync_mu_);
  std::array<std::array<std::uint64_t, kCounts>, 2> sent_ CB_GUARDED_BY(sync_mu_){};
  std::uint64_t counts_gen_ CB_GUARDED_BY(sync_mu_) = 1;
  std::uint64_t batch_seq_ CB_GUARDED_BY(sync_mu_) = 0;
  // This process has loaded its library (once, at its first round trip).
  bool loaded_ CB_GUARDED_BY(sync_mu_) = false;
  std::string token_ CB_GUARDED_BY(sync_mu_);
  std::uint64_t exhausted_gen_ CB_GUARDED_BY(sync_mu_) = 0;
  TimePoint last_answer_ CB_GUARDED_BY(sync_mu_);
  long long last_cooldown_ms_ CB_GUARDED_BY(sync_mu_) = 0;
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> failures_{0};

  mutable Mutex status_mu_;
  int members_count_ CB_GUARDED_BY(status_mu_) = 0;
  std::vector<std::string> members_ CB_GUARDED_BY(status_mu_);
  bool want_members_ CB_GUARDED_BY(status_mu_) = true;
  std::string last_error_ CB_GUARDED_BY(status_mu_);
  long long redis_ms_ CB_GUARDED_BY(status_mu_) = 0;   // Redis's TIME at the last answer
  TimePoint redis_ms_at_ CB_GUARDED_BY(status_mu_){};  // when it came, on clock_

  std::unique_ptr<CircuitBreaker> local_;

  Mutex wake_mu_;
  std::condition_variable_any wake_cv_;
  bool woken_ CB_GUARDED_BY(wake_mu_) = false;
  std::jthread reporter_;
};

Result<std::unique_ptr<SharedBreaker>> SharedBreaker::create(const BreakerOptions& breaker, FleetOptions fleet,
                                                             const Clock& clock, RandomSource* random) {
  auto rules = fleet_rules(breaker, fleet);
  if (!rules) return rules.error();
  auto address = parse_redis_address(fleet.address);
  if (!address) return Error{"fleet." + address.error().message};
  auto local = CircuitBreaker::create(local_rules(breaker), clock, random);
  if (!local) return local.error();
  auto impl = std::make_unique<Impl>(breaker, std::move(fleet), std::move(*rules), std::move(*address), clock,
                                     std::move(*local));
  (void)impl->sync();  // join at once if Redis is there; if not, the reporter keeps trying
  impl->start();
  return std::unique_ptr<SharedBreaker>(new SharedBreaker(std::move(impl)));
}

SharedBreaker::SharedBreaker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SharedBreaker::~SharedBreaker() = default;
Admission SharedBreaker::try_acquire() { return impl_->try_acquire(); }
RecordEffect SharedBreaker::record(const Ticket& ticket, const CallResult& result) {
  return impl_->record(ticket, result);
}
void SharedBreaker::release(const Ticket& ticket) { impl_->release(ticket); }
bool SharedBreaker::sync() { return impl_->sync(); }
FleetStatus SharedBreaker::status() const { return impl_->status(); }
const std::string& SharedBreaker::instance() const noexcept { return impl_->instance(); }

}  // namespace cb::fleet

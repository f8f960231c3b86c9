// cb-lab fleet-member: one instance of the fleet scene, a real process.
#include "cmd_fleet_member.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include <unistd.h>

#include "cb/breaker/breaker.h"
#include "cb/breaker/cooldown.h"
#include "cb/lab/http_call.h"
#include "fleet_rules.h"
#ifdef CB_WITH_FLEET
#include "cb/fleet/shared_breaker.h"
#include "cb/flaky/endpoints.h"
#endif

namespace cb::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Whatever breaker the instance has, called the same way.
struct AnyBreaker {
  std::unique_ptr<CircuitBreaker> own;
#ifdef CB_WITH_FLEET
  std::unique_ptr<fleet::SharedBreaker> shared;
#endif
  Admission try_acquire() {
#ifdef CB_WITH_FLEET
    if (shared) return shared->try_acquire();
#endif
    return own->try_acquire();
  }
  void record(const Ticket& t, const CallResult& r) {
#ifdef CB_WITH_FLEET
    if (shared) {
      (void)shared->record(t, r);
      return;
    }
#endif
    (void)own->record(t, r);
  }
};

}  // namespace

CLI::App* setup_fleet_member(CLI::App& app, FleetMemberOptions& o) {
  auto* cmd = app.add_subcommand("fleet-member", "One process of `scene fleet --shared` (started by the scene)");
  cmd->group("");  // not for people: the scene starts it
  cmd->add_option("--shared", o.shared);
  cmd->add_flag("--independent", o.independent);
  cmd->add_option("--name", o.name);
  cmd->add_option("--instance", o.instance)->required();
  auto* start = cmd->add_option("--start-us", o.start_us);
  cmd->add_option("--start-in-us", o.start_in_us)->excludes(start)->check(CLI::Range(0LL, 60'000'000LL));
  cmd->add_flag("--start-from-stdin", o.start_from_stdin)->excludes(start);
  cmd->add_flag("--always-fail", o.always_fail);
  cmd->add_option("--quorum", o.quorum)->check(CLI::Range(1, 10000));
  cmd->add_option("--first-us", o.first_us)->check(CLI::NonNegativeNumber);
  cmd->add_option("--down-from-us", o.down_from_us)->check(CLI::NonNegativeNumber);
  cmd->add_option("--down-us", o.down_us)->required()->check(CLI::NonNegativeNumber);
  cmd->add_option("--run-us", o.run_us)->required()->check(CLI::Range(1LL, 86'400'000'000LL));
  cmd->add_option("--every-us", o.every_us)->required()->check(CLI::Range(100LL, 3'600'000'000LL));
  cmd->add_option("--cooldown-us", o.cooldown_us)->required()->check(CLI::Range(1000LL, 3'600'000'000LL));
  cmd->add_option("--permits", o.permits)->check(CLI::Range(1, 1000));
  cmd->add_option("--jitter", o.jitter)->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", o.seed);
  cmd->add_option("--report-every-us", o.report_every_us)->check(CLI::Range(1000LL, 60'000'000LL));
  cmd->add_option("--lease-us", o.lease_us)->check(CLI::Range(1000LL, 3'600'000'000LL));
  cmd->add_option("--degrade-after-us", o.degrade_after_us)->check(CLI::Range(1000LL, 3'600'000'000LL));
  cmd->add_option("--live", o.live);
  return cmd;
}

ExitCode fleet_member_command(const FleetMemberOptions& o) {
  auto fail = [&](const std::string& m) {
    std::cerr << "cb-lab fleet-member " << o.instance << ": " << m << '\n';
    return ExitCode::Usage;
  };
  if (o.independent != o.shared.empty()) return fail("give --shared ADDRESS or --independent");
  std::optional<lab::ServerUrl> live;
  if (!o.live.empty()) {
    auto url = lab::parse_url(o.live);
    if (!url) return fail("--live: " + url.error().message);
    live = *url;
  }
  SteadyClock clock;
  SeededRandom random(o.seed);
  const BreakerOptions options = fleet_scene_rules(Duration{o.cooldown_us}, o.permits, o.jitter);
  AnyBreaker breaker;
  if (o.independent) {
    auto b = CircuitBreaker::create(options, clock, &random);
    if (!b) return fail(b.error().message);
    breaker.own = std::move(*b);
  } else {
#ifdef CB_WITH_FLEET
    fleet::FleetOptions f;
    f.address = o.shared;
    f.name = o.name;
    f.instance = o.instance;
    f.report_every = Duration{o.report_every_us / 1000 * 1000};
    f.lease = Duration{o.lease_us / 1000 * 1000};
    f.degrade_after = Duration{o.degrade_after_us / 1000 * 1000};
    // A scene runs 40 processes on whatever machine it is given: a Redis answer may wait for
    // the CPU, so a longer bound than the library's 100 ms default.
    f.redis_timeout = std::min(Duration{250'000}, f.degrade_after);
    f.quorum = o.quorum;
    auto b = fleet::SharedBreaker::create(options, f, clock, &random);
    if (!b) return fail(b.error().message);
    breaker.shared = std::move(*b);
#else
    return fail("--shared: this cb-lab was built without the fleet (install libhiredis-dev and build again)");
#endif
  }

  long long start_us = o.start_us;
  if (o.start_from_stdin) {
    // The scene starts forty processes; a slow machine (or a sanitizer build) takes a second
    // or more for all of them to come up. Each says it is ready (a byte on fd 3) with its
    // breaker made, and the scene sends every one the same start once all have.
    if (::write(3, "r", 1) != 1) return fail("fd 3: cannot say ready");
    ::close(3);
    if (!(std::cin >> start_us)) return fail("stdin: expected the start on CLOCK_MONOTONIC in microseconds");
  }
  const Clock::time_point start = o.start_in_us >= 0 ? Clock::now() + std::chrono::microseconds{o.start_in_us}
                                                     : Clock::time_point{std::chrono::microseconds{start_us}};
  const auto since_start_ms = [&] {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()) /
           1000.0;
  };
  long long calls = 0;
  long long refused = 0;
  long long trials = 0;
  long long first_refused_us = -1;  // on this process's CLOCK_MONOTONIC: when it first learned of a trip
  for (auto t = start + std::chrono::microseconds{o.first_us}; t < start + std::chrono::microseconds{o.run_us};
       t += std::chrono::microseconds{o.every_us}) {
    std::this_thread::sleep_until(t);
    const Admission a = breaker.try_acquire();
    if (!a) {
      if (refused++ == 0)
        first_refused_us =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
      continue;
    }
    ++calls;
    const auto now = Clock::now();
    const bool down = now >= start + std::chrono::microseconds{o.down_from_us} &&
                      now < start + std::chrono::microseconds{o.down_from_us + o.down_us};
    const auto t0 = Clock::now();
    bool failed = down || o.always_fail;
    if (live) {
      const lab::HttpAnswer answer =
          lab::http_request(*live, "GET", std::string(down ? flaky::path::kAlways500 : flaky::path::kFast),
                            std::chrono::milliseconds{1000});
      failed =
          o.always_fail || answer.observation.origin != classify::Origin::Response || answer.observation.status >= 500;
    }
    const auto elapsed = std::chrono::duration_cast<Duration>(Clock::now() - t0);
    if (a.ticket.admitted_in == State::HalfOpen) {
      ++trials;
      // A trial of the shared breaker carries the fleet's generation; one of the local rules
      // (Redis away) carries the local breaker's, marked.
      bool local = o.independent;
      std::uint64_t generation = a.ticket.generation;
#ifdef CB_WITH_FLEET
      local = local || fleet::is_local(a.ticket);
      generation &= ~fleet::kLocalTicket;
#endif
      const nlohmann::json line{
          {"trial", {{"t_ms", since_start_ms()}, {"generation", generation}, {"local", local}, {"down", down}}}};
      std::cout << line.dump() << std::endl;
    }
    breaker.record(a.ticket, {failed ? Verdict::Failure : Verdict::Success, elapsed});
  }
  nlohmann::json out{{"instance", o.instance},
                     {"calls", calls},
                     {"refused", refused},
                     {"trial_count", trials},
                     {"first_refused_us", first_refused_us}};
#ifdef CB_WITH_FLEET
  if (breaker.shared) {
    const fleet::FleetStatus s = breaker.shared->status();
    out["syncs"] = s.syncs;
    out["sync_failures"] = s.sync_failures;
    out["local"] = s.local;
    if (!s.last_error.empty()) out["last_error"] = s.last_error;
  }
#endif
  std::cout << out.dump() << std::endl;
  return ExitCode::Ok;
}

}  // namespace cb::cli

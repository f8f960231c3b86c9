// cb-lab status: where the lab's breakers stand, from the saved session.
#include "cmd_status.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cb/decimal_time.h"
#include "cb/lab/runner.h"
#include "cb/lab/session.h"
#include "lab_common.h"

namespace cb::cli {
namespace {

class Silent final : public lab::Reporter {
 public:
  void action(const std::string&) override {}
  void countdown(std::chrono::microseconds, std::chrono::microseconds) override {}
};

}  // namespace

CLI::App* setup_status(CLI::App& app, StatusOptions& options) {
  auto* cmd = app.add_subcommand("status", "The lab's breakers now: state, counts, failure rate, time left in OPEN");
  cmd->add_option("--dir", options.dir, "The lab's output directory")->capture_default_str();
  return cmd;
}

ExitCode status_command(const StatusOptions& o) {
  auto session = lab::load_session(o.dir);
  if (!session) {
    std::cerr << "cb-lab status: " << session.error().message << '\n';
    return ExitCode::Usage;
  }
  if (session->after.empty()) {
    std::cout << "No lab has run in " << o.dir << " yet: `cb-lab run`, or `cb-lab step 1`.\n";
    return ExitCode::Failed;
  }
  const std::string scenario_path = session->scenario.empty() ? default_scenario_path() : session->scenario;
  auto scenario = lab::load_scenario(scenario_path);
  // The breakers stand on the numbers the steps ran on (a student's own, from their kit).
  if (scenario) scenario = scenario_on(std::move(scenario).value(), scenario_path, session->settings);
  if (!scenario) {
    std::cerr << "cb-lab status: " << scenario.error().message << '\n';
    return ExitCode::Usage;
  }
  const auto& [last, state] = *session->after.rbegin();
  Silent silent;
  std::atomic<bool> never{false};
  lab::Runner runner(*scenario, o.dir, lab::ServerUrl{}, std::chrono::milliseconds{1}, silent, never);
  if (auto r = runner.restore(state, last); !r) {
    std::cerr << "cb-lab status: " << lab::step_path(o.dir, last) << ": " << r.error().message << '\n';
    return ExitCode::Usage;
  }
  std::cout << "Steps run in " << o.dir << ": 1-" << last << " of " << scenario->steps.size() << "; server "
            << session->server
            << (session->server_pid ? " (started in the background, pid " + std::to_string(*session->server_pid) + ")"
                                    : "")
            << "\n";
  for (const std::string& name : lab::breakers_in_use(*scenario, last)) {
    const Status s = runner.breaker(name).status();
    const Metrics& m = s.metrics;
    std::printf("\n%s: %s\n", name.c_str(), std::string(to_string(s.state)).c_str());
    if (s.state == State::HalfOpen) {
      std::printf("  trials: %d admitted, %d succeeded, %d failed (of %d permitted)\n", m.trials_admitted,
                  m.trial_successes, m.trial_failures, runner.breaker(name).options().half_open.permitted_calls);
    } else {
      std::printf("  window: %u calls, %u failed, %u slow", m.window.calls, m.window.failures, m.window.slow);
      if (m.failure_rate_percent) {
        std::printf("; failure rate %.1f%%\n", *m.failure_rate_percent);
      } else {
        std::printf("; failure rate not judged yet (under the minimum of %d calls)\n",
                    runner.breaker(name).options().trip.window.minimum_calls);
      }
    }
    if (s.open_remaining) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*s.open_remaining);
      std::printf("  OPEN for %s s more (of %s s)\n", format_seconds(ms).c_str(), format_seconds(s.cooldown).c_str());
    }
    std::printf(
        "  since the start: %llu calls let through, %llu refused; %llu successes, %llu failures, %llu ignored\n",
        static_cast<unsigned long long>(m.counters.permitted),
        static_cast<unsigned long long>(m.counters.not_permitted),
        static_cast<unsigned long long>(m.counters.successes), static_cast<unsigned long long>(m.counters.failures),
        static_cast<unsigned long long>(m.counters.ignored));
  }
  return ExitCode::Ok;
}

}  // namespace cb::cli

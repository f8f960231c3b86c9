// cb-lab demo: the lab's breaker on a simulated clock and a simulated downstream, so the whole
// CLOSED -> OPEN -> HALF_OPEN -> CLOSED story runs in a millisecond with nothing else installed.
#include "cmd_demo.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"
#include "cb/classify/classifier.h"
#include "cb/decimal_time.h"
#include "cb/grade/lab_spec.h"
#include "cb/flaky/endpoints.h"

namespace cb::cli {
namespace {

// The lab's downstream, simulated: what each path answers.
int simulated_status(const std::string& path) {
  static const std::map<std::string, int, std::less<>> kAnswers{{std::string(flaky::path::kFast), 200},
                                                                {std::string(flaky::path::kAlways500), 500},
                                                                {std::string(flaky::path::kBad), 400}};
  return kAnswers.at(path);
}

struct Demo {
  ManualClock clock;
  classify::Classifier classifier = classify::Classifier::http();
  int reached_backend = 0;

  // Calls `path` n times through `b`; returns the outcome words.
  std::string calls(CircuitBreaker& b, const std::string& path, int n) {
    std::string words;
    for (int i = 0; i < n; ++i) {
      const Admission a = b.try_acquire();
      std::string word = "refused";
      if (a) {
        ++reached_backend;
        const Verdict v = classifier.classify({classify::Origin::Response, simulated_status(path)});
        (void)b.record(a.ticket, {v, std::chrono::milliseconds{1}});
        word = v == Verdict::Success ? "ok" : v == Verdict::Failure ? "error" : "ignored";
      }
      words += (words.empty() ? "" : " ") + word;
    }
    return words;
  }
};

std::string describe(CircuitBreaker& b) {
  const Status s = b.status();
  std::string out = std::string(to_string(s.state));
  const Metrics& m = s.metrics;
  if (s.state == State::HalfOpen) {
    out += " (trials " + std::to_string(m.trials_admitted) + ", failed " + std::to_string(m.trial_failures) + ")";
  } else {
    out += " (window " + std::to_string(m.window.calls) + " calls, " + std::to_string(m.window.failures) + " failed)";
  }
  return out;
}

void line(const std::string& step, const std::string& what, const std::string& result) {
  std::printf("  %-7s %-44s %s\n", step.c_str(), what.c_str(), result.c_str());
}

// The lab's breaker as its spec writes it: the engine's lab profile, with the spec's numbers.
BreakerOptions lab_breaker(const grade::LabSpec& spec, Duration wait) {
  BreakerOptions o = profiles::lab(wait);
  o.trip.window.size = spec.rules.window;
  o.trip.window.minimum_calls = spec.rules.minimum_calls;
  o.trip.failure_rate_percent = spec.rules.failure_rate;
  o.trip.slow_call_rate_percent = spec.rules.slow_call_rate;
  o.half_open.permitted_calls = spec.rules.trials;
  return o;
}

}  // namespace

CLI::App* setup_demo(CLI::App& app, DemoOptions& options) {
  auto* cmd = app.add_subcommand("demo", "The lab's breaker on a simulated clock and downstream (no server needed)");
  cmd->add_option("--wait", options.wait_in_open_s, "Seconds in OPEN (default: the lab's)")
      ->check(CLI::NonNegativeNumber);
  return cmd;
}

ExitCode demo_command(const DemoOptions& options) {
  Demo demo;
  const grade::LabSpec& spec = grade::lab_spec();
  const grade::LabScript& script = spec.script;
  const auto wait =
      options.wait_in_open_s < 0
          ? std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(spec.rules.wait_ms))
          : std::chrono::duration_cast<Duration>(std::chrono::duration<double>(options.wait_in_open_s));
  auto created = CircuitBreaker::create(lab_breaker(spec, wait), demo.clock);
  if (!created) {
    std::cerr << "cb-lab demo: " << created.error().message << '\n';
    return ExitCode::Usage;
  }
  CircuitBreaker& b = **created;
  std::vector<std::string> log;
  b.subscribe([&](const Transition& t) {
    log.push_back("t=" + cb::format_seconds(t.at.time_since_epoch()) + " s  " + std::string(to_string(t.from)) + "->" +
                  std::string(to_string(t.to)) + "  (" + std::string(to_string(t.reason)) + ")");
  });

  std::cout << "The lab's breaker (window " << spec.rules.window << ", minimum " << spec.rules.minimum_calls
            << ", failure rate >= " << spec.values().at("failure_rate") << "%, " << spec.rules.trials << " trials), "
            << cb::format_seconds(wait) << " s in OPEN, on a simulated clock:\n\n";
  // Each step's calls happen before its description is taken (operands of + are unsequenced).
  auto step = [&](const std::string& name, const std::string& what, CircuitBreaker& breaker, std::string_view path,
                  int n) {
    const std::string words = demo.calls(breaker, std::string(path), n);
    line(name, what, words + "  -> " + describe(breaker));
  };
  auto times = [](int n, std::string_view path) { return std::to_string(n) + " x " + std::string(path); };
  step("step 2", times(script.fast, script.fast_path), b, script.fast_path, script.fast);
  step("step 3", times(script.burst, script.fail_path), b, script.fail_path, script.burst);
  const int before = demo.reached_backend;
  (void)demo.calls(b, script.fast_path, script.blocked);
  line("step 4", std::to_string(script.blocked) + " calls while OPEN",
       std::to_string(demo.reached_backend - before) + " of " + std::to_string(script.blocked) +
           " reached the downstream  -> " + describe(b));
  demo.clock.advance(wait);
  step("step 5", "wait " + cb::format_seconds(wait) + " s, 1 x " + script.fast_path, b, script.fast_path, 1);
  // The trial of step 5 was the first; the rest close it.
  step("step 6", script.fast_path + " until CLOSED", b, script.fast_path, spec.rules.trials - 1);
  auto fresh = CircuitBreaker::create(lab_breaker(spec, wait), demo.clock);
  step("step 7", "new breaker, " + times(script.bad, script.bad_path) + " (400)", **fresh, script.bad_path, script.bad);
  std::cout << "\n  step 8  transitions:\n";
  for (const auto& l : log) std::cout << "          " << l << '\n';
  std::cout
      << "\nRun `cb-lab script` and `cb-lab replay` for the trace and replay exercises; --help lists everything.\n";
  return ExitCode::Ok;
}

}  // namespace cb::cli

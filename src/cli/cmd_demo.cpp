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

namespace cb::cli {
namespace {

// The lab's downstream, simulated: what each path answers.
int simulated_status(const std::string& path) {
  static const std::map<std::string, int> kAnswers{{"/fast", 200}, {"/always500", 500}, {"/bad", 400}};
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

}  // namespace

CLI::App* setup_demo(CLI::App& app, DemoOptions& options) {
  auto* cmd = app.add_subcommand("demo", "The lab's breaker on a simulated clock and downstream (no server needed)");
  cmd->add_option("--wait", options.wait_in_open_s, "Seconds in OPEN (the lab uses 3)")->check(CLI::NonNegativeNumber);
  return cmd;
}

ExitCode run_demo(const DemoOptions& options) {
  Demo demo;
  const auto wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(options.wait_in_open_s));
  auto created = CircuitBreaker::create(profiles::lab(wait), demo.clock);
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

  std::cout << "The lab's breaker (profile lab: window 10, minimum 5, failure rate >= 50%, 3 trials), "
            << cb::format_seconds(wait) << " s in OPEN, on a simulated clock:\n\n";
  // Each step's calls happen before its description is taken (operands of + are unsequenced).
  auto step = [&](const std::string& name, const std::string& what, CircuitBreaker& breaker, const std::string& path,
                  int n) {
    const std::string words = demo.calls(breaker, path, n);
    line(name, what, words + "  -> " + describe(breaker));
  };
  step("step 2", "3 x /fast", b, "/fast", 3);
  step("step 3", "5 x /always500", b, "/always500", 5);
  const int before = demo.reached_backend;
  (void)demo.calls(b, "/fast", 10);
  line("step 4", "10 calls while OPEN",
       std::to_string(demo.reached_backend - before) + " of 10 reached the downstream  -> " + describe(b));
  demo.clock.advance(wait);
  step("step 5", "wait " + cb::format_seconds(wait) + " s, 1 x /fast", b, "/fast", 1);
  step("step 6", "/fast until CLOSED", b, "/fast", 2);
  auto fresh = CircuitBreaker::create(profiles::lab(wait), demo.clock);
  step("step 7", "new breaker, 10 x /bad (400)", **fresh, "/bad", 10);
  std::cout << "\n  step 8  transitions:\n";
  for (const auto& l : log) std::cout << "          " << l << '\n';
  std::cout
      << "\nRun `cb-lab script` and `cb-lab replay` for the trace and replay exercises; --help lists everything.\n";
  return ExitCode::Ok;
}

}  // namespace cb::cli

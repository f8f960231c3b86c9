// cb-lab replay --threshold N --cooldown S [FILE|-]: the replay exercise's probe breaker over a trace.
#include "cmd_replay.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cb/decimal_time.h"
#include "cb/exercises/replay.h"
#include "input.h"

namespace cb::cli {
namespace {

// A trace of a million calls is ~20 MB of JSON; anything far beyond is not a trace.
constexpr std::size_t kMaxTraceBytes = 64U << 20U;

ExitCode fail(const std::string& message) {
  std::cerr << "cb-lab replay: " << message << '\n';
  return ExitCode::Usage;
}

}  // namespace

CLI::App* setup_replay(CLI::App& app, ReplayOptions& options) {
  auto* cmd = app.add_subcommand("replay", "The replay exercise: [[t, ok], ...] through a probe breaker");
  cmd->add_option("--threshold", options.threshold, "Failures in a row that open the breaker")->required();
  cmd->add_option("--cooldown", options.cooldown, "Seconds in OPEN before one probe (decimals are exact)")->required();
  cmd->add_option("FILE", options.input, "JSON trace, or - for standard input (the default)");
  cmd->add_flag("--unordered", options.unordered,
                "Take times that go back, each call judged at its own t (as the exercise's reference does)");
  cmd->footer("Prints a JSON array with \"ok\", \"fail\" or \"rejected\" for each call.");
  return cmd;
}

ExitCode replay_command(const ReplayOptions& options) {
  if (options.threshold < 1) return fail("--threshold: must be >= 1, got " + std::to_string(options.threshold));
  auto cooldown = cb::parse_seconds(options.cooldown);
  if (!cooldown) return fail("--cooldown: " + cooldown.error().message);
  if (cooldown->count() < 0) return fail("--cooldown: must be >= 0, got " + options.cooldown);

  auto text = read_input(options.input, kMaxTraceBytes, "trace");
  if (!text) return fail(text.error().message);
  const std::string name = options.input == "-" ? "standard input" : options.input;
  auto calls = exercises::parse_trace(*text);
  if (!calls) return fail(name + ": " + calls.error().message);
  if (!options.unordered)
    if (auto ordered = exercises::check_times_in_order(*calls); !ordered)
      return fail(name + ": " + ordered.error().message);
  auto outcomes = exercises::replay(options.threshold, *cooldown, *calls);
  if (!outcomes) return fail(outcomes.error().message);
  std::cout << exercises::to_json(*outcomes) << '\n';
  return ExitCode::Ok;
}

}  // namespace cb::cli

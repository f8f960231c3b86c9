// cb-lab script [FILE|-]: the trace exercise's POOL/NOW/CALL/STATUS interpreter.
#include "cmd_script.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "cb/bounded_file.h"
#include "cb/exercises/script.h"

namespace cb::cli {
namespace {

// A script of a million commands is about 20 MiB.
constexpr std::size_t kMaxScriptBytes = 64U << 20;

}  // namespace

CLI::App* setup_script(CLI::App& app, ScriptOptions& options) {
  auto* cmd =
      app.add_subcommand("script", "The trace exercise: POOL/NOW/CALL/STATUS commands through balancer breakers");
  cmd->add_option("FILE", options.input, "Command file, or - for standard input (the default)");
  cmd->footer(
      "Commands, one per line:\n"
      "  POOL <b1> <b2> ...       a breaker per backend, all CLOSED       -> OK\n"
      "  NOW <seconds>            set the clock                          -> OK\n"
      "  CALL <backend> <answer>  answer: 200, 'HTTP/1.1 503 ...', TIMEOUT, RESET, ...\n"
      "                                                                  -> OK | ERROR | SHORT\n"
      "  STATUS                   <backend> <state> per backend\n"
      "A line that is not understood answers INVALID <reason>; the script goes on.");
  return cmd;
}

ExitCode script_command(const ScriptOptions& options) {
  const auto fail = [&](const std::string& where, const std::string& why) {
    std::cerr << "cb-lab script: " << where << ": " << why << '\n';
    return ExitCode::Usage;
  };
  // Streamed line by line, not read whole: a person may be typing.
  if (options.input == "-") {
    auto ran = exercises::run_script(std::cin, std::cout, ::isatty(STDIN_FILENO) != 0);
    return ran ? ExitCode::Ok : fail("standard input", ran.error().message);
  }
  // A file is read as the grader reads one: only a regular file, and only so much of it.
  auto text = read_bounded_file(options.input, kMaxScriptBytes, "script");
  if (!text) {
    std::cerr << "cb-lab script: " << text.error().message << '\n';
    return ExitCode::Usage;
  }
  std::istringstream in(*text);
  auto ran = exercises::run_script(in, std::cout, false);
  return ran ? ExitCode::Ok : fail(options.input, ran.error().message);
}

}  // namespace cb::cli

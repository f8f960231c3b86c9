// cb-lab script [FILE|-]: the trace exercise's POOL/NOW/CALL/STATUS interpreter.
#include "cmd_script.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cb/exercises/script.h"

namespace cb::cli {

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

ExitCode run_script(const ScriptOptions& options) {
  // Streamed line by line, not read whole: a person may be typing.
  if (options.input == "-") {
    exercises::run_script(std::cin, std::cout, ::isatty(STDIN_FILENO) != 0);
    return ExitCode::Ok;
  }
  std::ifstream file(options.input);
  if (!file) {
    std::cerr << "cb-lab script: " << options.input << ": cannot open: " << std::strerror(errno) << '\n';
    return ExitCode::Usage;
  }
  exercises::run_script(file, std::cout, false);
  return ExitCode::Ok;
}

}  // namespace cb::cli

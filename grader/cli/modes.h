#pragma once
// cb-grade's modes, each a subcommand with the flags it takes and no other: one submission (no
// subcommand), class, regrade, merge, verify and the queue's push, work, status and collect.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli_options.h"
#include "sandbox_flags.h"

namespace cb::grade {

// What the command line gave: the mode it named, and that mode's value (cli_options.h). Every
// mode has its own, bound to its own flags, so a flag of another mode never reaches it.
struct Command {
  Mode mode = Mode::One;
  OneArgs one;
  ClassArgs cls;
  RegradeArgs regrade;
  MergeArgs merge;
  VerifyArgs verify;
  QueuePushArgs push;
  QueueWorkArgs work;
  QueueStatusArgs status;
  QueueCollectArgs collect;
  // `queue --queue NAME ACTION`: the name, for an action that gives none (queue_command.cpp).
  std::string queue_before;
  SandboxFlags sandbox;  // the box of every mode that runs programs (one mode runs a command line)
};

// All but the queue's, which main.cpp adds where the program is built with it (add_queue_commands).
void declare_modes(CLI::App& app, Command& c);
// The program's help ends with how to see a mode's; called once every mode is declared.
void say_the_modes(CLI::App& app);

// The spellings from before the modes were subcommands, which scripts and course files keep:
// `--batch DIR` is `class DIR` and `--regrade DIR` is `regrade DIR`, wherever on the line.
[[nodiscard]] std::vector<std::string> today_spelling(std::vector<std::string> args);

// The mode's own flags: the subcommand given (the deepest), else the program's.
[[nodiscard]] const CLI::App& mode_app(const CLI::App& app);

// A flag of the program's own given before a subcommand ("--format json merge ..."): a mode reads
// only its own flags, so it would be dropped unsaid. Empty when none.
[[nodiscard]] std::string flags_before_the_mode(const CLI::App& app);

}  // namespace cb::grade

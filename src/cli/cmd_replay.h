#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct ReplayOptions {
  int threshold = 0;
  std::string cooldown;  // decimal seconds, read exactly
  std::string input = "-";
  bool unordered = false;  // times may go back, as the exercise's reference takes them
};

CLI::App* setup_replay(CLI::App& app, ReplayOptions& options);
ExitCode replay_command(const ReplayOptions& options);

}  // namespace cb::cli

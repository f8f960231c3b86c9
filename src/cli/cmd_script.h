#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct ScriptOptions {
  std::string input = "-";
};

CLI::App* setup_script(CLI::App& app, ScriptOptions& options);
ExitCode script_command(const ScriptOptions& options);

}  // namespace cb::cli

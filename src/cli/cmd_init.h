#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct InitOptions {
  std::string dir;
  std::string lang;
  bool force = false;
};

CLI::App* setup_init(CLI::App& app, InitOptions& options);
ExitCode run_init(const InitOptions& options);

}  // namespace cb::cli

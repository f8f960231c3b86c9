#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct StatusOptions {
  std::string dir = "./cb";
};

CLI::App* setup_status(CLI::App& app, StatusOptions& options);
ExitCode status_command(const StatusOptions& options);

}  // namespace cb::cli

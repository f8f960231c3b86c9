#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct ConformOptions {};

CLI::App* setup_conform(CLI::App& app, ConformOptions& options);
ExitCode conform_command(const ConformOptions& options);

}  // namespace cb::cli

#pragma once

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct DemoOptions {
  double wait_in_open_s = -1;  // the lab's
};

CLI::App* setup_demo(CLI::App& app, DemoOptions& options);
ExitCode demo_command(const DemoOptions& options);

}  // namespace cb::cli

#pragma once

#include "exit_code.h"
#include "lab_common.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct StepOptions {
  LabArgs lab;
  int step = 0;
};

CLI::App* setup_step(CLI::App& app, StepOptions& options);
ExitCode step_command(const StepOptions& options);

}  // namespace cb::cli

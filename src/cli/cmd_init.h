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
  std::string student;  // with course_key: the student's own numbers in lab-settings.json
  std::string course_key;
};

CLI::App* setup_init(CLI::App& app, InitOptions& options);
ExitCode init_command(const InitOptions& options);

}  // namespace cb::cli

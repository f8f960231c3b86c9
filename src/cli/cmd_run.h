#pragma once

#include "exit_code.h"
#include "lab_common.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct RunOptions {
  LabArgs lab;
  bool json = false;
  std::string html;     // also draw the run as a page here
  std::string student;  // with course_key: run (and grade) the student's own numbers
  std::string course_key;
};

CLI::App* setup_run(CLI::App& app, RunOptions& options);
ExitCode run_command(const RunOptions& options);

// The shared flags of run and step: --dir, --server, --scenario, --call-timeout.
void add_lab_flags(CLI::App& cmd, LabArgs& args);

}  // namespace cb::cli

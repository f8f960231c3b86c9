#pragma once

#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct VariantOptions {
  std::string student;
  std::string course_key;
  std::string settings;  // where to write the student's lab-settings.json
  std::string handout;   // where to write the student's handout
  bool json = false;
  // Every student of a roster at once: their settings and handout in out/FOLDER/.
  std::string roster;
  std::string id_field = "email";
  std::string out;
};

CLI::App* setup_variant(CLI::App& app, VariantOptions& options);
ExitCode variant_command(const VariantOptions& options);

}  // namespace cb::cli

// cb-lab variant STUDENT --course-key FILE: the student's own numbers (grade/variant.h), for the
// instructor to hand out: the table the handout gives, and the settings file the kits read.
#include "cmd_variant.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cb/atomic_file.h"
#include "cb/grade/variant.h"
#include "lab_common.h"

namespace cb::cli {

CLI::App* setup_variant(CLI::App& app, VariantOptions& options) {
  auto* cmd = app.add_subcommand("variant", "A student's own numbers for the lab, from their id and the course key");
  cmd->add_option("STUDENT", options.student, "The student's id (as the gradebook names them: an email, a login)")
      ->required();
  cmd->add_option("--course-key", options.course_key, "The course's secret (a file of 16 bytes or more)")->required();
  cmd->add_option("--settings", options.settings, "Also write the student's lab-settings.json here, for their kit");
  cmd->add_option("--handout", options.handout,
                  "Also write the student's handout here: the lab's, with their numbers in every step");
  cmd->add_flag("--json", options.json, "Print the numbers as JSON");
  cmd->footer(
      "Grade the student on the same numbers with\n"
      "  cb-grade --student STUDENT --course-key FILE ...\n"
      "and give them a starter made for them with\n"
      "  cb-lab init DIR --lang L --student STUDENT --course-key FILE");
  return cmd;
}

ExitCode variant_command(const VariantOptions& o) {
  auto fail = [](const std::string& m) {
    std::cerr << "cb-lab variant: " << m << '\n';
    return ExitCode::Usage;
  };
  auto spec = student_spec(o.student, o.course_key, grade::lab_spec());
  if (!spec) return fail(spec.error().message);
  const grade::LabSpec& s = **spec;
  if (!o.settings.empty())
    if (auto w = write_file_atomically(o.settings, grade::kit_settings_json(s)); !w) return fail(w.error().message);
  if (!o.handout.empty())
    if (auto w = write_file_atomically(o.handout, grade::handout_text(s)); !w) return fail(w.error().message);
  if (o.json) {
    std::cout << nlohmann::json{{"student", s.student},
                                {"numbers", s.variant},
                                {"settings", nlohmann::json::parse(grade::kit_settings_json(s))}}
                     .dump(2)
              << '\n';
    return ExitCode::Ok;
  }
  std::cout << "Student " << s.student << ": " << s.variant << "\n\n" << grade::settings_table(s);
  if (!o.settings.empty()) std::cout << "\nwrote " << o.settings << '\n';
  if (!o.handout.empty()) std::cout << "wrote " << o.handout << '\n';
  return ExitCode::Ok;
}

}  // namespace cb::cli

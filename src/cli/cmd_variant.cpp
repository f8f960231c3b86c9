// cb-lab variant STUDENT --course-key FILE: the student's own numbers (grade/variant.h), for the
// instructor to hand out: the table the handout gives, and the settings file the kits read.
#include "cmd_variant.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/grade/batch.h"
#include "cb/grade/variant.h"
#include "lab_common.h"

namespace cb::cli {

CLI::App* setup_variant(CLI::App& app, VariantOptions& options) {
  auto* cmd = app.add_subcommand("variant", "A student's own numbers for the lab, from their id and the course key");
  cmd->add_option("STUDENT", options.student, "The student's id (as the gradebook names them: an email, a login)");
  cmd->add_option("--roster", options.roster,
                  "Every student of this roster at once (a header naming a folder column and the id field's), each "
                  "one's lab-settings.json and HANDOUT.md in --out/FOLDER/");
  cmd->add_option("--id-field", options.id_field,
                  "--roster: the column that names a student, as cb-grade's --id-field (or the rubric's id_field)")
      ->capture_default_str();
  cmd->add_option("--out", options.out, "--roster: where each student's folder is made");
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

namespace {

// --roster: a folder per student, with their settings and handout, named as the batch names them.
ExitCode whole_roster(const VariantOptions& o) {
  auto fail = [](const std::string& m) {
    std::cerr << "cb-lab variant: " << m << '\n';
    return ExitCode::Usage;
  };
  if (!o.student.empty()) return fail("--roster: names every student; it does not go with STUDENT");
  if (o.out.empty()) return fail("--roster: goes with --out DIR (where each student's folder is made)");
  const auto text = read_bounded_file(o.roster, 4 << 20, "roster");
  if (!text) return fail(text.error().message);
  auto roster = grade::parse_roster(*text, o.roster, o.id_field);
  if (!roster) return fail(roster.error().message);
  auto key = grade::read_course_key(o.course_key);
  if (!key) return fail("--course-key: " + key.error().message);
  for (const auto& [folder, student] : *roster) {
    if (folder.find('/') != std::string::npos || folder == "." || folder == "..")
      return fail(o.roster + ": folder " + folder + ": expected a folder's name, not a path");
    auto spec = grade::variant_spec(grade::lab_spec(), student, *key);
    if (!spec) return fail(o.roster + ": student " + student + ": " + spec.error().message);
    const std::string dir = o.out + "/" + folder;
    if (auto made = make_directories(dir); !made) return fail(made.error().message);
    if (auto w = write_file_atomically(dir + "/lab-settings.json", grade::kit_settings_json(**spec)); !w)
      return fail(w.error().message);
    if (auto w = write_file_atomically(dir + "/HANDOUT.md", grade::handout_text(**spec)); !w)
      return fail(w.error().message);
  }
  std::cout << "cb-lab variant: " << roster->size() << " students (by " << o.id_field << "), each in " << o.out
            << "/FOLDER/: lab-settings.json, HANDOUT.md\n";
  return ExitCode::Ok;
}

}  // namespace

ExitCode variant_command(const VariantOptions& o) {
  auto fail = [](const std::string& m) {
    std::cerr << "cb-lab variant: " << m << '\n';
    return ExitCode::Usage;
  };
  if (!o.roster.empty()) return whole_roster(o);
  if (o.student.empty()) return fail("STUDENT: whose numbers (or --roster FILE for a whole class)");
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

// cb-lab init DIR --lang L: a starter kit for the lab, the breaker's rules left to the student.
#include "cmd_init.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "cb/atomic_file.h"
#include "cb/grade/variant.h"
#include "cb/kit_files.h"
#include "lab_common.h"

namespace cb::cli {
namespace {

std::string languages() {
  std::set<std::string> langs;
  for (const KitFile& f : kit_files()) langs.emplace(f.lang);
  std::string out;
  for (const std::string& l : langs) out += (out.empty() ? "" : ", ") + l;
  return out;
}

// The file the student writes: each kit names it breaker (Breaker.java in Java's spelling).
std::string rules_file(const std::string& lang) {
  for (const KitFile& f : kit_files())
    if (f.lang == lang && (f.name.rfind("breaker.", 0) == 0 || f.name.rfind("Breaker.", 0) == 0))
      return std::string(f.name);
  return "the breaker";
}

}  // namespace

CLI::App* setup_init(CLI::App& app, InitOptions& options) {
  auto* cmd =
      app.add_subcommand("init", "Write a starter for the lab into DIR: the steps done, the breaker's rules yours");
  cmd->add_option("DIR", options.dir, "A new (or empty) directory")->required();
  cmd->add_option("--lang", options.lang, "The kit's language: " + languages())->required();
  cmd->add_flag("--force", options.force,
                "Write into DIR even if it is not empty (kit files of the same name are replaced)");
  cmd->add_option("--student", options.student,
                  "With --course-key: the kit's lab-settings.json holds this student's own numbers (cb-lab variant)");
  cmd->add_option("--course-key", options.course_key, "The course's secret, for --student");
  cmd->footer(
      "Then: cd DIR && cb-grade --run \"sh run.sh\" --dir out\n"
      "As written, the starter runs to the end and passes steps 1 and 2; the rest is yours.");
  return cmd;
}

ExitCode init_command(const InitOptions& o) {
  auto fail = [](const std::string& m) {
    std::cerr << "cb-lab init: " << m << '\n';
    return ExitCode::Usage;
  };
  bool known = false;
  for (const KitFile& f : kit_files()) known = known || f.lang == o.lang;
  if (!known) return fail("--lang: '" + o.lang + "' is not one of " + languages());
  auto variant = student_spec(o.student, o.course_key, grade::lab_spec());
  if (!variant) return fail(variant.error().message);
  const grade::LabSpec& numbers = *variant ? **variant : grade::lab_spec();
  std::error_code ec;
  const std::filesystem::path dir(o.dir);
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) return fail(o.dir + " exists and is not a directory");
    if (!std::filesystem::is_empty(dir, ec) && !o.force)
      return fail(o.dir + " exists and is not empty; choose a new directory, or add --force to write the kit into it");
  }
  if (auto made = make_directories(o.dir); !made) return fail(made.error().message);
  for (const KitFile& f : kit_files()) {
    if (f.lang != o.lang) continue;
    const std::string path = o.dir + "/" + std::string(f.name);
    if (auto w = write_file_atomically(path, std::string(f.text)); !w) return fail(w.error().message);
    if (f.executable && ::chmod(path.c_str(), 0755) != 0) return fail(path + ": chmod: " + std::strerror(errno));
    std::cout << "  wrote " << path << '\n';
  }
  // The numbers the kit runs on, which the grader grades it against.
  const std::string settings = o.dir + "/lab-settings.json";
  if (auto w = write_file_atomically(settings, grade::kit_settings_json(numbers)); !w) return fail(w.error().message);
  std::cout << "  wrote " << settings << " (" << numbers.numbers_name() << ")\n";
  // The handout with these numbers in every step: a student with their own reads theirs.
  const std::string handout = o.dir + "/HANDOUT.md";
  if (auto w = write_file_atomically(handout, grade::handout_text(numbers)); !w) return fail(w.error().message);
  std::cout << "  wrote " << handout << " (the handout, on these numbers)\n";
  std::cout << "\nThe " << o.lang << " starter is in " << o.dir << ". Your part is " << rules_file(o.lang)
            << " (look for YOUR PART). Run and grade it with:\n\n"
            << "  cd " << o.dir << " && cb-grade --run \"sh run.sh\" --dir out\n"
            << "\n(cb-grade reads the numbers from lab-settings.json and names them first)\n"
            << "\nand check the same rules on generated traces, call by call, with:\n\n"
            << "  cb-grade --conformance \"sh replay.sh\"\n";
  return ExitCode::Ok;
}

}  // namespace cb::cli

#include "sandbox_flags.h"

#include <algorithm>
#include <cctype>

#include "cb/decimal_time.h"

namespace cb::grade {

void add_sandbox_flags(CLI::App& app, SandboxFlags& f) {
  app.add_option("--sandbox", f.mode,
                 "What graded programs run in: auto (the full sandbox where the kernel allows it, else the fallback, "
                 "saying why), strict (the full sandbox or no grade), fallback (forced), none (no containment: for "
                 "debugging; the report says not to trust it)")
      ->capture_default_str();
  app.add_option(
         "--limit-memory", f.memory,
         "Memory of a graded program: of its whole box where the box has a control group, else of each process's "
         "data (unlimited: for a program built with a sanitizer where the box has no group)")
      ->capture_default_str();
  app.add_option("--limit-processes", f.processes, "Processes a graded program may have at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--limit-files", f.open_files, "Files each process of a graded program may hold open")
      ->capture_default_str()
      ->check(CLI::Range(16, 1048576));
  app.add_option("--limit-file-size", f.file_size, "Largest file a graded program may write")->capture_default_str();
  app.add_option("--limit-cpu", f.cpu, "CPU time of each process of a graded program")->capture_default_str();
  app.add_option("--limit-box-size", f.box_size,
                 "Bytes a submission's box may hold: its copy, its output and its temporary files")
      ->capture_default_str();
  app.add_option("--limit-box-files", f.box_files, "Files and folders a submission's box may hold")
      ->capture_default_str()
      ->check(CLI::Range(100, 10000000));
  app.add_option("--program-env", f.env,
                 "NAME=VALUE in every graded program's environment (repeatable); the sandbox passes on none of the "
                 "grader's own");
}

Result<sandbox::Policy> sandbox_policy(const SandboxFlags& f) {
  sandbox::Policy p;
  auto mode = sandbox::parse_mode(f.mode);
  if (!mode) return Error{"--sandbox: " + mode.error().message};
  p.mode = *mode;
  auto memory = sandbox::parse_size(f.memory);
  if (!memory) return Error{"--limit-memory: " + memory.error().message};
  auto file = sandbox::parse_size(f.file_size);
  if (!file) return Error{"--limit-file-size: " + file.error().message};
  auto cpu = parse_duration(f.cpu);
  if (!cpu || cpu->count() < 1'000'000 || cpu->count() % 1'000'000 != 0)
    return Error{"--limit-cpu: '" + f.cpu +
                 "' is not a whole number of seconds like 30s (the kernel counts whole seconds)"};
  auto box = sandbox::parse_size(f.box_size);
  if (!box || *box == sandbox::kUnlimited)
    return Error{"--limit-box-size: " + (box ? "'unlimited': a box must have a size" : box.error().message)};
  p.limits.box_bytes = *box;
  p.limits.box_files = f.box_files;
  p.limits.memory_bytes = *memory;
  p.limits.file_bytes = *file;
  p.limits.processes = f.processes;
  p.limits.open_files = f.open_files;
  p.limits.cpu = std::chrono::duration_cast<std::chrono::seconds>(*cpu);
  for (const std::string& kv : f.env) {
    const auto eq = kv.find('=');
    const std::string name = kv.substr(0, eq);
    const bool word = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
                      std::all_of(name.begin(), name.end(),
                                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
    if (eq == std::string::npos || !word)
      return Error{"--program-env: '" + kv + "' is not NAME=VALUE (a name of letters, digits and _)"};
    if (name == "CB_SERVER" || name == "CB_DIR") return Error{"--program-env: " + name + " is the grader's to set"};
    p.env.push_back(kv);
  }
  return p;
}

}  // namespace cb::grade

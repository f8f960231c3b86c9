// cb-lab: the circuit-breaker lab client. One file per subcommand (cmd_*.cpp).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cmd_conform.h"
#include "cmd_demo.h"
#include "cmd_fleet_member.h"
#include "cmd_init.h"
#include "cmd_run.h"
#include "cmd_scene.h"
#include "cmd_status.h"
#include "cmd_step.h"
#include "cmd_replay.h"
#include "cmd_variant.h"
#include "cmd_script.h"
#include "cb/cli_usage.h"
#include "cb/process_title.h"
#include "cb/grade/prebuilt.h"
#include "cb/sandbox/beacon.h"
#include "exit_code.h"

// Every build carries the harness's mark, so that a copy of cb-lab handed in as a student's
// breaker (`replay.sh: exec ./cb-lab conform`) is recognised by the grader (cb/grade/prebuilt.h).
[[gnu::used]] static const char* const kHarnessMark = cb::grade::kHarnessMark;

int main(int argc, char** argv) {
  using namespace cb::cli;
  // Wherever in a graded program's view a copy is installed, it does not answer for the program.
  if (cb::sandbox::inside_a_box()) {
    std::cerr << "cb-lab: " << cb::sandbox::kRefusedInBox << '\n';
    return static_cast<int>(ExitCode::Usage);
  }
  cb::remember_arguments(argc, argv);  // a server cb-lab leaves running is titled as one in ps
  CLI::App app{"cb-lab: a lab harness for the circuit-breaker pattern", "cb-lab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cb-lab ") + CB_LAB_VERSION);

  RunOptions run;
  StepOptions step;
  StatusOptions status;
  SceneOptions scene;
  DemoOptions demo;
  ScriptOptions script;
  ReplayOptions replay;
  InitOptions init;
  ConformOptions conform;
  VariantOptions variant;
  FleetMemberOptions fleet_member;
  auto* run_cmd = setup_run(app, run);
  auto* step_cmd = setup_step(app, step);
  auto* status_cmd = setup_status(app, status);
  auto* scene_cmd = setup_scene(app, scene);
  auto* demo_cmd = setup_demo(app, demo);
  auto* script_cmd = setup_script(app, script);
  auto* replay_cmd = setup_replay(app, replay);
  auto* init_cmd = setup_init(app, init);
  auto* conform_cmd = setup_conform(app, conform);
  auto* variant_cmd = setup_variant(app, variant);
  auto* fleet_member_cmd = setup_fleet_member(app, fleet_member);

  // CLI11 would answer a mistyped subcommand with "a subcommand is required"; name it instead.
  std::string known;
  bool is_known = false;
  for (const auto* sub : app.get_subcommands({})) {
    is_known = is_known || (argc > 1 && sub->get_name() == argv[1]);
    // A hidden one (fleet-member, which cb-lab starts itself) is not offered to a person.
    if (!sub->get_group().empty()) known += (known.empty() ? "" : ", ") + sub->get_name();
  }
  if (argc > 1 && argv[1][0] != '-' && !is_known) {
    std::cerr << "cb-lab: unknown subcommand '" << argv[1] << "' (known: " << known << ")\n";
    return to_int(ExitCode::Usage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << cb::usage_error(app, e, "cb-lab", {argv + 1, argv + argc}) << '\n';
    return to_int(ExitCode::Usage);
  }
  try {
    if (*run_cmd) return to_int(run_command(run));
    if (*step_cmd) return to_int(step_command(step));
    if (*status_cmd) return to_int(status_command(status));
    if (*scene_cmd) return to_int(scene_command(scene));
    if (*demo_cmd) return to_int(demo_command(demo));
    if (*script_cmd) return to_int(script_command(script));
    if (*replay_cmd) return to_int(replay_command(replay));
    if (*init_cmd) return to_int(init_command(init));
    if (*conform_cmd) return to_int(conform_command(conform));
    if (*variant_cmd) return to_int(variant_command(variant));
    if (*fleet_member_cmd) return to_int(fleet_member_command(fleet_member));
  } catch (const std::exception& e) {
    // The program's edge: nothing below throws on bad input, so this is a bug or the system.
    std::cerr << "cb-lab: internal error: " << e.what() << '\n';
    return to_int(ExitCode::Failed);
  }
  return to_int(ExitCode::Usage);
}

// cb-grade: the lab's grader. Checks a directory of output files step by step, against the
// server's record of what really happened; a class at once (class), again (regrade), in shards
// (merge), through a queue (queue ...). Each mode's flags are its own (modes.cpp).
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cb/cli_usage.h"
#include "cb/grade/provenance.h"
#include "cb/sandbox/beacon.h"
#include "cb/sandbox/interrupt.h"
#include "cli_options.h"
#include "modes.h"
#include "run_mode.h"
#ifdef CB_GRADE_QUEUE
#include "queue_command.h"
#endif

namespace {

using namespace cb::grade;

int grade_main(int argc, char** argv) {
  Command c;
  CLI::App app{"cb-grade: grades the circuit-breaker lab, step by step, on the server's evidence", "cb-grade"};
  declare_modes(app, c);
#ifdef CB_GRADE_QUEUE
  add_queue_commands(app, c);
#endif
  say_the_modes(app);
  // The version with the commit it was built from: what every report's provenance names.
  app.set_version_flag("--version", "cb-grade " + std::string(cb::grade::grader_version()));
  const std::vector<std::string> args = today_spelling({argv + 1, argv + argc});
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes a vector
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << cb::usage_error(app, e, "cb-grade", args) << '\n';
    return static_cast<int>(ExitCode::CouldNotRun);
  }
  const CLI::App& mode = mode_app(app);
  if (const std::string before = flags_before_the_mode(app); !before.empty())
    return could_not_run(before + ": a mode's flags go after it (cb-grade " + mode.get_name() + " ... " + before + ")");
  return run_mode(mode, c);
}

}  // namespace

int main(int argc, char** argv) {
  if (cb::sandbox::inside_a_box()) {
    std::cerr << "cb-grade: " << cb::sandbox::kRefusedInBox << '\n';
    return 2;
  }
  // Not dumpable: no process of the same uid (a graded program in the fallback, where it may
  // share the grader's) can read or write this one's memory through /proc or ptrace.
  ::prctl(PR_SET_DUMPABLE, 0);
  // Before any thread: Ctrl-C, a cancelled CI job or a closed terminal end the graded programs
  // and remove their boxes, never leave them behind.
  cb::sandbox::stop_cleanly_on_signals("cb-grade");
  const int code = grade_main(argc, argv);
  cb::sandbox::wait_if_stopping();  // a stop under way exits with its own code
  return code;
}

// cb-grade: the lab's grader. Checks a directory of output files step by step, against the
// server's record of what really happened; a class at once (class), again (regrade), in shards
// (merge), through a queue (queue ...). Each mode's flags are its own (modes.cpp).
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cb/cli_usage.h"
#include "cb/grade/grade.h"
#include "cb/sandbox/beacon.h"
#include "cb/sandbox/interrupt.h"
#include "cb/grade/provenance.h"
#include "class_command.h"
#include "cli_flags.h"
#include "cli_options.h"
#include "modes.h"
#include "sandbox_flags.h"
#include "single_command.h"
#ifdef CB_GRADE_QUEUE
#include "queue_command.h"
#endif

namespace {

using namespace cb::grade;

// A program that could read the key could give itself any numbers; and an ordinary user's fallback
// runs a whole class (a class, a queue's worker) as one uid, only when the instructor says so.
std::string refused_by_sandbox(const Options& o, cb::sandbox::Sandbox& sandbox, const cb::sandbox::Policy& policy) {
  const bool runs = !o.run.empty() || !o.conformance.empty();
  if (!runs) return {};
  if (!o.course_key.empty())
    if (const auto why = sandbox.readable_by_programs(o.course_key, o.mode == Mode::One ? o.submission : o.batch))
      return "--course-key: " + o.course_key + " could be read by the programs it grades: " + *why +
             "; keep it where only the grader's user may read it, outside the folders handed in";
  const char* many = o.mode == Mode::QueueWork ? "queue work" : o.mode == Mode::Class ? "class" : nullptr;
  if (many == nullptr) return {};
  auto kind = sandbox.kind();
  if (!kind) return kind.error().message;
  if (*kind == cb::sandbox::Kind::Fallback && ::geteuid() != 0 && policy.mode != cb::sandbox::Mode::Fallback)
    return std::string(many) +
           ": no full sandbox here, and the fallback of an ordinary user runs every student's program as the "
           "grader's own uid, where one can reach another's; run the grader as root, or say --sandbox fallback to "
           "grade the class so anyway";
  return {};
}

// The modes that run programs, in a sandbox of the flags' policy.
int run_graded(const Options& o, Asked& asked, const SandboxFlags& flags) {
  auto policy = sandbox_policy(flags);
  if (!policy) return could_not_run(policy.error().message);
  policy->harness_may_answer = asked.grade.rubric.prebuilt == Prebuilt::NoneRefused;
  // Every program this grader starts runs in the sandbox, in a box of the submission's own.
  cb::sandbox::Sandbox sandbox(*policy);
  if (const std::string refused = refused_by_sandbox(o, sandbox, *policy); !refused.empty())
    return could_not_run(refused);
#ifdef CB_GRADE_QUEUE
  if (o.mode == Mode::QueueWork) return run_queue(o, asked, sandbox);
#endif
  if (o.mode == Mode::Class) return run_class(o, asked, sandbox);
  return run_one(o, std::move(asked), sandbox);
}

int grade_main(int argc, char** argv) {
  Command c;
  CLI::App app{"cb-grade: grades the circuit-breaker lab, step by step, on the server's evidence", "cb-grade"};
  declare_modes(app, c);
#ifdef CB_GRADE_QUEUE
  add_queue_commands(app, c.o, c.sandbox);
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
  Options& o = c.o;
  const CLI::App& mode = mode_app(app);
  if (const std::string before = flags_before_the_mode(app); !before.empty())
    return could_not_run(before + ": a mode's flags go after it (cb-grade " + mode.get_name() + " ... " + before + ")");
  auto asked = read_flags(mode, o);
  if (!asked) return could_not_run(asked.error().message);
  if (c.list) {
    std::cout << list_checks(asked->grade.spec ? *asked->grade.spec : lab_spec(), asked->format == Format::Json);
    return 0;
  }
  if (c.max_score) {
    std::cout << asked->grade.rubric.max_score(!o.conformance.empty()) << '\n';
    return 0;
  }
  switch (o.mode) {
    case Mode::Regrade: return run_regrade(o, asked->grade);
    case Mode::Merge: return run_merge(o, asked->grade);
    case Mode::Verify: return run_verify(o, asked->grade);
#ifdef CB_GRADE_QUEUE
    case Mode::QueuePush:
    case Mode::QueueStatus:
    case Mode::QueueCollect: {
      cb::sandbox::Sandbox none{cb::sandbox::Policy{}};
      return run_queue(o, *asked, none);
    }
#endif
    default: return run_graded(o, *asked, c.sandbox);
  }
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

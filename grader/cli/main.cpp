// cb-grade: the lab's grader. Checks a directory of output files step by step, against the
// server's record of what really happened; a class at once with --batch, again with --regrade.
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
#include "sandbox_flags.h"
#include "single_command.h"
#ifdef CB_GRADE_QUEUE
#include "queue_command.h"
#endif

namespace {

using namespace cb::grade;

// A program that could read the key could give itself any numbers; and an ordinary user's fallback
// runs a whole class (a batch, a queue's worker) as one uid, only when the instructor says so.
std::string refused_by_sandbox(const Options& o, cb::sandbox::Sandbox& sandbox, const cb::sandbox::Policy& policy) {
  const bool runs = !o.run.empty() || !o.conformance.empty();
  if (!runs) return {};
  if (!o.course_key.empty())
    if (const auto why = sandbox.readable_by_programs(o.course_key, o.batch.empty() ? o.submission : o.batch))
      return "--course-key: " + o.course_key + " could be read by the programs it grades: " + *why +
             "; keep it where only the grader's user may read it, outside the folders handed in";
  const char* many = o.queue_action == "work" ? "queue work" : !o.batch.empty() ? "--batch" : nullptr;
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

// What a command about a class is, said before the flags it refuses; nullptr: one submission.
const char* class_mode(const Options& o) {
#ifdef CB_GRADE_QUEUE
  if (const char* queue = queue_mode(o); queue != nullptr) return queue;
#endif
  if (!o.verify.empty())
    return "verify runs nothing and writes nothing, it judges what --reports kept; these do not go "
           "with it: ";
  if (!o.merge.empty()) return "merge runs nothing, it joins what shards kept; these do not go with it: ";
  if (!o.regrade.empty()) return "--regrade runs nothing, it reads what --reports kept; these do not go with it: ";
  if (!o.batch.empty()) return "--batch grades a class; these are about one submission: ";
  return nullptr;
}

int grade_main(int argc, char** argv) {
  Options o;
  SandboxFlags sandbox_flags;
  bool max_score = false;
  bool list = false;
  CLI::App app{"cb-grade: grades the circuit-breaker lab, step by step, on the server's evidence", "cb-grade"};
  add_grade_flags(app, o, sandbox_flags, max_score, list);
  CLI::App* merge = app.add_subcommand(
      "merge",
      "Join the --reports folders of a class graded in shards (--batch --shard I/N) into --reports DIR, "
      "with one gradebook (-o); what no shard graded is named, and the exit is 3");
  merge->add_option("shards", o.merge, "Each shard's --reports folder")->required();
  merge->fallthrough();  // --reports, --rubric, -o, -j, --format after the shards
  list_flags_taken(merge, app, class_joining_flags());
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Judge every grade a --reports folder keeps again, from its evidence, rewriting nothing, and name each "
      "that does not follow from it (exit 1)");
  verify->add_option("reports", o.verify, "A --reports folder (of --batch, a merge or a regrade)")->required();
  verify->add_option(
      "--gradebook", o.verify_gradebook,
      "A gradebook of that class (-o gradebook.csv or .json): each row, and its digest, held to what the kept "
      "grades give");
  verify->fallthrough();  // --rubric, -j
  list_flags_taken(verify, app, {"--rubric", "-j"});
#ifdef CB_GRADE_QUEUE
  add_queue_commands(app, o);
#endif
  // The version with the commit it was built from: what every report's provenance names.
  app.set_version_flag("--version", "cb-grade " + std::string(cb::grade::grader_version()));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << cb::usage_error(app, e, "cb-grade", {argv + 1, argv + argc}) << '\n';
    return static_cast<int>(ExitCode::CouldNotRun);
  }
  if (const char* mode = class_mode(o); mode != nullptr)
    if (const std::string refused = flags_not_for_a_class(app, o); !refused.empty())
      return could_not_run(std::string(mode) + refused);
  auto asked = read_flags(app, o);
  if (!asked) return could_not_run(asked.error().message);
  if (list) {
    std::cout << list_checks(asked->grade.spec ? *asked->grade.spec : lab_spec(), asked->format == Format::Json);
    return 0;
  }
  if (max_score) {
    std::cout << asked->grade.rubric.max_score(!o.conformance.empty()) << '\n';
    return 0;
  }
  if (!o.regrade.empty()) return run_regrade(o, asked->grade);
  if (!o.merge.empty()) return run_merge(o, asked->grade);
  if (!o.verify.empty()) return run_verify(o, asked->grade);
#ifdef CB_GRADE_QUEUE
  cb::sandbox::Sandbox none{cb::sandbox::Policy{}};
  if (!o.queue_action.empty() && o.queue_action != "work") return run_queue(o, *asked, none);
#endif
  auto policy = sandbox_policy(sandbox_flags);
  if (!policy) return could_not_run(policy.error().message);
  policy->harness_may_answer = asked->grade.rubric.prebuilt == Prebuilt::NoneRefused;
  // Every program this grader starts runs in the sandbox, in a box of the submission's own.
  cb::sandbox::Sandbox sandbox(*policy);
  if (const std::string refused = refused_by_sandbox(o, sandbox, *policy); !refused.empty())
    return could_not_run(refused);
#ifdef CB_GRADE_QUEUE
  if (o.queue_action == "work") return run_queue(o, *asked, sandbox);
#endif
  if (!o.batch.empty()) return run_batch(o, *asked, sandbox);
  return grade_single(o, std::move(*asked), sandbox);
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

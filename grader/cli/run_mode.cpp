#include "run_mode.h"

#include <unistd.h>

#include <iostream>

#include "cb/grade/grade.h"
#include "class_command.h"
#include "cli_flags.h"
#include "single_command.h"
#ifdef CB_GRADE_QUEUE
#include "queue_command.h"
#endif

namespace cb::grade {
namespace {

// A program that could read the key could give itself any numbers; and an ordinary user's fallback
// runs a whole class (a class, a queue's worker) as one uid, only when the instructor says so.
// `handed_in`: the submission, or the class's folder; `many`: the class's mode (none: one).
std::string refused_by_sandbox(const GradingFlags& o, const std::string& handed_in, const char* many,
                               cb::sandbox::Sandbox& sandbox, const cb::sandbox::Policy& policy) {
  const bool runs = !o.run.empty() || !o.conformance.empty();
  if (!runs) return {};
  if (!o.course_key.empty())
    if (const auto why = sandbox.readable_by_programs(o.course_key, handed_in))
      return "--course-key: " + o.course_key + " could be read by the programs it grades: " + *why +
             "; keep it where only the grader's user may read it, outside the folders handed in";
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

// A mode that runs programs, in a sandbox of the flags' policy: `grade` is handed the sandbox.
template <typename Grade>
int in_sandbox(const GradingFlags& o, const std::string& handed_in, const char* many, const Asked& asked,
               const SandboxFlags& flags, Grade grade) {
  auto policy = sandbox_policy(flags);
  if (!policy) return could_not_run(policy.error().message);
  policy->harness_may_answer = asked.grade.rubric.prebuilt == Prebuilt::NoneRefused;
  // Every program this grader starts runs in the sandbox, in a box of the submission's own.
  cb::sandbox::Sandbox sandbox(*policy);
  if (const std::string refused = refused_by_sandbox(o, handed_in, many, sandbox, *policy); !refused.empty())
    return could_not_run(refused);
  return grade(sandbox);
}

int one_submission(const CLI::App& mode, const Command& c) {
  const OneArgs& o = c.one;
  auto asked = read_flags(mode, o);
  if (!asked) return could_not_run(asked.error().message);
  if (o.list) {
    std::cout << list_checks(asked->grade.spec ? *asked->grade.spec : lab_spec(), asked->format == Format::Json);
    return 0;
  }
  if (o.max_score) {
    std::cout << asked->grade.rubric.max_score(!o.conformance.empty()) << '\n';
    return 0;
  }
  return in_sandbox(o, o.submission, nullptr, *asked, c.sandbox,
                    [&](cb::sandbox::Sandbox& sandbox) { return run_one(o, std::move(*asked), sandbox); });
}

int a_class(const CLI::App& mode, const Command& c) {
  auto asked = read_flags(mode, c.cls);
  if (!asked) return could_not_run(asked.error().message);
  return in_sandbox(c.cls, c.cls.root, "class", *asked, c.sandbox,
                    [&](cb::sandbox::Sandbox& sandbox) { return run_class(c.cls, *asked, sandbox); });
}

// The modes that only judge what was kept: the rubric and the lab, read once.
template <typename Args, typename Run>
int judging(const Args& o, Run run) {
  auto grade = read_judging(o);
  if (!grade) return could_not_run(grade.error().message);
  return run(o, *grade);
}

#ifdef CB_GRADE_QUEUE
int queue_action(const CLI::App& mode, const Command& c) {
  switch (c.mode) {
    case Mode::QueuePush: {
      auto asked = read_flags(mode, c.push);
      if (!asked) return could_not_run(asked.error().message);
      return run_queue_push(c.push, *asked);
    }
    case Mode::QueueWork: {
      auto asked = read_flags(mode, c.work);
      if (!asked) return could_not_run(asked.error().message);
      return in_sandbox(c.work, c.work.root, "queue work", *asked, c.sandbox,
                        [&](cb::sandbox::Sandbox& sandbox) { return run_queue_work(c.work, *asked, sandbox); });
    }
    case Mode::QueueStatus: return run_queue_status(c.status);
    default: return judging(c.collect, run_queue_collect);
  }
}
#endif

}  // namespace

int run_mode(const CLI::App& mode, const Command& c) {
  switch (c.mode) {
    case Mode::One: return one_submission(mode, c);
    case Mode::Class: return a_class(mode, c);
    case Mode::Regrade: return judging(c.regrade, run_regrade);
    case Mode::Merge: return judging(c.merge, run_merge);
    case Mode::Verify: return judging(c.verify, run_verify);
    default:
#ifdef CB_GRADE_QUEUE
      return queue_action(mode, c);
#else
      return could_not_run("this cb-grade is built without the queue");
#endif
  }
}

}  // namespace cb::grade

// Step 1: the server answers, its record holds one whole run of the lab, and the run follows the numbers it is graded
// on.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

void s1_numbers(CheckVerdict& v, const Inputs& in, bool) {
  // The numbers the run showed, beside the student's: a class's grading names whose they are.
  if (!in.pre.other_numbers.empty())
    return v.fail(in.pre.other_numbers, {{"window", in.spec.rules.window}, {"trials", in.spec.rules.trials}},
                  {{"window", in.state.value->window_size}, {"trials", in.state.value->permitted_in_half_open}});
  v.pass();
}
constexpr CheckDef kFollowsNumbers{
    "s1.numbers", When::Finished, "the run follows {numbers}", s1_numbers, {kServer, file(FileRole::State)}};

void s1_server(CheckVerdict& v, const Inputs& in, bool) {
  if (in.probe && !in.probe->flaky) return v.fail(in.probe->detail);
  if (!in.pre.has_record) return v.skip_absent(in.pre.no_record_reason);
  v.pass();
}
constexpr CheckDef kAnswers{.id = "s1.server",
                            .when = When::Always,
                            .title = "the flaky server answers, with its record of every request",
                            .body = s1_server,
                            .on_server = true};

void s1_once(CheckVerdict& v, const Inputs& in, bool just_after) {
  // Only where the record is the program's alone (--run) is a second run its mistake; anywhere
  // else the evidence failed and grade_steps() says so.
  const LabRun& run = *in.run;
  // An empty record is no run at all. (Right after step 1 it is what a fresh server holds.)
  if (run.lab.empty() && !just_after)
    return v.fail("the record holds no request of the lab: the program never called the server", 1, 0);
  if (const std::string& why = in.pre.record_unusable; !why.empty() || run.runs > 1)
    return v.fail(why.empty() ? "the record holds " + std::to_string(run.runs) + " runs of the lab" : why, 1,
                  static_cast<std::uint64_t>(run.runs));
  v.pass();
}
constexpr CheckDef kOnce{
    "s1.once", When::Always, "the record holds one whole run of the lab", s1_once, {after(kAnswers)}};

void s1_count(CheckVerdict& v, const Inputs& in, bool) {
  const auto& counts = in.run->count_calls;
  const bool answered = !counts.empty() && std::all_of(counts.begin(), counts.end(), [](const RecordEntry* e) {
    return e->status == 200 && e->count.has_value();
  });
  v.expect(answered,
           counts.empty() ? "the record has no " + kCountPath + " request: " + in.spec.files.fastfail +
                                "'s before and after must come from " + kCountPath
                          : "a " + kCountPath + " request was not answered with a count",
           nullptr, static_cast<std::uint64_t>(counts.size()));
}
constexpr CheckDef kCount{
    "s1.count", When::Finished, "{count_path} was asked and answered {\"count\": N}", s1_count, {kRecord}};

void s1_admin(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  if (run.admin.empty()) return v.pass();
  const RecordEntry& e = *run.admin.front();
  v.fail(std::to_string(run.admin.size()) + " request(s) to the server's admin endpoints, the first " + e.method + " " +
             e.path + " at " + seconds_text(e.t_ms) +
             ": the record is the grader's evidence, and a program being graded may not reset or read it (they were "
             "refused)",
         0, static_cast<std::uint64_t>(run.admin.size()));
}
constexpr CheckDef kAdmin{
    "s1.admin", When::Always, "the program left the server's admin endpoints alone", s1_admin, {kServer}};

constexpr const CheckDef* kStep[] = {&kAnswers, &kOnce, &kCount, &kAdmin, &kFollowsNumbers};

}  // namespace

std::span<const CheckDef* const> step1_checks() noexcept { return kStep; }

}  // namespace cb::grade

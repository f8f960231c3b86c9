#include "cli_flags.h"

#include <nlohmann/json.hpp>

#include "cb/bounded_file.h"
#include "cb/decimal_time.h"
#include "cb/flaky/endpoints.h"
#include "cb/grade/conformance_check.h"
#include "cb/grade/files.h"
#include "cb/grade/format_common.h"
#include "cb/grade/jobs.h"
#include "cb/grade/lab_spec.h"
#include "cb/grade/variant.h"

namespace cb::grade {
namespace {

// A rubric is a few lines.
constexpr std::size_t kMaxRubricBytes = 64 << 10;

// Gradescope's /autograder/submission_metadata.json names who submitted: the first user's
// `field`, "email" or "sid" (the course's student id), as the rubric's id_field says.
Result<std::string> student_from_metadata(const std::string& path, const std::string& field) {
  if (field != "email" && field != "sid")
    return Error{"the id field is " + field + "; Gradescope names a student by email or sid"};
  auto text = read_bounded_file(path, 1 << 20, "submission metadata");
  if (!text) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{path + ": not a JSON object"};
  const auto users = j.find("users");
  if (users == j.end() || !users->is_array() || users->empty() || !(*users)[0].is_object())
    return Error{path + ": users: expected the submitters, the first one an object"};
  const nlohmann::json& first = (*users)[0];
  if (const auto v = first.find(field); v != first.end() && v->is_string() && !v->get_ref<const std::string&>().empty())
    return v->get<std::string>();
  return Error{path + ": users[0]: no " + field + " to know the student by (the id field is " + field + ")"};
}

// A duration flag: positive (or, `zero_ok`, not negative).
Result<std::chrono::milliseconds> duration_flag(const char* flag, const std::string& text, const char* like,
                                                bool zero_ok = false) {
  const auto d = parse_duration(text);
  if (!d || d->count() < 0 || (!zero_ok && d->count() == 0))
    return Error{std::string(flag) + ": '" + text + "' is not a " + (zero_ok ? "" : "positive ") + "duration like " +
                 like};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

// The numbers of the lab-settings.json in the folder graded (a starter kit's), or none when it
// holds none. Read as every file handed in is: without following a link, bounded.
Result<std::optional<LabNumbers>> folder_numbers(const std::string& folder) {
  auto dir = SubmissionDir::open(folder);
  if (!dir) return std::optional<LabNumbers>{};
  const FileRead f = dir->read("lab-settings.json");
  if (f.found == FileRead::Found::Missing) return std::optional<LabNumbers>{};
  const std::string name = (folder == "." ? std::string() : folder + "/") + "lab-settings.json";
  if (f.found != FileRead::Found::Ok) return Error{name + ": " + f.reason + " (or grade with --handout-numbers)"};
  auto numbers = numbers_of_settings(f.bytes, name);
  if (!numbers) return Error{numbers.error().message + " (or grade with --handout-numbers)"};
  return std::optional<LabNumbers>{*numbers};
}

// Told, never obeyed: why the folder's own numbers were not the ones graded on.
std::string other_numbers_note(const LabNumbers& own, const std::string& why) {
  return "the folder's lab-settings.json holds other numbers (" + own.text() + "); " + why;
}

// The lab and the numbers graded on: --spec's, then --settings', --student's, the folder's
// lab-settings.json (a student checking their own kit), or the handout's.
// The lab itself (--spec) is read_judging()'s.
Result<void> read_lab(const GradingFlags& o, bool a_class, Asked& a) {
  std::string student = o.student;
  if (!o.submission_metadata.empty()) {
    if (!student.empty()) return Error{"--submission-metadata names the student; it does not go with --student"};
    auto who = student_from_metadata(o.submission_metadata, a.id_field);
    if (!who) return Error{"--submission-metadata: " + who.error().message};
    student = *who;
  }
  if (!o.course_key.empty()) {
    auto key = read_course_key(o.course_key);
    if (!key) return Error{"--course-key: " + key.error().message};
    a.course_key = *key;
  }
  if (!student.empty() && a.course_key.empty()) return Error{"--student: goes with --course-key FILE"};
  if (!o.roster.empty() && a.course_key.empty()) return Error{"--roster: goes with --course-key"};
  if (!a.course_key.empty() && student.empty() && !a_class)
    return Error{"--course-key: goes with --student ID or --submission-metadata FILE (a class: cb-grade class DIR)"};
  const LabSpec& base = a.grade.spec ? *a.grade.spec : lab_spec();
  if (!o.settings.empty() && o.handout_numbers) return Error{"--settings: does not go with --handout-numbers"};
  if (!o.settings.empty()) {
    if (!student.empty() || !a.course_key.empty())
      return Error{"--settings: the course key decides a student's numbers; give one or the other"};
    auto spec = spec_of_settings_file(base, o.settings);
    if (!spec) return spec.error();
    spec->numbers_from = "--settings " + o.settings;
    a.grade.spec = std::make_shared<const LabSpec>(std::move(*spec));
    return {};
  }
  // Each folder's numbers are the key's, or the handout's; a merge or a regrade reads them as kept.
  if (a_class) return {};
  auto own = folder_numbers(o.submission);
  if (!own) return own.error();
  if (!student.empty()) {
    auto variant = variant_spec(base, student, a.course_key);
    if (!variant) return Error{"--student: " + variant.error().message};
    LabSpec keyed = **variant;
    keyed.numbers_from = "the course key and the student's " + a.id_field;
    a.grade.spec = std::make_shared<const LabSpec>(std::move(keyed));
    // A file in the folder handed in is the student's to write: never trusted, but told.
    if (*own && **own != numbers_of(*a.grade.spec))
      a.numbers_note = other_numbers_note(**own, "a grading with the course key never uses them");
    return {};
  }
  if (!*own || **own == numbers_of(base)) return {};
  if (o.handout_numbers) {
    a.numbers_note = other_numbers_note(**own, "--handout-numbers grades on the handout's");
    return {};
  }
  // A student checking their own kit: the numbers it was made with.
  auto spec = with_numbers(base, **own, "");
  if (!spec) return Error{o.submission + "/lab-settings.json: " + spec.error().message};
  spec->numbers_from = "lab-settings.json in the folder graded";
  a.grade.spec = std::make_shared<const LabSpec>(std::move(*spec));
  return {};
}

Result<void> read_rubric(const GradingFlags& o, Asked& a) {
  auto judging = read_judging(o);
  if (!judging) return judging.error();
  a.grade = std::move(*judging);
  if (!o.refuse_prebuilt.empty()) {
    auto rule = parse_prebuilt(o.refuse_prebuilt);
    if (!rule) return Error{"--refuse-prebuilt: " + rule.error().message};
    a.grade.rubric.prebuilt = *rule;
  }
  return {};
}

// The traces: the flags', else the rubric's (an assignment's fixed seed), else a random seed.
ConformanceRun read_conformance(const CLI::App& app, const GradingFlags& o, const Asked& a) {
  ConformanceRun c;
  c.traces.command = o.conformance;
  c.traces.count = given(app, "--traces") || !a.grade.rubric.traces ? o.traces : *a.grade.rubric.traces;
  c.seed_drawn = !given(app, "--seed") && !a.grade.rubric.seed;
  c.traces.seed = given(app, "--seed") ? o.seed : a.grade.rubric.seed ? *a.grade.rubric.seed : random_seed();
  c.jobs = o.jobs > 0 ? o.jobs : computing_jobs(this_process());  // JVMs side by side: one a CPU
  // What the answers depend on besides the command and the seed, as it was given.
  if (c.traces.count != TraceSet{}.count) c.traces.repeat_flags += " --traces " + std::to_string(c.traces.count);
  for (const char* flag : {"--submission", "--trace-timeout", "--warm-up", "--conformance-timeout", "--refuse-prebuilt",
                           "--sandbox", "--limit-memory", "--limit-processes", "--limit-files", "--limit-file-size",
                           "--limit-cpu", "--limit-box-size", "--limit-box-files", "--program-env"})
    if (const CLI::Option* opt = app.get_option_no_throw(flag); opt != nullptr && opt->count() > 0)
      for (const std::string& value : opt->results())
        c.traces.repeat_flags += " " + std::string(flag) + " " + shell_quoted(value);
  return c;
}

}  // namespace

bool given(const CLI::App& app, const char* flag) {
  const CLI::Option* opt = app.get_option_no_throw(flag);
  return opt != nullptr && opt->count() > 0;
}

void add_report_flags(CLI::App& app, OutputFlags& o) {
  app.add_option("--format", o.format,
                 "text, json, junit, gradescope, html (a page with the run drawn on a time axis) or classroom (GitHub "
                 "Classroom's grading reporter)")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "Write the report here (atomically) instead of standard output");
}

void add_gradebook_flags(CLI::App& app, OutputFlags& o) {
  app.add_option("--format", o.gradebook_format,
                 "The gradebook's: csv, or json (also when -o ends in .json); --reports DIR keeps each student's "
                 "report as text, JSON and HTML")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& v) {
            return v == "csv" || v == "json" ? std::string()
                                             : "'" + v +
                                                   "': a gradebook is csv or json (--reports DIR keeps each "
                                                   "student's report as text, JSON and HTML)";
          },
          "csv|json"));
  app.add_option("-o,--output", o.output, "Write the gradebook here (atomically) instead of standard output");
}

void add_rubric_flag(CLI::App& app, JudgingFlags& o) {
  app.add_option("--rubric", o.rubric,
                 "JSON: points per part, Gradescope's visibility of each, the conformance seed and traces "
                 "(docs/TEACHING.md)");
}

void add_jobs_flag(CLI::App& app, JudgingFlags& o, const std::string& what) {
  app.add_option("-j,--jobs", o.jobs, what);
}

void add_judging_flags(CLI::App& app, JudgingFlags& o) {
  add_rubric_flag(app, o);
  add_jobs_flag(app, o, "Submissions judged at once (default: one per CPU)");
}

void add_spec_flag(CLI::App& app, JudgingFlags& o) {
  app.add_option("--spec", o.spec,
                 "Grade against this lab (scenarios/lab.json's format: its numbers, step titles and files) instead of "
                 "the one built in");
}

void add_key_flags(CLI::App& app, GradingFlags& o, bool a_class) {
  app.add_option("--course-key", o.course_key,
                 a_class ? "The course's secret: each folder is graded on its student's own numbers (the folder's "
                           "name is the student, or --roster says)"
                         : "The course's secret: with --student, that student's own numbers");
  app.add_option("--id-field", o.id_field,
                 "Which field names a student for their numbers: email (the default, or the rubric's id_field), "
                 "sid, folder (a class's folder name) or a column of --roster");
  if (!a_class) return;
  app.add_option("--roster", o.roster,
                 "With --course-key: a roster, a header naming the folder column and the id field's "
                 "(folder,email,... in any case; comma, semicolon or tab); a Submitted column, in UTC, is when each "
                 "folder was handed in");
}

void add_program_flags(CLI::App& app, GradingFlags& o, SandboxFlags& sandbox) {
  app.add_option("--run", o.run, "Start a fresh server, run this command (CB_SERVER, CB_DIR set), then grade");
  app.add_option("--timeout", o.timeout,
                 "--run: time limit; on expiry the command is killed and graded as far as it got")
      ->capture_default_str();
  app.add_option(
      "--conformance", o.conformance,
      "Drive this command's breaker call by call with generated traces (the line protocol of docs/CONTRACTS.md) "
      "and compare every answer with the lab's rules; alone, or as one more part beside the steps");
  app.add_option("--traces", o.traces, "--conformance: how many traces")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed,
                 "--conformance: the traces' seed (default: a random one, printed in the report; for a class, one "
                 "for the whole class)");
  app.add_option("--trace-timeout", o.trace_timeout,
                 "--conformance: time limit of one trace, start to exit (--timeout sets it too, without --run)")
      ->capture_default_str();
  app.add_option(
         "--conformance-timeout", o.conformance_timeout,
         "--conformance: time limit of one submission's whole part, its traces and the runs that explain a "
         "failure (default: the rubric's conformance_timeout, else the one shown); past it no run starts, and a "
         "part "
         "with nothing wrong by then fails as too slow")
      ->capture_default_str();
  app.add_option("--refuse-prebuilt", o.refuse_prebuilt,
                 "--conformance: what a submission may not hand in ready-made: harness (a copy of cb-lab or cb-grade; "
                 "the default, or the rubric's), all (any executable), none");
  app.add_option("--warm-up", o.warm_up,
                 "--conformance: extra time for the traces that start before the first has finished (a program "
                 "that builds itself on its first start)")
      ->capture_default_str();
  add_sandbox_flags(app, sandbox);
}

void add_grading_flags(CLI::App& app, GradingFlags& o, SandboxFlags& sandbox, bool a_class) {
  add_program_flags(app, o, sandbox);
  add_spec_flag(app, o);
  add_key_flags(app, o, a_class);
  add_rubric_flag(app, o);
  add_jobs_flag(app, o,
                a_class ? "Submissions graded at once (default: " + std::to_string(kJobsPerCpu) +
                              " per CPU this process may use, its affinity, control group or Slurm allocation, and at "
                              "most one per " +
                              std::to_string(kMemoryPerJob >> 20) + " MiB of its memory)"
                        : std::string("--conformance: traces run at once (default: one per CPU this process may use)"));
  app.add_option("--reports", o.reports,
                 a_class ? "Keep each submission's reports (text, JSON, HTML), its record, its files and its "
                           "conformance answers in DIR/NAME/, for the student and for regrade"
                         : "Keep the reports (text, JSON, HTML) in DIR too");
  if (a_class) {
    add_gradebook_flags(app, o);
  } else {
    add_report_flags(app, o);
  }
}

void add_one_submission_flags(CLI::App& app, OneArgs& o) {
  app.add_option("--dir", o.dir, "The lab's output directory")->capture_default_str();
  app.add_option("--step", o.steps,
                 "Check what must hold right after step N (repeatable); default: every step, finished")
      ->check(CLI::Range(1, kGradedSteps));
  app.add_option("--server", o.server,
                 "The flaky server whose record is the evidence (default: try " + cb::flaky::default_url() + ")");
  app.add_option("--submission", o.submission,
                 "--run, --conformance: the folder the program is from; it works in a private copy of it, and sees "
                 "nothing else of the file system but the system, read-only")
      ->capture_default_str();
  app.add_flag("--any-port", o.any_port, "--run: always use a free port (CB_SERVER says which)");
  app.add_option("--student", o.student,
                 "Grade on this student's own numbers (with --course-key; cb-lab variant prints them)");
  app.add_option("--settings", o.settings,
                 "Grade on the numbers of this lab-settings.json (a kit made for one student: checking your own work)");
  app.add_flag("--handout-numbers", o.handout_numbers,
               "Grade on the handout's numbers even when the folder's lab-settings.json holds others (an instructor "
               "grading without a course key)");
  app.add_option("--submission-metadata", o.submission_metadata,
                 "With --course-key: the student is the one Gradescope's submission_metadata.json names");
  app.add_flag("--max-score", o.max_score,
               "Print the points a report is out of under --rubric (with --conformance: its part too), and exit");
  app.add_flag("--list-checks", o.list,
               "Print every check, step by step (with --format json: as JSON), on the numbers graded on, and exit");
  app.add_option("--record", o.record_file, "Grade on a saved record (from --save-record) instead of a live server");
  app.add_option("--save-record", o.save_record, "Keep the server's record this grade was given on, as JSON");
}

void add_class_flags(CLI::App& app, ClassArgs& o, bool in_shards) {
  app.add_option("--batch-files", o.files, "Where the lab's files are inside each submission")->capture_default_str();
  if (!in_shards) return;
  app.add_flag("--resume", o.resume,
               "With --reports DIR: grade only the submissions DIR holds no whole grade of from a class graded with "
               "the same grader, lab, numbers, rubric and traces (what an interrupted run left); the rest are judged "
               "from what was kept");
  app.add_option("--shard", o.shard,
                 "Grade shard I of N (I from 0) of the class, for a job array: the folders at positions I, I+N, ...; "
                 "env/N takes I from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID, env also N from "
                 "SLURM_ARRAY_TASK_COUNT; `cb-grade merge` joins the shards' --reports");
}

namespace {

// `conformance_only`: --conformance with nothing that points at the lab's files or evidence (one
// submission's --run, --server, --record, --step, --dir): the conformance part alone is graded.
Result<Asked> read_grading(const CLI::App& app, const GradingFlags& o, bool a_class, bool conformance_only) {
  Asked a;
  const auto format = parse_format(o.format);
  if (!format)
    return Error{"--format: '" + o.format + "' is not one of text, json, junit, gradescope, html, classroom"};
  a.format = *format;
  auto timeout = duration_flag("--timeout", o.timeout, "60s");
  if (!timeout) return timeout.error();
  a.timeout = *timeout;
  a.conformance_only = conformance_only;
  auto trace_limit = duration_flag("--trace-timeout",
                                   a.conformance_only && given(app, "--timeout") ? o.timeout : o.trace_timeout, "5s");
  if (!trace_limit) return trace_limit.error();
  auto conformance_limit = duration_flag("--conformance-timeout", o.conformance_timeout, "120s");
  if (!conformance_limit) return conformance_limit.error();
  auto warm_up = duration_flag("--warm-up", o.warm_up, "20s", true);
  if (!warm_up) return warm_up.error();
  // The rubric first: its id_field says who a student is.
  if (auto rubric = read_rubric(o, a); !rubric) return rubric.error();
  if (!o.id_field.empty() && !is_id_field(o.id_field))
    return Error{"--id-field: '" + o.id_field +
                 "' is not email, sid, folder or a roster's column (letters, digits, _)"};
  a.id_field = o.id_field.empty() ? a.grade.rubric.id_field : o.id_field;
  if (auto lab = read_lab(o, a_class, a); !lab) return lab.error();
  if (!o.conformance.empty()) {
    ConformanceRun c = read_conformance(app, o, a);
    // The rubric as applied: a flag that fixes the traces otherwise wins, and the grade is judged
    // on those (a regrade holds kept answers to the rubric's traces, judge.h).
    if (a.grade.rubric.seed) a.grade.rubric.seed = c.traces.seed;
    if (a.grade.rubric.traces) a.grade.rubric.traces = c.traces.count;
    c.trace_limit = *trace_limit;
    c.warm_up = *warm_up;
    c.time_limit = !given(app, "--conformance-timeout") && a.grade.rubric.conformance_timeout
                       ? *a.grade.rubric.conformance_timeout
                       : *conformance_limit;
    a.conformance = std::move(c);
  }
  return a;
}

}  // namespace

Result<Asked> read_flags(const CLI::App& app, const OneArgs& o) {
  // --conformance alone grades only the conformance part; with anything that points at the
  // lab's files or evidence, it is one more part beside the steps.
  const bool conformance_only = !o.conformance.empty() && o.run.empty() && o.server.empty() && o.record_file.empty() &&
                                o.steps.empty() && !given(app, "--dir");
  auto a = read_grading(app, o, false, conformance_only);
  if (a) a->grade.steps = {o.steps.begin(), o.steps.end()};
  return a;
}

Result<Asked> read_flags(const CLI::App& app, const ClassArgs& o) { return read_grading(app, o, true, false); }

Result<GradeOptions> read_judging(const JudgingFlags& o) {
  GradeOptions g;
  if (!o.rubric.empty()) {
    const auto text = read_bounded_file(o.rubric, kMaxRubricBytes, "rubric");
    if (!text) return text.error();
    auto rubric = Rubric::parse(*text);
    if (!rubric) return Error{o.rubric + ": " + rubric.error().message};
    g.rubric = *rubric;
  }
  if (!o.spec.empty()) {
    auto spec = load_lab_spec(o.spec);
    if (!spec) return spec.error();
    g.spec = *spec;
  }
  return g;
}

}  // namespace cb::grade

// cb-grade: the lab's grader. Checks a directory of output files step by step, against the
// server's record of what really happened.
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cb/decimal_time.h"
#include "cb/grade/batch.h"
#include "cb/grade/class_reports.h"
#include "cb/grade/conformance_check.h"
#include "cb/grade/conformance_process.h"
#include "cb/grade/format.h"
#include "cb/grade/grade.h"
#include "cb/grade/lab_spec.h"
#include "cb/grade/prebuilt.h"
#include "cb/grade/provenance.h"
#include "cb/grade/run_student.h"
#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/dir_handle.h"
#include "cb/grade/variant.h"
#include "cb/sandbox/interrupt.h"
#include "class_command.h"
#include "progress_line.h"
#include "cli_options.h"
#include "sandbox_flags.h"
#include "cb/flaky/endpoints.h"

namespace {

using namespace cb::grade;

// Gradescope's /autograder/submission_metadata.json names who submitted: the first user's
// "sid" (the course's student id) when it has one, else their email.
cb::Result<std::string> student_from_metadata(const std::string& path) {
  auto text = cb::read_bounded_file(path, 1 << 20, "submission metadata");
  if (!text) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return cb::Error{path + ": not a JSON object"};
  const auto users = j.find("users");
  if (users == j.end() || !users->is_array() || users->empty() || !(*users)[0].is_object())
    return cb::Error{path + ": users: expected the submitters, the first one an object"};
  const nlohmann::json& first = (*users)[0];
  for (const char* key : {"sid", "email"})
    if (const auto v = first.find(key); v != first.end() && v->is_string() && !v->get_ref<const std::string&>().empty())
      return v->get<std::string>();
  return cb::Error{path + ": users[0]: neither a sid nor an email to know the student by"};
}

// A rubric is a few lines; a saved record of a full server (10,000 entries of about 300
// bytes) is 3 MiB, so 64 MiB leaves room for a server started with a larger record.
constexpr std::size_t kMaxRubricBytes = 64 << 10;
constexpr std::size_t kMaxRecordBytes = 64 << 20;

// --reports DIR for one submission: its report as text, JSON and HTML beside -o's format (a CI
// job keeps them as artifacts; the HTML page is the one a student opens).
// --dir's files, without a run: the folder is opened once, and where it lies in the folder
// handed in, no link on its way is followed.
cb::Result<SubmissionDir> open_graded(const Options& o) {
  auto dir = cb::open_in_or_beside(o.dir, o.submission, false);
  if (!dir) return dir.error();
  return SubmissionDir::adopt(std::move(dir).value(), o.dir);
}

int keep_reports(const Options& o, const Report& report) {
  if (o.reports.empty()) return 0;
  // Inside the folder handed in, no link on the way is followed (it would be the student's).
  auto dir = cb::open_in_or_beside(o.reports, o.submission, true);
  if (!dir) return could_not_run("--reports: " + dir.error().message);
  if (auto w = write_reports(*dir, report); !w) return could_not_run(w.error().message);
  return 0;
}

}  // namespace

namespace {

int grade_main(int argc, char** argv) {
  Options o;
  SandboxFlags sandbox_flags;
  CLI::App app{"cb-grade: grades the circuit-breaker lab, step by step, on the server's evidence", "cb-grade"};
  app.add_option("--dir", o.dir, "The lab's output directory")->capture_default_str();
  app.add_option("--step", o.steps,
                 "Check what must hold right after step N (repeatable); default: every step, finished")
      ->check(CLI::Range(1, kGradedSteps));
  app.add_option("--server", o.server,
                 "The flaky server whose record is the evidence (default: try " + cb::flaky::default_url() + ")");
  app.add_option("--run", o.run, "Start a fresh server, run this command (CB_SERVER, CB_DIR set), then grade");
  app.add_option("--submission", o.submission,
                 "--run, --conformance: the folder the program is from; it works in a private copy of it, and sees "
                 "nothing else of the file system but the system, read-only")
      ->capture_default_str();
  add_sandbox_flags(app, sandbox_flags);
  app.add_option("--timeout", o.timeout,
                 "--run: time limit; on expiry the command is killed and graded as far as it got")
      ->capture_default_str();
  app.add_flag("--any-port", o.any_port, "--run: always use a free port (CB_SERVER says which)");
  app.add_option("--format", o.format,
                 "text, json, junit, gradescope, html (a page with the run drawn on a time axis) or classroom (GitHub "
                 "Classroom's grading reporter)")
      ->capture_default_str();
  app.add_option("-o,--output", o.output, "Write the report here (atomically) instead of standard output");
  app.add_option("--spec", o.spec,
                 "Grade against this lab (scenarios/lab.json's format: its numbers, titles and files) instead of the "
                 "one built in");
  app.add_option("--student", o.student,
                 "Grade on this student's own numbers (with --course-key; cb-lab variant prints them)");
  app.add_option("--course-key", o.course_key,
                 "The course's secret: with --student, one student's numbers; with --batch, each folder's (its name "
                 "is the student, or --roster says)");
  app.add_option("--settings", o.settings,
                 "Grade on the numbers of this lab-settings.json (a kit made for one student: checking your own work)");
  app.add_option("--roster", o.roster, "--batch with --course-key: a CSV of folder,student");
  app.add_option("--submission-metadata", o.submission_metadata,
                 "With --course-key: the student is the one Gradescope's submission_metadata.json names");
  app.add_option("--rubric", o.rubric,
                 "JSON: points per part, Gradescope's visibility of each, the conformance seed and traces "
                 "(docs/TEACHING.md)");
  bool max_score = false;
  app.add_flag("--max-score", max_score,
               "Print the points a report is out of under --rubric (with --conformance: its part too), and exit");
  app.add_option("--record", o.record_file, "Grade on a saved record (from --save-record) instead of a live server");
  app.add_option("--save-record", o.save_record, "Keep the server's record this grade was given on, as JSON");
  app.add_option("--batch", o.batch, "Grade every subdirectory of this directory into one gradebook (CSV, or JSON)");
  app.add_option("--batch-files", o.batch_files, "--batch: where the lab's files are inside each submission")
      ->capture_default_str();
  app.add_option("--reports", o.reports,
                 "--batch: keep each submission's reports (text, JSON, HTML), its record, its files and its "
                 "conformance answers in DIR/NAME/, for the student and for --regrade; one submission: its "
                 "reports in DIR");
  app.add_option("--regrade", o.regrade,
                 "Grade a class again from what --batch --reports kept in this directory, running nothing (with "
                 "--rubric or --spec: the new ones); rewrites the reports and says what changed");
  app.add_option("-j,--jobs", o.jobs,
                 "--batch: submissions graded at once; --conformance: traces run at once (default: one per core)");
  app.add_option(
      "--conformance", o.conformance,
      "Drive this command's breaker call by call with generated traces (the line protocol of docs/CONTRACTS.md) "
      "and compare every answer with the lab's rules; alone, or as one more part beside the steps");
  app.add_option("--traces", o.traces, "--conformance: how many traces")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed,
                 "--conformance: the traces' seed (default: a random one, printed in the report; with --batch, one for "
                 "the whole class)");
  app.add_option("--trace-timeout", o.trace_timeout,
                 "--conformance: time limit of one trace, start to exit (--timeout sets it too, without --run)")
      ->capture_default_str();
  app.add_option("--conformance-timeout", o.conformance_timeout,
                 "--conformance: time limit of all the traces of one submission; past it the part fails as too slow")
      ->capture_default_str();
  app.add_option("--refuse-prebuilt", o.refuse_prebuilt,
                 "--conformance: what a submission may not hand in ready-made: harness (a copy of cb-lab or cb-grade; "
                 "the default, or the rubric's), all (any executable), none");
  app.add_option("--warm-up", o.warm_up,
                 "--conformance: extra time for the traces that start before the first has finished (a program "
                 "that builds itself on its first start)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::CouldNotRun);
  }

  const auto format = parse_format(o.format);
  if (!format)
    return could_not_run("--format: '" + o.format + "' is not one of text, json, junit, gradescope, html, classroom");
  const auto timeout = cb::parse_duration(o.timeout);
  if (!timeout || timeout->count() <= 0)
    return could_not_run("--timeout: '" + o.timeout + "' is not a positive duration like 60s");
  // --conformance alone grades only the conformance part; with anything that points at the
  // lab's files or evidence, it is one more part beside the steps.
  const bool conformance_only = !o.conformance.empty() && o.run.empty() && o.server.empty() && o.record_file.empty() &&
                                o.steps.empty() && app.count("--dir") == 0 && o.batch.empty();
  auto trace_limit = cb::parse_duration(conformance_only && app.count("--timeout") > 0 ? o.timeout : o.trace_timeout);
  if (!trace_limit || trace_limit->count() <= 0)
    return could_not_run("--trace-timeout: '" + o.trace_timeout + "' is not a positive duration like 5s");
  const auto conformance_limit = cb::parse_duration(o.conformance_timeout);
  if (!conformance_limit || conformance_limit->count() <= 0)
    return could_not_run("--conformance-timeout: '" + o.conformance_timeout + "' is not a positive duration like 120s");
  const auto warm_up = cb::parse_duration(o.warm_up);
  if (!warm_up || warm_up->count() < 0)
    return could_not_run("--warm-up: '" + o.warm_up + "' is not a duration like 20s");
  const bool a_class = !o.batch.empty() || !o.regrade.empty();
  if (a_class) {
    if (const std::string refused = flags_not_for_a_class(app, o); !refused.empty())
      return could_not_run(std::string(o.regrade.empty()
                                           ? "--batch grades a class; these are about one submission: "
                                           : "--regrade runs nothing, it reads what --reports kept; these do not "
                                             "go with it: ") +
                           refused);
  }
  GradeOptions grade_options;
  grade_options.steps = {o.steps.begin(), o.steps.end()};
  if (!o.spec.empty()) {
    auto spec = load_lab_spec(o.spec);
    if (!spec) return could_not_run(spec.error().message);
    grade_options.spec = *spec;
  }
  if (!o.submission_metadata.empty()) {
    if (!o.student.empty())
      return could_not_run("--submission-metadata names the student; it does not go with --student");
    auto who = student_from_metadata(o.submission_metadata);
    if (!who) return could_not_run("--submission-metadata: " + who.error().message);
    o.student = *who;
  }
  std::string course_key;
  if (!o.course_key.empty()) {
    auto key = read_course_key(o.course_key);
    if (!key) return could_not_run("--course-key: " + key.error().message);
    course_key = *key;
  }
  if (!o.student.empty() && course_key.empty()) return could_not_run("--student: goes with --course-key FILE");
  if (!o.roster.empty() && (o.batch.empty() || course_key.empty()))
    return could_not_run("--roster: goes with --batch and --course-key");
  if (!course_key.empty() && o.student.empty() && o.batch.empty())
    return could_not_run("--course-key: goes with --student ID, --submission-metadata FILE or --batch DIR");
  if (!o.settings.empty()) {
    if (!o.student.empty() || !course_key.empty())
      return could_not_run("--settings: the course key decides a student's numbers; give one or the other");
    const auto text = cb::read_bounded_file(o.settings, 64 << 10, "settings");
    if (!text) return could_not_run(text.error().message);
    auto numbers = numbers_of_settings(*text, o.settings);
    if (!numbers) return could_not_run(numbers.error().message);
    auto spec = with_numbers(grade_options.spec ? *grade_options.spec : lab_spec(), *numbers, "");
    if (!spec) return could_not_run(o.settings + ": " + spec.error().message);
    grade_options.spec = std::make_shared<const LabSpec>(std::move(*spec));
  }
  if (!o.student.empty()) {
    auto variant = variant_spec(grade_options.spec ? *grade_options.spec : lab_spec(), o.student, course_key);
    if (!variant) return could_not_run("--student: " + variant.error().message);
    grade_options.spec = *variant;
  }
  const LabSpec& spec = grade_options.spec ? *grade_options.spec : lab_spec();
  if (!o.rubric.empty()) {
    const auto text = cb::read_bounded_file(o.rubric, kMaxRubricBytes, "rubric");
    if (!text) return could_not_run(text.error().message);
    auto rubric = Rubric::parse(*text);
    if (!rubric) return could_not_run(o.rubric + ": " + rubric.error().message);
    grade_options.rubric = *rubric;
  }

  if (!o.refuse_prebuilt.empty()) {
    auto rule = parse_prebuilt(o.refuse_prebuilt);
    if (!rule) return could_not_run("--refuse-prebuilt: " + rule.error().message);
    grade_options.rubric.prebuilt = *rule;
  }
  if (max_score) {
    std::cout << grade_options.rubric.max_score(!o.conformance.empty()) << '\n';
    return 0;
  }
  if (!o.regrade.empty()) return run_regrade(o, grade_options);
  // The traces: the flags', else the rubric's (an assignment's fixed seed), else a random seed.
  const int traces =
      app.count("--traces") > 0 || !grade_options.rubric.traces ? o.traces : *grade_options.rubric.traces;
  const std::uint64_t seed = app.count("--seed") > 0     ? o.seed
                             : grade_options.rubric.seed ? *grade_options.rubric.seed
                                                         : random_seed();
  if (!o.record_file.empty() && (!o.run.empty() || !o.server.empty()))
    return could_not_run("--record grades on a saved record; it does not go with --run or --server");
  auto policy = sandbox_policy(sandbox_flags);
  if (!policy) return could_not_run(policy.error().message);
  // Every program this grader starts runs in the sandbox, in a box of the submission's own.
  cb::sandbox::Sandbox sandbox(*policy);
  // The key makes every student's numbers: a program that could read it could give itself any.
  if (!o.course_key.empty() && (!o.run.empty() || !o.conformance.empty()))
    if (const auto why = sandbox.readable_by_programs(o.course_key, o.batch.empty() ? o.submission : o.batch))
      return could_not_run("--course-key: " + o.course_key + " could be read by the programs it grades: " + *why +
                           "; keep it where only the grader's user may read it, outside the folders handed in");
  std::unique_ptr<cb::sandbox::Box> box;
  if (!o.batch.empty()) {
    // An ordinary user's fallback cannot give each student a uid of their own: every program of
    // the batch would run as the grader's uid, able to reach its classmates' processes and files.
    // Only when the instructor says so.
    if (!o.run.empty() || !o.conformance.empty()) {
      auto kind = sandbox.kind();
      if (!kind) return could_not_run(kind.error().message);
      if (*kind == cb::sandbox::Kind::Fallback && ::geteuid() != 0 && policy->mode != cb::sandbox::Mode::Fallback)
        return could_not_run(
            "--batch: no full sandbox here, and the fallback of an ordinary user runs every student's program as "
            "the grader's own uid, where one can reach another's; run the grader as root, or say --sandbox "
            "fallback to grade the class so anyway");
    }
    std::optional<BatchConformance> bc;
    if (!o.conformance.empty()) {
      bc.emplace();
      bc->command = o.conformance;
      bc->traces = traces;
      bc->seed = seed;
      bc->trace_limit = std::chrono::duration_cast<std::chrono::milliseconds>(*trace_limit);
      bc->warm_up = std::chrono::duration_cast<std::chrono::milliseconds>(*warm_up);
      bc->time_limit = std::chrono::duration_cast<std::chrono::milliseconds>(*conformance_limit);
    }
    return run_batch(o, grade_options, course_key, std::move(bc), sandbox,
                     std::chrono::duration_cast<std::chrono::milliseconds>(*timeout));
  }
  // --dir, opened once: where it lies in the folder handed in, no link on its way is followed.
  std::optional<cb::DirHandle> student_dir;
  if (!o.run.empty() || !o.conformance.empty()) {
    if (!o.run.empty()) {
      auto opened = cb::open_in_or_beside(o.dir, o.submission, true);
      if (!opened) return could_not_run("--dir: " + opened.error().message);
      student_dir = std::move(opened).value();
      if (auto cleared = clear_lab_files(*student_dir, spec); !cleared) return could_not_run(cleared.error().message);
    }
    auto made = sandbox.box(o.submission, o.run.empty() ? std::string() : o.dir);
    if (!made) return could_not_run(made.error().message);
    box = std::move(made).value();
  }
  std::optional<ConformancePart> conformance;
  if (!o.conformance.empty()) {
    ConformanceOptions co;
    co.command = o.conformance;
    co.traces = traces;
    co.seed = seed;
    co.points = grade_options.rubric.conformance;
    co.visibility = grade_options.rubric.conformance_visibility;
    co.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    co.time_limit = std::chrono::duration_cast<std::chrono::milliseconds>(*conformance_limit);
    conformance::ProcessOptions po;
    po.command = o.conformance;
    po.trace_limit = std::chrono::duration_cast<std::chrono::milliseconds>(*trace_limit);
    po.warm_up = std::chrono::duration_cast<std::chrono::milliseconds>(*warm_up);
    po.sandbox = &sandbox;
    po.box = box.get();
    ProgressLine progress;
    co.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
    const Prebuilt rule = grade_options.rubric.prebuilt;
    // What it handed in, looked at before any of its programs runs (a build in the box is its own).
    if (const auto found = prebuilt_in(box->copy_root(), rule))
      conformance = conformance_refused(co, "prebuilt", prebuilt_reason(*found, rule));
    else
      conformance = check_conformance(co, conformance::process_programs(po));
  }
  const auto finish = [&](Report& report) {
    if (conformance) add_conformance(report, std::move(*conformance));
    if (box) report.sandbox = sandbox_info(sandbox.containment(*box));
  };
  if (conformance_only) {
    Report report;
    report.grader_version = grader_version();
    report.lab_spec_sha256 = spec.sha256;
    report.stdout_visibility = grade_options.rubric.stdout_visibility;
    finish(report);
    const bool colour = *format == Format::Text && o.output.empty() && ::isatty(STDOUT_FILENO) != 0 &&
                        std::getenv("NO_COLOR") == nullptr;
    if (const int rc = emit(o, render(report, *format, colour)); rc != 0) return rc;
    if (const int rc = keep_reports(o, report); rc != 0) return rc;
    return exit_code(report);
  }

  std::optional<Record> record;
  std::string no_record;
  std::string server_used;
  std::string run_output;
  std::optional<ProgramRun> program;
  std::optional<SubmissionDir> graded;  // the files, as the run left them in its box
  if (!o.record_file.empty()) {
    const auto text = cb::read_bounded_file(o.record_file, kMaxRecordBytes, "record");
    if (!text) return could_not_run(text.error().message);
    auto parsed = parse_record(*text);
    if (!parsed) return could_not_run(o.record_file + ": " + parsed.error().message);
    record = std::move(parsed).value();
    server_used = "saved record " + o.record_file;
  } else if (!o.run.empty()) {
    RunOptions run;
    run.spec = &spec;
    run.command = o.run;
    run.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
    if (!o.server.empty()) {
      // --server with --run says where the fresh server listens: http://HOST:PORT.
      const auto colon = o.server.rfind(':');
      const auto slashes = o.server.find("//");
      if (colon == std::string::npos || slashes == std::string::npos || colon < slashes)
        return could_not_run("--server: '" + o.server + "' is not http://HOST:PORT");
      run.host = o.server.substr(slashes + 2, colon - slashes - 2);
      run.port = std::atoi(o.server.c_str() + colon + 1);
    }
    if (o.any_port) run.port = 0;
    auto ran = run_student(run, sandbox, *box);
    if (!ran) return could_not_run(ran.error().message);
    if (ran->survivors)
      return could_not_run(
          "a process the command started could not be stopped (it forks faster than it dies); not graded");
    // The files are graded where the program wrote them, in its box, read from the descriptors
    // the box held before it ran (a link it put there is refused, and graded as no files), and
    // copied to --dir for the student to read.
    auto out = box->out_handle();
    graded =
        out ? SubmissionDir::adopt(std::move(out).value(), o.dir) : SubmissionDir::refused(o.dir, out.error().message);
    if (box->copied())
      if (auto copied = copy_lab_files(*graded, *student_dir, spec); !copied)
        return could_not_run(copied.error().message);
    server_used = ran->server_url;
    run_output = ran->output_tail;
    program = program_run(*ran, std::chrono::duration_cast<std::chrono::milliseconds>(*timeout));
    if (!ran->record) return could_not_run("reading the fresh server's record: " + ran->record.error().message);
    record = std::move(ran->record).value();
    grade_options.expected_epoch = 1;  // a fresh server, and nobody but the grader may reset it
    grade_options.record_private = ran->record_private;
    grade_options.foreign_connections = ran->foreign_connections;
  } else {
    const bool named = !o.server.empty();
    const std::string url = named ? o.server : cb::flaky::default_url();
    auto fetched = fetch_record(url, std::chrono::milliseconds(named ? 5000 : 500));
    if (fetched) {
      record = std::move(fetched).value();
      server_used = url;
      // A live server may hold another run's record (or one the lab left there yesterday).
      grade_options.check_file_times = true;
    } else if (named || grade_options.steps.count(1) > 0) {
      // The server was asked for by name, or step 1 (the server runs) is what is being checked.
      return could_not_run(fetched.error().message);
    } else {
      no_record =
          "no flaky server at " + url + ", so checks on its record are skipped (start it, or use --server or --run)";
    }
  }

  if (!o.save_record.empty()) {
    if (!record) return could_not_run("--save-record: there is no server record to save (" + no_record + ")");
    if (auto w = cb::write_file_atomically(o.save_record, to_json(*record)); !w)
      return could_not_run(w.error().message);
  }
  cb::Result<SubmissionDir> dir = graded ? cb::Result<SubmissionDir>(std::move(*graded)) : open_graded(o);
  if (!dir) {
    // `--step 1` (the server runs) is a question a student asks before writing any file.
    bool reads_files = grade_options.steps.empty();
    for (int step : grade_options.steps) reads_files = reads_files || spec.reads_files(step);
    if (reads_files || !o.run.empty()) return could_not_run(dir.error().message);
    dir = SubmissionDir::absent(o.dir);
  }
  grade_options.server = server_used;
  Report report = grade(*dir, record, no_record, grade_options);
  report.run_output = run_output;
  report.program = program;
  finish(report);
  const bool colour =
      *format == Format::Text && o.output.empty() && ::isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  if (const int rc = emit(o, render(report, *format, colour)); rc != 0) return rc;
  if (const int rc = keep_reports(o, report); rc != 0) return rc;
  if (report.status == Status::Error && !report.evidence.problem.empty())
    std::cerr << "cb-grade: not graded: " << report.evidence.problem << '\n';
  return exit_code(report);
}

}  // namespace

int main(int argc, char** argv) {
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

#include "single_command.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cb/bounded_file.h"
#include "cb/flaky/endpoints.h"
#include "cb/grade/class_reports.h"
#include "cb/grade/judge.h"
#include "progress_line.h"

namespace cb::grade {
namespace {

// A saved record of a full server (10,000 entries of about 300 bytes) is 3 MiB: 64 MiB leaves
// room for a server started with a larger record.
constexpr std::size_t kMaxRecordBytes = 64 << 20;

// Without a run: the record --record or a live server holds, and how it was taken. `needed`: the
// grading cannot go on without one (a server named, or step 1, which asks whether one runs).
Result<Evidence> record_found(const OneArgs& o, bool needed) {
  Evidence e;
  if (!o.record_file.empty()) {
    const auto text = read_bounded_file(o.record_file, kMaxRecordBytes, "record");
    if (!text) return text.error();
    auto parsed = parse_record(*text);
    if (!parsed) return Error{o.record_file + ": " + parsed.error().message};
    e.record = std::move(parsed).value();
    e.server = "saved record " + o.record_file;
    return e;
  }
  const bool named = !o.server.empty();
  const std::string url = named ? o.server : flaky::default_url();
  auto fetched = fetch_record(url, std::chrono::milliseconds(named ? 5000 : 500));
  if (fetched) {
    e.record = std::move(fetched).value();
    e.server = url;
    e.check_file_times = true;  // a live server may hold another run's record (or yesterday's)
  } else if (named) {
    return fetched.error();
  } else if (needed) {
    // Step 1 asks whether a server runs; the person asking may never have started one.
    return Error{fetched.error().message +
                 "; start one (cb-lab step 1 leaves one running, or run flaky-server), name another with --server, "
                 "or grade a whole run with --run"};
  } else {
    e.no_record_reason =
        "no flaky server at " + url + ", so checks on its record are skipped (start it, or use --server or --run)";
  }
  return e;
}

// --dir's files, without a run: opened once, and where it lies in the folder handed in, no link
// on its way is followed. `--step 1` (does the server run?) is asked before any file is written.
Result<SubmissionDir> files_found(const OneArgs& o, const GradeOptions& g) {
  auto dir = open_in_or_beside(o.dir, o.submission, false);
  if (dir) return SubmissionDir::adopt(std::move(dir).value(), o.dir);
  bool reads_files = g.steps.empty();
  for (int step : g.steps) reads_files = reads_files || grade::reads_files(step);
  if (reads_files) return dir.error();
  return SubmissionDir::absent(o.dir);
}

// What is graded, as the flags say; without a run, with the files and record found.
Result<Submission> submission_of(const OneArgs& o, Asked& a) {
  Submission s;
  s.folder = o.submission;
  s.files_path = o.dir;
  s.spec = a.grade.spec;
  s.timeout = a.timeout;
  s.prebuilt = a.grade.rubric.prebuilt;
  s.conformance = a.conformance;
  if (a.conformance_only) return s;
  if (!o.record_file.empty() && (!o.run.empty() || !o.server.empty()))
    return Error{"--record grades on a saved record; it does not go with --run or --server"};
  if (o.run.empty()) {
    auto found = record_found(o, a.grade.steps.count(1) > 0);
    if (!found) return found.error();
    s.found = std::move(*found);
    auto files = files_found(o, a.grade);
    if (!files) return files.error();
    s.found.files = std::move(*files);
    return s;
  }
  s.run = o.run;
  if (!o.server.empty()) {
    // --server with --run says where the fresh server listens: http://HOST:PORT.
    const auto colon = o.server.rfind(':');
    const auto slashes = o.server.find("//");
    if (colon == std::string::npos || slashes == std::string::npos || colon < slashes)
      return Error{"--server: '" + o.server + "' is not http://HOST:PORT"};
    s.host = o.server.substr(slashes + 2, colon - slashes - 2);
    s.port = std::atoi(o.server.c_str() + colon + 1);
  }
  if (o.any_port) s.port = 0;
  // --dir, opened once: where it lies in the folder handed in, no link on its way is followed.
  auto opened = open_in_or_beside(o.dir, o.submission, true);
  if (!opened) return Error{"--dir: " + opened.error().message};
  s.copy_files_to = std::move(opened).value();
  return s;
}

int keep_reports(const OneArgs& o, const Report& report) {
  if (o.reports.empty()) return 0;
  // Inside the folder handed in, no link on the way is followed (it would be the student's).
  auto dir = open_in_or_beside(o.reports, o.submission, true);
  if (!dir) return could_not_run("--reports: " + dir.error().message);
  if (auto w = write_reports(*dir, report); !w) return could_not_run(w.error().message);
  return 0;
}

// The evidence judged, the report written and kept, the record saved: one grading's end.
int report_on(const OneArgs& o, const Asked& a, std::chrono::steady_clock::time_point started,
              const Evidence& evidence) {
  if (!o.save_record.empty()) {
    if (!evidence.record)
      return could_not_run("--save-record: there is no server record to save (" + evidence.no_record_reason + ")");
    if (auto w = write_file_atomically(o.save_record, to_json(*evidence.record)); !w)
      return could_not_run(w.error().message);
  }
  Report report = judge(evidence, a.grade);
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!a.numbers_note.empty()) report.notes.insert(report.notes.begin(), a.numbers_note);
  const bool colour = a.format == Format::Text && o.output.empty() && ::isatty(STDOUT_FILENO) != 0 &&
                      std::getenv("NO_COLOR") == nullptr;
  if (const int rc = emit(o, o.submission, render(report, a.format, colour)); rc != 0) return rc;
  // A report written to a file leaves the terminal empty: the verdict is said there anyway.
  if (!o.output.empty()) std::cout << score_line(report) << " The report: " << o.output << '\n';
  if (const int rc = keep_reports(o, report); rc != 0) return rc;
  // Said once: the text report on the terminal begins with it.
  const bool said = a.format == Format::Text && o.output.empty();
  if (report.status == Status::Error && !report.evidence.problem.empty() && !said)
    std::cerr << "cb-grade: not graded: " << report.evidence.problem << '\n';
  return exit_code(report);
}

}  // namespace

int run_one(const OneArgs& o, Asked a, sandbox::Sandbox& sandbox) {
  const auto started = std::chrono::steady_clock::now();
  // A try the grader fails (it stalled, no box could be made) is no grade: tried again,
  // kGradingTries in all, and the report says so.
  std::vector<std::string> earlier;
  for (;;) {
    auto submission = submission_of(o, a);
    if (!submission) return could_not_run(submission.error().message);
    auto evidence = [&] {
      ProgressLine progress;  // of the traces, on a terminal; its line ends before the report
      if (submission->conformance)
        submission->conformance->progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
      return gather(std::move(*submission), &sandbox);
    }();
    if (evidence) {
      evidence->grader_failures = earlier;
      return report_on(o, a, started, *evidence);
    }
    if (evidence.error().fault != Fault::Grader) return could_not_run(evidence.error().message);
    earlier.push_back(evidence.error().message);
    if (earlier.size() == static_cast<std::size_t>(kGradingTries)) return could_not_run(not_graded_after(earlier));
    std::cerr << "cb-grade: " << earlier.back() << "; grading again\n";
  }
}

}  // namespace cb::grade

#include "class_command.h"

#include "cb/bounded_file.h"
#include "cb/grade/regrade.h"
#include "progress_line.h"

namespace cb::grade {
namespace {

bool gradebook_json_wanted(const Options& o) {
  return o.format == "json" || (o.output.size() > 5 && o.output.substr(o.output.size() - 5) == ".json");
}

int finish(const Options& o, const std::vector<BatchRow>& rows) {
  if (const int rc = emit(o, gradebook_json_wanted(o) ? gradebook_json(rows) : gradebook_csv(rows)); rc != 0) return rc;
  bool all_passed = true;
  for (const auto& r : rows) all_passed = all_passed && r.report && r.report->passed;
  return static_cast<int>(all_passed ? ExitCode::Ok : ExitCode::Failed);
}

}  // namespace

std::string flags_not_for_a_class(const CLI::App& app, const Options& o) {
  // Each of these is about one submission (or one run): with a class, each submission's own
  // folder, server, record and report come from the batch itself.
  std::vector<std::string> refused;
  for (const char* flag : {"--dir", "--server", "--record", "--save-record", "--submission", "--student", "--settings",
                           "--submission-metadata"})
    if (app.count(flag) > 0) refused.emplace_back(flag);
  if (!o.regrade.empty()) {
    // A regrade runs nothing and works out no numbers: it reads what --reports kept.
    for (const char* flag : {"--batch", "--run", "--conformance", "--timeout", "--traces", "--seed", "--trace-timeout",
                             "--conformance-timeout", "--refuse-prebuilt", "--warm-up", "--course-key", "--roster",
                             "--batch-files", "--reports", "--sandbox"})
      if (app.count(flag) > 0) refused.emplace_back(flag);
  }
  if (app.count("--format") > 0 && o.format != "json" && o.format != "csv")
    refused.push_back("--format " + o.format +
                      " (a gradebook is csv or json; --reports DIR writes each student's "
                      "report as text, JSON and HTML)");
  std::string out;
  for (const std::string& f : refused) out += (out.empty() ? "" : ", ") + f;
  return out;
}

int run_batch(const Options& o, const Asked& asked, sandbox::Sandbox& sandbox) {
  BatchOptions b;
  b.root = o.batch;
  b.files_dir = o.batch_files;
  if (!o.run.empty()) b.run_command = o.run;
  b.timeout = asked.timeout;
  b.grade = asked.grade;
  b.jobs = o.jobs;
  b.course_key = asked.course_key;
  b.reports_dir = o.reports;
  b.conformance = asked.conformance;
  if (b.conformance) b.conformance->jobs = 1;  // the class runs side by side already
  if (!o.roster.empty()) {
    const auto text = read_bounded_file(o.roster, 4 << 20, "roster");
    if (!text) return could_not_run(text.error().message);
    auto roster = parse_roster(*text, o.roster);
    if (!roster) return could_not_run(roster.error().message);
    b.roster = std::move(*roster);
    b.roster_only = true;
  }
  b.sandbox = &sandbox;
  auto rows = [&] {
    ProgressLine progress;
    b.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
    return grade_batch(b);
  }();
  if (!rows) return could_not_run(rows.error().message);
  return finish(o, *rows);
}

int run_regrade(const Options& o, const GradeOptions& grade) {
  RegradeOptions r;
  r.dir = o.regrade;
  r.grade = grade;
  r.jobs = o.jobs;
  auto rows = [&] {
    ProgressLine progress;
    r.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
    return regrade(r);
  }();
  if (!rows) return could_not_run(rows.error().message);
  std::size_t changed = 0;
  for (const BatchRow& row : *rows)
    if (!row.changes.empty()) {
      ++changed;
      std::cerr << row.submission << ": " << row.changes << '\n';
    }
  std::cerr << "cb-grade: regraded " << rows->size() << " submissions, " << changed << " changed\n";
  return finish(o, *rows);
}

}  // namespace cb::grade

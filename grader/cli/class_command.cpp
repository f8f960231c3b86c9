#include "class_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/hmac_sha256.h"
#include "cb/sandbox/interrupt.h"
#include "cb/grade/class_page.h"
#include "cb/grade/jobs.h"
#include "cb/grade/merge.h"
#include "cb/grade/regrade.h"
#include "progress_line.h"

namespace cb::grade {
namespace {

bool gradebook_json_wanted(const OutputFlags& o) {
  return o.gradebook_format == "json" || (o.output.size() > 5 && o.output.substr(o.output.size() - 5) == ".json");
}

}  // namespace

int finish(const OutputFlags& o, const std::string& handed_in, const std::vector<BatchRow>& rows) {
  const std::string book = gradebook_json_wanted(o) ? gradebook_json(rows) : gradebook_csv(rows);
  if (const int rc = emit(o, handed_in, book); rc != 0) return rc;
  // The digest of the rows goes beside the gradebook, not into it: a last row or a trailer would
  // be a student to a spreadsheet or an LMS import, and would make the JSON no longer an array.
  if (!o.output.empty()) {
    const std::string digest = gradebook_digest(rows);
    OutputFlags beside = o;
    beside.output = o.output + ".digest";
    const nlohmann::json d{{"rows", rows.size()},
                           {"sha256", digest},
                           {"of", "each row as the JSON gradebook has it, compact, sorted by submission, a line each"},
                           {"file_sha256", hex(sha256(book))}};
    if (const int rc = emit(beside, handed_in, d.dump(1) + "\n"); rc != 0) return rc;
    std::cerr << "cb-grade: the gradebook's digest: " << digest << " (" << rows.size() << " rows; in " << beside.output
              << ")\n";
  }
  // A folder superseded by its student's later hand-in is no one's failure: that student's grade
  // is the later folder's row.
  bool all_passed = true;
  for (const auto& r : rows)
    all_passed = all_passed && (r.status == RowStatus::Superseded || (r.report && r.report->passed));
  return static_cast<int>(all_passed ? ExitCode::Ok : ExitCode::Failed);
}

// Nothing of a joined class was handed in here; -o's file in the working folder is reached as in
// one handed in, with no link followed, as when it was a class's.
int finish_joined(const OutputFlags& o, const std::vector<BatchRow>& rows, const std::vector<std::string>& missing) {
  const int rc = finish(o, ".", rows);
  if (rc == static_cast<int>(ExitCode::CouldNotRun) || missing.empty()) return rc;
  return static_cast<int>(ExitCode::Incomplete);
}

namespace {

// The batch's journal: each submission's gradebook row (JSON, a line) appended as it finishes,
// one write(2) a line, so a batch killed at any point, SIGKILL too, leaves every row it finished
// (and at most a torn last line). Beside the reports (DIR/gradebook.journal), else beside -o's
// file; removed once the whole gradebook is written.
class Journal {
 public:
  explicit Journal(const ClassArgs& o) {
    if (!o.reports.empty()) {
      path_ = o.reports + "/gradebook.journal";
    } else if (!o.output.empty() && !inside(output_folder(o.output), o.root)) {
      path_ = o.output + ".journal";
    }
    if (!path_.empty())
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  }
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  void append(const BatchRow& row) const {
    if (fd_ < 0) return;
    const std::string line =
        gradebook_row_json(row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    (void)!::write(fd_, line.data(), line.size());
  }
  void remove() const {
    if (!path_.empty()) ::unlink(path_.c_str());
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

// "300 submissions in 4:12: 280 graded (250 passed), 12 empty, 8 could not be graded".
std::string summary(const std::vector<BatchRow>& rows, double seconds) {
  std::size_t graded = 0, passed = 0, empty = 0, errors = 0, not_graded = 0, resumed = 0, superseded = 0, absent = 0;
  for (const BatchRow& r : rows) {
    graded += r.status == RowStatus::Graded ? 1U : 0U;
    passed += r.report && r.report->passed ? 1U : 0U;
    empty += r.status == RowStatus::Empty ? 1U : 0U;
    errors += r.status == RowStatus::Error ? 1U : 0U;
    not_graded += r.status == RowStatus::NotGraded ? 1U : 0U;
    superseded += r.status == RowStatus::Superseded ? 1U : 0U;
    absent += r.status == RowStatus::NoSubmission ? 1U : 0U;
    resumed += r.resumed ? 1U : 0U;
  }
  const long s = std::lround(seconds);
  std::string out = std::to_string(rows.size()) + (rows.size() == 1 ? " submission in " : " submissions in ") +
                    std::to_string(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + ": " +
                    std::to_string(graded) + " graded (" + std::to_string(passed) + " passed";
  if (resumed > 0) out += ", " + std::to_string(resumed) + " of them judged from what an earlier run kept";
  out += ")";
  if (empty > 0) out += ", " + std::to_string(empty) + " empty";
  if (absent > 0) out += ", " + std::to_string(absent) + " on the roster handed in nothing";
  if (errors > 0) out += ", " + std::to_string(errors) + " could not be graded";
  if (not_graded > 0) out += ", " + std::to_string(not_graded) + " not graded yet";
  if (superseded > 0)
    out += ", " + std::to_string(superseded) + " handed in again later (" +
           (superseded == 1 ? "its row says" : "their rows say") + " which is graded)";
  return out;
}

namespace {

// The class's name, kept in REPORTS/class.json by the batch that graded it, so a --regrade of the
// reports alone titles its page the same (else the reports folder's own name).
constexpr const char* kClassFile = "/class.json";

std::string kept_class_name(const std::string& reports) {
  if (const auto text = read_bounded_file(reports + kClassFile, 1 << 16, "class")) {
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("name") && j["name"].is_string()) return j["name"].get<std::string>();
  }
  return class_name(reports);
}

// REPORTS/index.html, over the rows as they stand, titled `name`; a class page that cannot be
// written is said, and costs nobody their grade.
void write_page(const std::string& reports, const std::string& name, const std::vector<BatchRow>& rows) {
  if (reports.empty()) return;
  if (auto w = write_class_page(reports, ClassPage{name, rows}); !w)
    std::cerr << "cb-grade: the class page: " << w.error().message << '\n';
}

}  // namespace

// A batch (or a merge) keeps its class's name beside the reports, then writes the page.
void write_batch_page(const std::string& reports, const std::string& name, const std::vector<BatchRow>& rows) {
  if (reports.empty()) return;
  if (auto w = write_file_atomically(reports + kClassFile, nlohmann::json{{"name", name}}.dump() + "\n"); !w)
    std::cerr << "cb-grade: the class's name: " << w.error().message << '\n';
  write_page(reports, name, rows);
}

namespace {

// The conformance seed of a batch kept in `reports` (any whole grade's stamp), if there is one.
std::optional<std::uint64_t> kept_seed(const std::string& reports) {
  auto names = submission_folders(reports);
  if (!names) return std::nullopt;
  for (const std::string& name : *names) {
    const auto stamp = kept_batch_stamp(reports + "/" + name);
    if (!stamp) continue;
    const nlohmann::json& c = stamp->value("conformance", nlohmann::json());
    if (c.is_object() && c.contains("seed") && c["seed"].is_number_unsigned()) return c["seed"].get<std::uint64_t>();
  }
  return std::nullopt;
}

}  // namespace

Result<BatchOptions> batch_options(const ClassArgs& o, const Asked& asked) {
  BatchOptions b;
  b.root = o.root;
  b.files_dir = o.files;
  if (!o.run.empty()) b.run_command = o.run;
  b.timeout = asked.timeout;
  b.grade = asked.grade;
  b.jobs = o.jobs;
  b.course_key = asked.course_key;
  b.reports_dir = o.reports;
  b.resume = o.resume;
  if (o.resume && o.reports.empty())
    return Error{"--resume takes up what an earlier batch kept with --reports DIR: give it the same --reports"};
  b.conformance = asked.conformance;
  if (b.conformance) b.conformance->jobs = 1;  // the class runs side by side already
  // A class has one seed: a resumed batch whose seed nobody chose takes the one its first run drew.
  if (o.resume && b.conformance && b.conformance->seed_drawn)
    if (const auto kept = kept_seed(o.reports)) b.conformance->traces.seed = *kept;
  if (!o.roster.empty()) {
    const auto text = read_bounded_file(o.roster, 4 << 20, "roster");
    if (!text) return text.error();
    auto roster = read_roster(*text, o.roster, asked.id_field);
    if (!roster) return roster.error();
    b.roster = std::move(roster->students);
    b.roster_handed_in = std::move(roster->handed_in_ns);
    b.roster_only = true;
    b.id_field = asked.id_field;
  }
  if (!o.shard.empty()) {
    auto shard = parse_shard(o.shard, [](const char* name) { return std::getenv(name); });
    if (!shard) return shard.error();
    b.shard = *shard;
    // Every shard must meet the same traces: a seed each drew for itself would not be one class.
    if (b.conformance && b.conformance->seed_drawn)
      return Error{
          "--shard with --conformance: every shard must run the same traces; give --seed N (or the "
          "rubric's seed), the same to every shard"};
  }
  return b;
}

int run_class(const ClassArgs& o, const Asked& asked, sandbox::Sandbox& sandbox) {
  auto options = batch_options(o, asked);
  if (!options) return could_not_run(options.error().message);
  BatchOptions& b = *options;
  b.sandbox = &sandbox;
  auto names = batch_folders(b);
  if (!names) return could_not_run(names.error().message);
  if (!o.reports.empty())
    if (auto made = make_directories(o.reports); !made) return could_not_run(made.error().message);
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&started] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  // Chosen once, and said first, on a terminal and in a log alike (a Slurm task's output file is
  // where its instructor looks), so a slow class shows what it was given and how to give more.
  if (b.jobs <= 0) {
    const Jobs jobs = grading_jobs(this_process());
    b.jobs = jobs.count;
    std::cerr << "cb-grade: " << names->size() << (names->size() == 1 ? " submission, " : " submissions, ")
              << jobs.count << " at a time (-j " << jobs.count << ": " << jobs.why << ")\n";
  }
  const Journal journal(o);
  // What has finished, for the gradebook an interrupted batch leaves.
  std::mutex finished_mu;
  std::map<std::string, BatchRow> finished;
  ProgressLine progress;
  b.finished = [&](const BatchRow& row, std::size_t done, std::size_t total) {
    journal.append(row);
    {
      const std::lock_guard lock(finished_mu);
      finished.emplace(row.submission, row);
    }
    progress(done, total);
  };
  sandbox::set_last_words([&] {
    const std::lock_guard lock(finished_mu);
    std::vector<BatchRow> rows;
    for (const std::string& name : *names) {
      if (const auto f = finished.find(name); f != finished.end()) {
        rows.push_back(f->second);
        continue;
      }
      BatchRow& r = rows.emplace_back();
      r.submission = name;
      r.status = RowStatus::NotGraded;
      r.with_conformance = asked.conformance.has_value();
      r.max_score = asked.grade.rubric.max_score(r.with_conformance);
      r.error = "the batch was stopped before it was graded" +
                std::string(o.reports.empty() ? "" : " (--resume with the same --reports grades what is left)");
    }
    (void)emit(o, o.root, gradebook_json_wanted(o) ? gradebook_json(rows) : gradebook_csv(rows));
    write_batch_page(o.reports, class_name(o.root), rows);
    std::cerr << "cb-grade: stopped: " << summary(rows, elapsed()) << "; the gradebook of those is written"
              << (o.output.empty() ? "" : " to " + o.output) << '\n';
  });
  auto rows = grade_class(b);
  sandbox::set_last_words({});
  if (!rows) return could_not_run(rows.error().message);
  progress.done();
  std::cerr << "cb-grade: " << summary(*rows, elapsed()) << '\n';
  // Not a failure of anybody's grade: each box built what it needed itself, only slower.
  if (const std::string why = b.class_build->failure(); !why.empty())
    std::cerr << "cb-grade: the C++ kit's harness could not be built once for the class (" << why
              << "): each box built its own\n";
  write_batch_page(o.reports, class_name(o.root), *rows);
  const int rc = finish(o, o.root, *rows);
  journal.remove();
  return rc;
}

int run_regrade(const RegradeArgs& o, const GradeOptions& grade) {
  RegradeOptions r;
  r.dir = o.kept;
  r.grade = grade;
  r.jobs = o.jobs;
  auto rows = [&] {
    ProgressLine progress;
    r.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
    return regrade(r);
  }();
  if (!rows) return could_not_run(rows.error().message);
  // The verdicts that changed, each by name; the grades only rescaled (the same verdicts under
  // other points), counted, with one for example: a new rubric rescales nearly every row, and
  // the few verdicts that moved must not drown in them.
  std::size_t verdicts = 0;
  std::size_t rescaled = 0;
  std::string example;
  for (const BatchRow& row : *rows) {
    if (row.verdict_changed) {
      ++verdicts;
      std::cerr << row.submission << ": " << row.changes << '\n';
    } else if (!row.changes.empty()) {
      ++rescaled;
      if (example.empty()) example = row.submission + ": " + row.changes;
    }
  }
  if (rescaled > 0)
    std::cerr << "cb-grade: " << rescaled << " only rescaled (the same verdicts, other points or grader), e.g. "
              << example << '\n';
  write_page(o.kept, kept_class_name(o.kept), *rows);
  std::cerr << "cb-grade: regraded " << rows->size() << " submissions: " << verdicts << " verdicts changed, "
            << rescaled << " only rescaled\n";
  return finish(o, ".", *rows);
}

int run_merge(const MergeArgs& o, const GradeOptions& grade) {
  if (o.reports.empty()) return could_not_run("merge: --reports DIR: where the class's reports go, joined");
  const auto started = std::chrono::steady_clock::now();
  MergeOptions m;
  m.shards = o.shards;
  m.out = o.reports;
  m.grade = grade;
  m.jobs = o.jobs;
  auto merged = merge_shards(m);
  if (!merged) return could_not_run("merge: " + merged.error().message);
  for (const std::string& note : merged->notes) std::cerr << "cb-grade: merge: " << note << '\n';
  write_batch_page(o.reports, merged->class_name, merged->rows);
  std::cerr << "cb-grade: merged " << o.shards.size() << (o.shards.size() == 1 ? " shard: " : " shards: ")
            << summary(merged->rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
            << '\n';
  if (!merged->missing.empty()) {
    std::string names;
    for (std::size_t i = 0; i < merged->missing.size() && i < 20; ++i)
      names += (i > 0 ? ", " : "") + merged->missing[i];
    if (merged->missing.size() > 20) names += ", ...";
    std::cerr << "cb-grade: merge: " << merged->missing.size() << " submissions graded by no shard given: " << names
              << '\n';
  }
  return finish_joined(o, merged->rows, merged->missing);
}

}  // namespace cb::grade

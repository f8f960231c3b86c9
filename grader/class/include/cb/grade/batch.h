#pragma once
// A class's submissions at once: every subdirectory of a root is a submission, graded in
// parallel, into one gradebook. With --run, each runs in a box of its own (a copy of it, a uid
// of its own), so no submission can see or touch another, and every folder is left as it was.
// With a reports directory, each submission's reports and the evidence they stand on are kept
// (class_reports.h), for the student to read and for --regrade.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/fault.h"
#include "cb/grade/grade.h"
#include "cb/grade/gather.h"
#include "cb/grade/handed_in.h"
#include "cb/grade/roster.h"
#include "cb/grade/run_student.h"
#include "cb/grade/shard.h"
#include "cb/grade/variant.h"

namespace cb::grade {

struct BatchRow;

struct BatchOptions {
  std::string root;
  std::string files_dir = ".";             // inside each submission, where the lab's files are
  std::optional<std::string> run_command;  // --run, in each submission's box, on a server of its own
  sandbox::Sandbox* sandbox = nullptr;     // with run_command or conformance: every program runs in a box of it
  // What the class's boxes share (class_build.h): one for the whole class, whichever copy of
  // these options grades a submission.
  std::shared_ptr<ClassBuild> class_build = std::make_shared<ClassBuild>();
  std::chrono::milliseconds timeout = std::chrono::seconds{60};
  GradeOptions grade;
  int jobs = 0;  // 0: grading_jobs (jobs.h)
  // Each student graded on their own numbers (variant.h): the course key, and the students'
  // ids by submission folder (a folder not named here is its own id). Empty key: the same
  // numbers for all (grade.spec's, or the handout's).
  std::string course_key;
  std::map<std::string, std::string> roster;
  std::map<std::string, std::int64_t> roster_handed_in;  // when the roster says a folder was handed in (ns)
  bool roster_only = false;                              // a folder the roster does not name is an error, not an id
  std::string id_field = "folder";                       // what names a student here: said in each report
  std::optional<ConformanceRun> conformance;             // jobs: 1 (a class runs side by side already)
  std::string reports_dir;  // non-empty: each submission's reports kept in reports_dir/NAME/
  // With reports_dir: a submission kept whole by a batch stamped the same (batch_stamp()) is not
  // run again; its row is judged from what was kept, as --regrade does.
  bool resume = false;
  // One shard of a job array (shard.h): only its share of the root's folders is graded, and with
  // reports_dir the manifest is kept in reports_dir/shard.json for `cb-grade merge`.
  std::optional<Shard> shard;
  // Called after each submission with its row (from the worker that graded it; calls do not
  // overlap): the journal, the progress line.
  std::function<void(const BatchRow& row, std::size_t done, std::size_t total)> finished;
};

// graded: it has a report; empty: the folder held nothing to grade; error: it could not be
// graded as handed in (BatchRow::error says why); not_graded: the batch was stopped before it got
// to it, or the grader failed at every try (BatchRow::fault is Fault::Grader); superseded: its
// student handed in again later, and that folder is graded instead (handed_in.h). A superseded
// row has no score, so that a gradebook imported by student never takes it for the grade.
// no_submission: a student of the roster with no folder at all (the roster's folder name is the
// row's), a 0 like an empty folder's.
enum class RowStatus { Graded, Empty, Error, NotGraded, Superseded, NoSubmission };
// "graded", "empty", "error", "not_graded", "superseded", "no_submission"
[[nodiscard]] const char* to_string(RowStatus s) noexcept;

struct BatchRow {
  std::string submission;  // the subdirectory's name
  std::string student;     // with a course key: whose numbers it was graded on
  RowStatus status = RowStatus::Error;
  std::optional<Report> report;
  std::string error;  // why it could not be graded, or why it is empty
  // error and not_graded: whose failure it was (fault.h): the program's or the folder's, never
  // retried; or the grader's, which is never the student's.
  Fault fault = Fault::None;
  // What the row is out of when there is no report (empty, error, not graded): the rubric's
  // points, so every row of the gradebook has the assignment's total.
  double max_score = 0;
  bool with_conformance = false;  // whether that total counts the conformance part
  // --regrade: what changed since the grade kept ("step 3: fail -> pass; score 7 -> 8"), and
  // whether this row is a regrade at all.
  bool regraded = false;
  std::string changes;
  bool verdict_changed = false;  // a step's or the conformance part's verdict, not the points alone
  bool score_changed = false;
  bool evidence_changed = false;  // the kept evidence's SHA-256 is not the one its grade was judged on
  bool resumed = false;           // --resume: judged from what an earlier run of the batch kept
};

// The subdirectories of `root`, sorted, hidden ones aside; a symbolic link is never one (it is
// not followed out of the root). Errors: the root cannot be listed.
[[nodiscard]] Result<std::vector<std::string>> submission_folders(const std::string& root);

// A class's rows, by name: every folder of the root and, with a roster, a row for each of its
// students who handed in nothing (roster_without_folder), sorted. Errors: the root cannot be listed.
[[nodiscard]] Result<std::vector<std::string>> class_manifest(const BatchOptions& options);

// A class is named for its root folder: the last part of its path.
[[nodiscard]] std::string class_name(std::string root);

// The submissions a batch grades: every folder of the root (submission_folders), or a shard's
// share of them. Errors: the root cannot be listed.
[[nodiscard]] Result<std::vector<std::string>> batch_folders(const BatchOptions& options);

// Errors: the root cannot be listed, or the reports directory cannot be made.
[[nodiscard]] Result<std::vector<BatchRow>> grade_class(const BatchOptions& options);

// Every student of the class and their numbers, with a course key: whose numbers a run on
// another's were, when the key can tell.
using ClassNumbers = std::vector<std::pair<std::string, LabNumbers>>;

// What every submission's grade shares: the whole class's students and numbers (a shard's too),
// and a shard's part of the stamp ({"count", "manifest_sha256"}; null for a whole class).
struct ClassContext {
  ClassNumbers everyone;
  nlohmann::json shard;
  // The folders of students who handed in again later (handed_in.h), over the whole class.
  std::map<std::string, Superseded> superseded;
  // The roster's students who handed in nothing, by the folder name the roster gives them.
  std::map<std::string, std::string> no_folder;
};
// The context of a whole class whose folders (or, with a course key and no roster, students'
// ids) are `folders`.
[[nodiscard]] ClassContext class_context(const BatchOptions& options, const std::vector<std::string>& folders);

// The row of a folder whose student handed in again later: not graded, and saying which is.
[[nodiscard]] BatchRow superseded_row(const BatchOptions& options, const std::string& name, const Superseded& why);
// The row of a roster's student who handed in nothing (ClassContext::no_folder).
[[nodiscard]] BatchRow no_submission_row(const BatchOptions& options, const std::string& name,
                                         const std::string& student);
// One submission of a class, ROOT/NAME, as grade_class grades each (and the queue's workers):
// graded, superseded_row for a folder the class's context says is superseded, or
// no_submission_row. A try the grader fails (Fault::Grader) is tried again, kGradingTries in all;
// then the row is not_graded, saying why. With reports_dir, it is kept there, graded or not.
[[nodiscard]] BatchRow grade_in_class(const BatchOptions& options, const std::string& name,
                                      const ClassContext& the_class);

// What every grade of the batch depends on besides the submission and the student's numbers:
// the grader, lab, rubric, run, timeout and conformance run (a shard's and the queue's stamp).
[[nodiscard]] nlohmann::json class_stamp(const BatchOptions& options);

// The gradebook (gradebook.cpp): one row a submission, with per step its status and first
// failing check, how the program ran, the conformance part and the grade's provenance. CSV cells
// are written so that no spreadsheet evaluates them.
[[nodiscard]] std::string gradebook_csv(const std::vector<BatchRow>& rows);
[[nodiscard]] std::string gradebook_json(const std::vector<BatchRow>& rows);
// One row as gradebook_json writes it: a line of the batch's journal.
[[nodiscard]] nlohmann::json gradebook_row_json(const BatchRow& row);
// The gradebook's digest: the SHA-256 of its rows sorted by submission, each as
// gradebook_row_json gives it (compact JSON, keys sorted), a line each. The CSV and the JSON of one
// class have the same; `cb-grade verify --gradebook` works it out again from the kept grades.
[[nodiscard]] std::string gradebook_digest(const std::vector<BatchRow>& rows);
// The same digest of rows already in the JSON gradebook's form (a JSON gradebook's own rows).
[[nodiscard]] std::string rows_digest(std::vector<nlohmann::json> rows);
// A text cell as a spreadsheet must take it: quoted when it holds a comma, a quote or a line
// break, and a leading = + - @ (or tab, CR) turned into text by a leading apostrophe.
[[nodiscard]] std::string csv_cell(const std::string& text);

}  // namespace cb::grade

#pragma once
// What `cb-grade --batch --reports DIR` keeps of each submission, in DIR/NAME/:
//   report.json, report.txt, report.html   the grade, for the student to read (and for tools)
//   record.json        the server's record it was graded on (with --run), as /admin/record says it
//   files/             the lab's files as graded (what the program wrote in its box)
//   conformance.json   with --conformance: the seed, the verdict and every answer the program gave
//   grading.json       how it was graded: the numbers, the program's exit, the sandbox, the server,
//                      and what else the grade depends on (the batch's stamp, for --resume)
// and what `cb-grade --regrade DIR` reads back to grade it again without running anything. Beside
// them the batch writes DIR/index.html (the class page) and DIR/class.json (the class's name).

#include <optional>
#include <string>

#include "cb/dir_handle.h"
#include "cb/grade/batch.h"
#include "cb/grade/evidence.h"
#include "cb/grade/record.h"
#include "cb/grade/files.h"
#include "cb/grade/grade.h"
#include "cb/grade/report.h"

namespace cb::grade {

struct KeptGrade {
  std::string dir;                       // DIR/NAME
  RowStatus status = RowStatus::Graded;  // empty, error or not_graded: nothing else is kept but why
  std::string error;
  Fault fault = Fault::None;      // error or not_graded: whose failure
  bool with_conformance = false;  // empty or error: whether the batch graded a conformance part
  Evidence evidence;              // the files of DIR/NAME/files/ are opened by the regrade (they may be lost)
  std::string numbers_from;       // where a student's numbers came from, as the grade said (LabSpec::numbers_from)
  nlohmann::json report;          // report.json as kept: what a regrade compares with
};

// Writes DIR/NAME/ for one graded submission (each file atomically): the reports of `report`,
// and the evidence it was judged on: the record, the lab's files as graded, grading.json (how it
// ran) and, with conformance, conformance.json (every answer). `spec`: the lab it was graded on
// (which files to keep).
// `stamp`: what the grade depends on besides the folder (a batch's; --resume compares it).
// The report is given the SHA-256 of the evidence kept (evidence_sha256) before it is written.
[[nodiscard]] Result<void> keep_grade(const std::string& dir, Report& report, const Evidence& evidence,
                                      const LabSpec& spec, const nlohmann::json& stamp = nullptr);

// The SHA-256 of what DIR/NAME keeps as the evidence of its grade: grading.json, record.json,
// conformance.json and every file under files/ (a link as its target's text, never followed),
// each as "path<TAB>SHA-256 of its bytes" a line, sorted by path. The reports are not evidence.
[[nodiscard]] Result<std::string> evidence_sha256(const std::string& dir);

// Writes DIR/NAME/grading.json for a submission that was not graded (empty, an error, or the
// grader's failure at every try), so
// a regrade lists it as the batch did.
[[nodiscard]] Result<void> keep_ungraded(const std::string& dir, const BatchRow& row);

// Rewrites only the three reports of DIR/NAME (a regrade's new verdict), or writes them into a
// directory already held open (cb-grade --reports).
[[nodiscard]] Result<void> write_reports(const std::string& dir, const Report& report);
[[nodiscard]] Result<void> write_reports(const DirHandle& dir, const Report& report);

// Reads DIR/NAME back. Errors name the file and the field.
[[nodiscard]] Result<KeptGrade> read_kept_grade(const std::string& dir);

// The rubric as a batch stamped `stamp` applied it: a seed or a number of traces given as flags
// replaced the rubric's (cli_flags.cpp), and the kept answers are to those. What a merge or a
// verify judges kept grades with.
[[nodiscard]] GradeOptions as_kept(GradeOptions grade, const nlohmann::json& stamp);

// The batch's stamp kept in DIR/NAME when it holds a whole grade (graded, report.json written,
// which is written last), else nullopt: what --resume compares, and where a resumed class finds
// the seed its first run drew.
[[nodiscard]] std::optional<nlohmann::json> kept_batch_stamp(const std::string& dir);

}  // namespace cb::grade

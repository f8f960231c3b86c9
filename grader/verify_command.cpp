// cb-grade verify REPORTS [--gradebook BOOK]: every kept grade judged again from its evidence,
// nothing rewritten, and a gradebook held to what the kept grades give.
#include <iostream>
#include <map>

#include "cb/bounded_file.h"
#include "cb/grade/merge.h"
#include "cb/grade/regrade.h"
#include "class_command.h"

namespace cb::grade {

namespace {

// What a JSON gradebook (-o gradebook.json) says otherwise than the kept grades give, a line a
// row: a row edited after the batch wrote it (a score raised by hand), one missing, one extra.
Result<std::vector<std::string>> gradebook_differences(const std::string& path, std::vector<BatchRow> rows) {
  auto text = read_bounded_file(path, std::size_t{256} << 20, "gradebook");
  if (!text) return text.error();
  const nlohmann::json book = nlohmann::json::parse(*text, nullptr, false);
  if (!book.is_array()) return Error{path + ": expected a JSON gradebook, an array of rows (-o gradebook.json)"};
  std::map<std::string, nlohmann::json> given;
  for (const nlohmann::json& row : book) {
    if (!row.is_object() || !row.contains("submission") || !row["submission"].is_string())
      return Error{path + ": a row without its submission"};
    given[row["submission"].get<std::string>()] = row;
  }
  std::vector<std::string> out;
  for (BatchRow& row : rows) {
    row.regraded = false;  // the row as the batch wrote it, not as a regrade lists it
    const auto it = given.find(row.submission);
    if (it == given.end()) {
      out.push_back(row.submission + ": graded and kept, but not in the gradebook");
      continue;
    }
    if (const std::string fields = differing_keys(gradebook_row_json(row), it->second); !fields.empty())
      out.push_back(row.submission + ": its gradebook row is not what its kept grade gives (" + fields + ")");
    given.erase(it);
  }
  for (const auto& [name, row] : given) out.push_back(name + ": in the gradebook, but no grade of it is kept");
  return out;
}

}  // namespace

int run_verify(const Options& o, const GradeOptions& grade) {
  auto names = submission_folders(o.verify);
  if (!names) return could_not_run("verify: " + names.error().message);
  // The grades are held to the rubric they were given: another one would change every score.
  std::optional<nlohmann::json> stamp;
  for (std::size_t i = 0; i < names->size() && !stamp; ++i) stamp = kept_batch_stamp(o.verify + "/" + (*names)[i]);
  if (stamp && stamp->value("rubric_sha256", "") != grade.rubric.sha256)
    return could_not_run("verify: the class was graded with another rubric (SHA-256 " +
                         stamp->value("rubric_sha256", "") + "): give verify the --rubric it was graded with");
  RegradeOptions r;
  r.dir = o.verify;
  r.grade = stamp ? as_kept(grade, *stamp) : grade;
  r.jobs = o.jobs;
  r.rewrite = false;
  auto rows = regrade(r);
  if (!rows) return could_not_run("verify: " + rows.error().message);
  std::size_t not_following = 0;
  std::size_t graded = 0;
  for (const BatchRow& row : *rows) {
    if (row.status == RowStatus::Error) {
      ++not_following;
      std::cout << row.submission << ": cannot be judged again: " << row.error << '\n';
    } else if (row.status == RowStatus::Graded) {
      ++graded;
      if (row.verdict_changed || row.score_changed || row.evidence_changed) {
        ++not_following;
        std::cout << row.submission << ": does not follow from its evidence: " << row.changes << '\n';
      }
    }
  }
  std::cerr << "cb-grade: verified " << rows->size() << " submissions (" << graded << " graded): "
            << (not_following == 0 ? std::string("every grade follows from its evidence")
                                   : std::to_string(not_following) + " do not")
            << '\n';
  if (!o.verify_gradebook.empty()) {
    auto differences = gradebook_differences(o.verify_gradebook, *rows);
    if (!differences) return could_not_run("verify: --gradebook: " + differences.error().message);
    for (const std::string& d : *differences) std::cout << d << '\n';
    std::cerr << "cb-grade: " << o.verify_gradebook << ": "
              << (differences->empty() ? std::string("every row is what its kept grade gives")
                                       : std::to_string(differences->size()) + " rows are not")
              << '\n';
    not_following += differences->size();
  }
  return static_cast<int>(not_following == 0 ? ExitCode::Ok : ExitCode::Failed);
}

}  // namespace cb::grade

// cb-grade verify REPORTS [--gradebook BOOK]: every kept grade judged again from its evidence,
// nothing rewritten, and a gradebook held to what the kept grades give.
#include <algorithm>
#include <iostream>
#include <map>

#include "cb/bounded_file.h"
#include "cb/hmac_sha256.h"
#include "cb/grade/merge.h"
#include "cb/grade/regrade.h"
#include "class_command.h"

namespace cb::grade {

namespace {

// A CSV text's records, each a list of cells, as RFC 4180 has them: a quoted cell may hold commas,
// line breaks and quotes (doubled). gradebook_csv writes so.
std::vector<std::vector<std::string>> csv_records(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false;
  bool any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      record.push_back(std::move(cell));
      cell.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !cell.empty()) {
        record.push_back(std::move(cell));
        out.push_back(std::move(record));
      }
      record.clear();
      cell.clear();
      any = false;
    } else {
      cell += c;
      any = true;
    }
  }
  if (any || !cell.empty()) {
    record.push_back(std::move(cell));
    out.push_back(std::move(record));
  }
  return out;
}

// A gradebook's rows in the order written, each with its submission: a CSV one's as objects of
// their columns (every cell a string), a JSON one's as written. A name may come twice: that is for
// the caller to find, never for a map to hide (a forged row first, the real one after it).
using Rows = std::vector<std::pair<std::string, nlohmann::json>>;

Result<Rows> rows_of(const std::string& text, bool csv, const std::string& path) {
  Rows out;
  if (csv) {
    const auto records = csv_records(text);
    if (records.empty() || records.front().empty() || records.front().front() != "submission")
      return Error{path + ": expected a CSV gradebook, its first column submission (-o gradebook.csv)"};
    const std::vector<std::string>& header = records.front();
    for (std::size_t i = 1; i < records.size(); ++i) {
      if (records[i].size() != header.size())
        return Error{path + ": record " + std::to_string(i + 1) + ": expected " + std::to_string(header.size()) +
                     " cells, as the header has"};
      nlohmann::json row = nlohmann::json::object();
      for (std::size_t k = 0; k < header.size(); ++k) row[header[k]] = records[i][k];
      out.emplace_back(records[i].front(), std::move(row));
    }
    return out;
  }
  const nlohmann::json book = nlohmann::json::parse(text, nullptr, false);
  if (!book.is_array()) return Error{path + ": expected a JSON gradebook, an array of rows (-o gradebook.json)"};
  for (const nlohmann::json& row : book) {
    if (!row.is_object() || !row.contains("submission") || !row["submission"].is_string())
      return Error{path + ": a row without its submission"};
    out.emplace_back(row["submission"].get<std::string>(), row);
  }
  return out;
}

// The digest beside a gradebook (BOOK.digest) held to the file it sits beside and to the kept
// grades: a gradebook edited with its digest left alone, or a digest written for other rows.
void digest_differences(const std::string& path, const std::string& text, const Rows& given, bool csv,
                        const std::vector<BatchRow>& rows, std::vector<std::string>& out) {
  auto digest = read_bounded_file(path + ".digest", 1 << 16, "digest");
  if (!digest) return;  // a gradebook written before digests, or kept without one
  const nlohmann::json d = nlohmann::json::parse(*digest, nullptr, false);
  if (!d.is_object()) {
    out.push_back(path + ".digest: not a digest (expected a JSON object)");
    return;
  }
  if (d.contains("file_sha256") && d.value("file_sha256", "") != hex(sha256(text)))
    out.push_back(path + ".digest: not the digest of this gradebook's own bytes (it was changed after it was written)");
  if (!csv) {
    // The digest's rows as this file has them (a CSV's cells are all text, so only its bytes say).
    std::vector<nlohmann::json> own;
    for (const auto& entry : given) own.push_back(entry.second);
    if (d.value("sha256", "") != rows_digest(std::move(own)))
      out.push_back(path + ".digest: not the digest of this gradebook's own rows");
  }
  if (d.value("sha256", "") != gradebook_digest(rows))
    out.push_back(path + ".digest: not the digest of the rows the kept grades give");
}

// What a gradebook (-o gradebook.csv or .json) says otherwise than the kept grades give, a line a
// row: a row edited after the batch wrote it (a score raised by hand), one missing, one extra, one
// there twice; and a digest beside it (BOOK.digest) that is not its own or not the kept rows'.
Result<std::vector<std::string>> gradebook_differences(const std::string& path, std::vector<BatchRow> rows) {
  auto text = read_bounded_file(path, std::size_t{256} << 20, "gradebook");
  if (!text) return text.error();
  const bool csv = path.size() > 4 && path.substr(path.size() - 4) == ".csv";
  auto given = rows_of(*text, csv, path);
  if (!given) return given.error();
  // A regrade's gradebook says what the regrade changed (change, changes): history, which the
  // kept grades no longer hold once rewritten; its grades are held to them like a batch's.
  const bool from_regrade =
      std::any_of(given->begin(), given->end(), [](const auto& entry) { return entry.second.contains("changes"); });
  for (BatchRow& row : rows) row.regraded = from_regrade;
  auto expected = rows_of(csv ? gradebook_csv(rows) : gradebook_json(rows), csv, "the kept grades' gradebook");
  if (!expected) return expected.error();
  for (Rows* book : {&*given, &*expected})
    for (auto& entry : *book) {
      entry.second.erase("change");
      entry.second.erase("changes");
    }
  std::map<std::string, std::vector<const nlohmann::json*>> by_name;
  for (const auto& [name, row] : *given) by_name[name].push_back(&row);
  std::vector<std::string> out;
  for (const auto& [name, found] : by_name)
    if (found.size() > 1)
      out.push_back(name + ": in the gradebook " + std::to_string(found.size()) + " times; a submission has one row");
  for (const auto& [name, row] : *expected) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) {
      out.push_back(name + ": graded and kept, but not in the gradebook");
      continue;
    }
    for (const nlohmann::json* seen : it->second)
      if (const std::string fields = differing_keys(row, *seen); !fields.empty())
        out.push_back(name + ": its gradebook row is not what its kept grade gives (" + fields + ")");
    by_name.erase(it);
  }
  for (const auto& [name, found] : by_name) out.push_back(name + ": in the gradebook, but no grade of it is kept");
  digest_differences(path, *text, *given, csv, rows, out);
  return out;
}

}  // namespace

int run_verify(const VerifyArgs& o, const GradeOptions& grade) {
  auto names = submission_folders(o.reports);
  if (!names) return could_not_run("verify: " + names.error().message);
  // The grades are held to the rubric they were given: another one would change every score.
  std::optional<nlohmann::json> stamp;
  for (std::size_t i = 0; i < names->size() && !stamp; ++i) stamp = kept_batch_stamp(o.reports + "/" + (*names)[i]);
  if (stamp && stamp->value("rubric_sha256", "") != grade.rubric.sha256)
    return could_not_run("verify: the class was graded with another rubric (SHA-256 " +
                         stamp->value("rubric_sha256", "") + "): give verify the --rubric it was graded with");
  RegradeOptions r;
  r.dir = o.reports;
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
  if (!o.gradebook.empty()) {
    auto differences = gradebook_differences(o.gradebook, *rows);
    if (!differences) return could_not_run("verify: --gradebook: " + differences.error().message);
    for (const std::string& d : *differences) std::cout << d << '\n';
    std::cerr << "cb-grade: " << o.gradebook << ": "
              << (differences->empty() ? std::string("every row is what its kept grade gives")
                                       : std::to_string(differences->size()) +
                                             (differences->size() == 1 ? " difference" : " differences") +
                                             " from what the kept grades give (above)")
              << '\n';
    not_following += differences->size();
  }
  return static_cast<int>(not_following == 0 ? ExitCode::Ok : ExitCode::Failed);
}

}  // namespace cb::grade

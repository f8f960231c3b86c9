// The gradebook's rows that are no grade: which carry a score an LMS would import, and which
// carry none.
#include <doctest/doctest.h>

#include <sstream>

#include "cb/grade/batch.h"

namespace cb::grade {
namespace {

BatchRow row_without_report(RowStatus status, Fault fault) {
  BatchRow row;
  row.submission = "ann";
  row.status = status;
  row.fault = fault;
  row.max_score = 8;
  row.error = "why";
  return row;
}

// The CSV's score cell of a one-row gradebook.
std::string csv_score(const BatchRow& row) {
  std::istringstream csv(gradebook_csv({row}));
  std::string header;
  std::string line;
  std::getline(csv, header);
  std::getline(csv, line);
  // submission,status,score,...
  const auto first = line.find(',');
  const auto second = line.find(',', first + 1);
  const auto third = line.find(',', second + 1);
  return line.substr(second + 1, third - second - 1);
}

TEST_CASE("gradebook: a grader failure is never a score, nor is a superseded folder") {
  for (const RowStatus status : {RowStatus::NotGraded, RowStatus::Superseded}) {
    CAPTURE(to_string(status));
    const BatchRow row = row_without_report(status, status == RowStatus::NotGraded ? Fault::Grader : Fault::None);
    CHECK(gradebook_row_json(row)["score"].is_null());
    CHECK(gradebook_row_json(row)["max_score"] == 8);
    CHECK(csv_score(row).empty());
  }
}

TEST_CASE("gradebook: a folder that cannot be graded as handed in, or none at all, scores 0") {
  for (const RowStatus status : {RowStatus::Error, RowStatus::Empty, RowStatus::NoSubmission}) {
    CAPTURE(to_string(status));
    const BatchRow row = row_without_report(status, status == RowStatus::Error ? Fault::Program : Fault::None);
    CHECK(gradebook_row_json(row)["score"] == 0);
    CHECK(csv_score(row) == "0");
  }
}

}  // namespace
}  // namespace cb::grade

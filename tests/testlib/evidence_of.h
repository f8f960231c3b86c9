#pragma once
// The evidence of a folder of lab files and a record, for tests that judge the same folder more
// than once (an Evidence holds its folder open, and takes it: each call opens it again).

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "cb/grade/evidence.h"

namespace cb::testing {

inline grade::Evidence evidence_of(const grade::SubmissionDir& dir, std::optional<grade::Record> record,
                                   std::string no_record_reason = {}) {
  auto again = grade::SubmissionDir::open(dir.path());
  REQUIRE(again.ok());
  return grade::files_and_record(std::move(*again), std::move(record), std::move(no_record_reason));
}

}  // namespace cb::testing

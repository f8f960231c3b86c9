#pragma once
// `cb-grade merge SHARD... --reports OUT`: a class graded in shards (shard.h), each machine into
// a reports folder of its own, joined into one folder as `--batch --reports` writes it (so
// `--regrade` works on it), and one gradebook. Every shard must be of the same class and graded
// the same way (shard.json's manifest and stamp, and the rubric given here); each submission of
// the manifest is taken once. A shard index run twice (a twin pod) grades its submissions twice:
// the grade whose report.json has the smaller SHA-256 is kept, a rule that does not depend on
// the order of the folders or on which finished first, and twins whose verdicts differ are said.
// A submission no shard given graded is named, and its row is not_graded.

#include <string>
#include <vector>

#include "cb/grade/batch.h"
#include "cb/grade/grade.h"

namespace cb::grade {

struct MergeOptions {
  std::vector<std::string> shards;  // each shard's --reports folder
  std::string out;                  // the merged reports: made if need be, holding no submission yet
  GradeOptions grade;               // the rubric the shards graded with (its SHA-256 is checked)
  int jobs = 0;                     // 0: one per CPU this process may use
};

struct Merged {
  std::string class_name;
  std::vector<BatchRow> rows;        // a row for every submission of the manifest, in its order
  std::vector<std::string> missing;  // the submissions no shard given graded
  std::vector<std::string> notes;    // twins, and what else a person should know, a line each
};

// The top-level keys two JSON objects differ in (in `a`'s order, then those only `b` has), for a
// person: "conformance, rubric_sha256". What a merge says of two shards' stamps, and verify of a
// gradebook row against its kept grade.
[[nodiscard]] std::string differing_keys(const nlohmann::json& a, const nlohmann::json& b);

// Errors: a shard.json that cannot be read, shards of different classes or graded otherwise,
// another rubric, an output folder that holds submissions already.
[[nodiscard]] Result<Merged> merge_shards(const MergeOptions& options);

}  // namespace cb::grade

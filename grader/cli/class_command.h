#pragma once
// cb-grade class ROOT, regrade DIR, merge SHARD... and verify DIR: a class at once.

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "cb/grade/batch.h"
#include "cli_flags.h"
#include "cli_options.h"

namespace cb::grade {

// What a class's flags ask (the queue's push and work read them so too). Errors: a
// roster or shard that cannot be read, flags that do not go together.
[[nodiscard]] Result<BatchOptions> batch_options(const ClassArgs& o, const Asked& asked);
int run_class(const ClassArgs& o, const Asked& asked, sandbox::Sandbox& sandbox);

// What every command about a class ends with: "300 submissions in 4:12: 280 graded (...)"; the
// class's name and page beside its reports; the gradebook to -o (`handed_in`: the folder of the
// class, where -o's file is reached without following a link), and the exit (0 when every row
// passed, else 1).
[[nodiscard]] std::string summary(const std::vector<BatchRow>& rows, double seconds);
void write_batch_page(const std::string& reports, const std::string& name, const std::vector<BatchRow>& rows);
int finish(const OutputFlags& o, const std::string& handed_in, const std::vector<BatchRow>& rows);
// finish() for a class joined from parts (merge, queue collect): exit 3 while `missing` names
// submissions no part graded, whatever the students' verdicts.
int finish_joined(const OutputFlags& o, const std::vector<BatchRow>& rows, const std::vector<std::string>& missing);
int run_regrade(const RegradeArgs& o, const GradeOptions& grade);
// cb-grade merge SHARD... --reports DIR: the shards of a class joined (merge.h).
int run_merge(const MergeArgs& o, const GradeOptions& grade);
// cb-grade verify REPORTS: every kept grade judged again, nothing rewritten (regrade.h).
int run_verify(const VerifyArgs& o, const GradeOptions& grade);

}  // namespace cb::grade

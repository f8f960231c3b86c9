#pragma once
// cb-grade --batch ROOT, --regrade DIR, merge SHARD... and verify DIR: a class at once.

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "cb/grade/batch.h"
#include "cli_flags.h"
#include "cli_options.h"

namespace cb::grade {

// The flags that were given and mean nothing for a class, named in one message; empty if none.
[[nodiscard]] std::string flags_not_for_a_class(const CLI::App& app, const Options& o);

int run_batch(const Options& o, const Asked& asked, sandbox::Sandbox& sandbox);
int run_regrade(const Options& o, const GradeOptions& grade);
// cb-grade merge SHARD... --reports DIR: the shards of a class joined (merge.h).
int run_merge(const Options& o, const GradeOptions& grade);
// cb-grade verify REPORTS: every kept grade judged again, nothing rewritten (regrade.h).
int run_verify(const Options& o, const GradeOptions& grade);

}  // namespace cb::grade

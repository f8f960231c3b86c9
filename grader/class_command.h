#pragma once
// cb-grade --batch ROOT and --regrade DIR: a class at once, into one gradebook.

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "cb/grade/batch.h"
#include "cli_options.h"

namespace cb::grade {

// The flags that were given and mean nothing for a class, named in one message; empty if none.
[[nodiscard]] std::string flags_not_for_a_class(const CLI::App& app, const Options& o);

// `grade`: the rubric and lab already read; `conformance`: with --conformance.
int run_batch(const Options& o, const GradeOptions& grade, const std::string& course_key,
              std::optional<BatchConformance> conformance, sandbox::Sandbox& sandbox,
              std::chrono::milliseconds timeout);
int run_regrade(const Options& o, const GradeOptions& grade);

}  // namespace cb::grade

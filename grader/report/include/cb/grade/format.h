#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cb/grade/report.h"

namespace cb::grade {

enum class Format { Text, Json, Junit, Gradescope, Html, Classroom };
[[nodiscard]] std::optional<Format> parse_format(std::string_view name);

// text: a checklist for a person (ANSI colour only when `colour`); json: the fields of
// docs/CONTRACTS.md ("The grader's JSON report"); junit: one testcase per step; gradescope: results.json; html: one
// self-contained page, the run drawn on a time axis above the checklist; classroom: the
// results GitHub Classroom's grading reporter reads (version 1: a status, max_score, tests).
[[nodiscard]] std::string render(const Report& report, Format format, bool colour);

// The verdict in one line ("Score 6/8: 1 step(s) failed. ..."): the text report's last line, and
// what the terminal is told when the report goes to a file.
[[nodiscard]] std::string score_line(const Report& report);

// XML 1.0 text: escaped, and characters XML cannot hold at all replaced by '?'.
[[nodiscard]] std::string xml_escape(std::string_view text);

}  // namespace cb::grade

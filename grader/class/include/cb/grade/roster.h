#pragma once
// A class's roster: which student each folder is, as an LMS or a spreadsheet exports it, and who
// of them handed in nothing.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"

namespace cb::grade {

// A roster: a folder and a student a line, as an LMS or a spreadsheet exports it: cells split at
// the comma, semicolon or tab the first line uses most, double quotes as CSV has them. A first line
// that names a "folder" (or "submission") column, in any case, is a header: the student is the
// column named `id_field` ("email", "sid", ...) or else one named "student", never a column that
// names another field, and other columns are ignored. Without a header, "folder,ID" a line. Errors name the line and
// what was expected.
[[nodiscard]] Result<std::map<std::string, std::string>> parse_roster(std::string_view csv, const std::string& name,
                                                                      const std::string& id_field = "email");

// A roster as parse_roster reads it, and when each folder was handed in where the export says so:
// a header column named "submitted", "submitted at", "submission time", "handed in" or
// "timestamp" (any case), each cell a UTC time (2026-11-03T14:22:05Z, or with a space for the T;
// an empty cell says nothing). The rule for a student who hands in twice (handed_in.h) takes
// these times over the folders' own.
struct Roster {
  std::map<std::string, std::string> students;       // folder -> the student's id
  std::map<std::string, std::int64_t> handed_in_ns;  // folder -> when, in ns since the epoch
};
[[nodiscard]] Result<Roster> read_roster(std::string_view csv, const std::string& name,
                                         const std::string& id_field = "email");

// A student as the id rule keys them: student_id's form of `raw` (case and spaces aside), or `raw`
// itself where it is no valid id (its row says why). The batch and the queue key students so.
[[nodiscard]] std::string student_key(const std::string& raw);

// The roster's students who handed in nothing: no folder of theirs is among `folders` (by the id
// rule, so a student whose other folder is there has handed in). One folder name a student: the
// first the roster gives them, in byte order. By folder name, sorted.
[[nodiscard]] std::map<std::string, std::string> roster_without_folder(const std::map<std::string, std::string>& roster,
                                                                       const std::vector<std::string>& folders);

}  // namespace cb::grade

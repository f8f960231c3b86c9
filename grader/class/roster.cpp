#include "cb/grade/roster.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "cb/grade/variant.h"
#include "cb/utc_time.h"

namespace cb::grade {

namespace {

std::string listed(const std::vector<std::string>& cells) {
  std::string all;
  for (const std::string& c : cells) all += (all.empty() ? "" : ", ") + c;
  return all;
}

std::string lowered(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_cell(const std::string& cell) {
  const auto b = cell.find_first_not_of(" \t");
  const auto e = cell.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : cell.substr(b, e - b + 1);
}

// One line's cells, split at `sep`; a cell in double quotes may hold the separator ("" is a quote),
// as spreadsheets and LMSs write them.
std::vector<std::string> cells_of(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
      cell += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == sep && !quoted) {
      out.push_back(trim_cell(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(trim_cell(cell));
  return out;
}

// The separator the first line uses most of: comma, semicolon (spreadsheets where the comma is a
// decimal point) or tab; a comma when it has none.
char separator_of(const std::string& first) {
  char best = ',';
  std::size_t most = 0;
  for (const char sep : {',', ';', '\t'})
    if (const auto n = static_cast<std::size_t>(std::count(first.begin(), first.end(), sep)); n > most) {
      most = n;
      best = sep;
    }
  return best;
}

// The columns an LMS's export names the hand-in time with, lowered; the first found is read.
constexpr const char* kHandedInColumns[] = {"submitted", "submitted at", "submitted_at", "submission time",
                                            "handed in", "handed_in",    "timestamp"};

// A hand-in time as an export writes it, in nanoseconds: parse_utc's form, or with a space where
// the T goes (a spreadsheet's), a "Z" or " UTC" optional there.
std::optional<std::int64_t> parse_lms_time(std::string cell) {
  if (cell.size() > 10 && cell[10] == ' ') cell[10] = 'T';
  if (cell.size() > 4 && cell.compare(cell.size() - 4, 4, " UTC") == 0) cell.resize(cell.size() - 4);
  if (!cell.empty() && cell.back() != 'Z' && cell.find('+', 10) == std::string::npos &&
      cell.find('-', 10) == std::string::npos)
    cell += 'Z';
  auto us = parse_utc(cell);
  if (!us) return std::nullopt;
  return *us * 1000;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_roster(std::string_view csv, const std::string& name,
                                                        const std::string& id_field) {
  auto roster = read_roster(csv, name, id_field);
  if (!roster) return roster.error();
  return std::move(roster->students);
}

Result<Roster> read_roster(std::string_view csv, const std::string& name, const std::string& id_field) {
  if (csv.substr(0, 3) == "\xEF\xBB\xBF") csv.remove_prefix(3);  // a spreadsheet's byte-order mark
  Roster roster;
  std::map<std::string, std::string>& out = roster.students;
  std::optional<char> sep;
  std::size_t line_no = 0;
  std::size_t folder_at = 0;
  std::size_t id_at = 1;
  std::size_t time_at = std::string::npos;
  std::string time_column;
  bool header = false;
  for (std::size_t at = 0; at < csv.size();) {
    const std::size_t end = std::min(csv.find('\n', at), csv.size());
    std::string line(csv.substr(at, end - at));
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = name + ": line " + std::to_string(line_no);
    if (!sep) {
      sep = separator_of(line);
      // A header names the columns, in any case: the folder's ("folder" or "submission") and the id
      // field's; other columns (names, sections) are left alone.
      const std::vector<std::string> columns = cells_of(line, *sep);
      std::vector<std::string> names = columns;
      for (std::string& n : names) n = lowered(n);
      const auto named = [&](const std::string& column) {
        return static_cast<std::size_t>(std::find(names.begin(), names.end(), lowered(column)) - names.begin());
      };
      folder_at = std::min(named("folder"), named("submission"));
      if (folder_at < names.size()) {
        header = true;
        id_at = id_field == "folder" ? folder_at : named(id_field);
        if (id_at == names.size()) id_at = named("student");  // a column that names no field: the id field's
        if (id_at == names.size())
          return Error{where + ": no column " + id_field +
                       " (the id field: --id-field or the rubric's id_field); the columns are " + listed(columns) +
                       ". Say --id-field with the column that names each student"};
        for (const char* column : kHandedInColumns)
          if (time_at == std::string::npos && named(column) < names.size()) {
            time_at = named(column);
            time_column = columns[time_at];
          }
        continue;
      }
      folder_at = 0;
    }
    const std::vector<std::string> cells = cells_of(line, *sep);
    if (!header && cells.size() != 2)
      return Error{where + ": expected 2 cells, the folder and the " + id_field + ", or a first line naming the " +
                   "columns (folder and " + id_field + ")"};
    if (cells.size() <= std::max(folder_at, id_at))
      return Error{where + ": expected a cell in column " + std::to_string(std::max(folder_at, id_at) + 1) +
                   ", as the header names; found " + std::to_string(cells.size())};
    const std::string& folder = cells[folder_at];
    const std::string& student = cells[id_at];
    if (folder.empty() || student.empty())
      return Error{where + ": expected the folder and the " + id_field + ", both named"};
    if (!out.emplace(folder, student).second) return Error{where + ": folder " + folder + " is named twice"};
    if (time_at < cells.size() && !cells[time_at].empty()) {
      const auto when = parse_lms_time(cells[time_at]);
      if (!when)
        return Error{where + ": " + time_column + ": '" + cells[time_at] +
                     "' is not a time in UTC like 2026-11-03T14:22:05Z (or 2026-11-03 14:22:05)"};
      roster.handed_in_ns.emplace(folder, *when);
    }
  }
  return roster;
}

std::string student_key(const std::string& raw) {
  auto id = student_id(raw);
  return id ? *id : raw;
}

std::map<std::string, std::string> roster_without_folder(const std::map<std::string, std::string>& roster,
                                                         const std::vector<std::string>& folders) {
  std::set<std::string> handed_in;
  for (const std::string& f : folders)
    if (const auto named = roster.find(f); named != roster.end()) handed_in.insert(student_key(named->second));
  std::map<std::string, std::string> out;
  for (const auto& [folder, student] : roster)  // in byte order of folders: a student's first
    if (handed_in.insert(student_key(student)).second) out.emplace(folder, student);
  return out;
}

}  // namespace cb::grade

#include "cb/grade/program_words.h"

#include <regex>
#include <vector>

#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

std::string trimmed(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e + 1 - b));
}

// The file's last part: a box's paths say nothing to the student ("/box/src/breaker.go").
std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool matches(std::string_view line, const std::regex& re, std::cmatch& m) {
  return std::regex_search(line.data(), line.data() + line.size(), m, re);
}

// A compiler's first error: "F:L[:C]: error: ..." (gcc, clang, javac) or go's "F.go:L:C: ...".
std::string compiler_error(const std::vector<std::string_view>& lines) {
  static const std::regex c_like(R"(^(\S+?):(\d+)(:\d+)?: (fatal )?error: )");
  static const std::regex go_build(R"(^(\S+\.go):(\d+):(\d+): )");
  std::cmatch m;
  for (std::string_view l : lines)
    if (matches(l, c_like, m) || matches(l, go_build, m))
      return base_name(m[1].str()) + std::string(l.substr(static_cast<std::size_t>(m.length(1))));
  return {};
}

// Python: the traceback's last line, at its innermost frame's file and line.
std::string python_exception(const std::vector<std::string_view>& lines) {
  static const std::regex frame(R"re(^\s*File "([^"]+)", line (\d+))re");
  std::size_t start = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("Traceback (most recent call last):", 0) == 0) start = i;
  if (start == lines.size()) return {};
  std::string where;
  std::string what;
  std::cmatch m;
  for (std::size_t i = start + 1; i < lines.size(); ++i) {
    if (matches(lines[i], frame, m)) {
      where = base_name(m[1].str()) + ", line " + m[2].str();
    } else if (!lines[i].empty() && lines[i][0] != ' ' && lines[i][0] != '\t') {
      what = trimmed(lines[i]);
      break;
    }
  }
  if (what.empty()) return {};
  return where.empty() ? what : where + ": " + what;
}

// Java, Node and Go: the exception or panic line, then the first frame that names a file.
std::string raised(const std::vector<std::string_view>& lines) {
  static const std::regex head(R"(^(Exception in thread "[^"]*" |panic: |(\w*Error|\w*Exception)(: |$)))");
  static const std::regex java_frame(R"(^\s+at .*\(([^():]+\.java):(\d+)\))");
  static const std::regex node_frame(R"(^\s+at (?:.*\()?([^()\s]+\.[cm]?js):(\d+):\d+\)?$)");
  static const std::regex go_frame(R"(^\s+(\S+\.go):(\d+)( \+0x[0-9a-f]+)?$)");
  std::cmatch m;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!matches(lines[i], head, m)) continue;
    std::string what = trimmed(lines[i]);
    if (what.rfind("Exception in thread ", 0) == 0) what = what.substr(what.find("\" ") + 2);
    for (std::size_t j = i + 1; j < lines.size(); ++j)
      if (matches(lines[j], java_frame, m) || matches(lines[j], node_frame, m) || matches(lines[j], go_frame, m)) {
        // Go's runtime frames come first in a panic: the program's own file is the one to name.
        if (m[1].str().find("/usr/lib/go") != std::string::npos || m[1].str().find("/runtime/") != std::string::npos)
          continue;
        return what + " (" + base_name(m[1].str()) + ":" + m[2].str() + ")";
      }
    return what;
  }
  return {};
}

// A script saved with Windows line endings: sh, bash, node and python take each line's \r as the
// end of a name, and say so in words that never name it: raw ("python3\r: not found", "Cannot find
// module 'replay.js\r'") or quoted as source ("can't open file 'b.py\\r'", bash's "$'\\r'"). A \r
// that ends a line is only CRLF output.
bool carriage_return_in_a_name(std::string_view output) {
  for (std::size_t at = output.find('\r'); at != std::string_view::npos; at = output.find('\r', at + 1))
    if (at + 1 < output.size() && output[at + 1] != '\n') return true;
  return output.find("\\r'") != std::string_view::npos;
}

std::string carriage_returns_written(std::string said) {
  for (std::size_t at = said.find('\r'); at != std::string::npos; at = said.find('\r', at + 2))
    said.replace(at, 1, "\\r");
  return said;
}

std::string found_words(const std::vector<std::string_view>& lines, std::string_view output) {
  for (const auto& find : {compiler_error, python_exception, raised})
    if (std::string said = find(lines); !said.empty()) return said;
  return last_line(output);
}

}  // namespace

std::string program_words(std::string_view output) {
  std::string said = carriage_returns_written(found_words(lines_of(output), output));
  if (carriage_return_in_a_name(output))
    said +=
        " (a script of yours has Windows line endings: each line's \\r became part of a name; save run.sh "
        "and the files it runs with LF endings)";
  return said;
}

}  // namespace cb::grade

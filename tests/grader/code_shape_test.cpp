// The grader's shape, held where a change would quietly undo it: its folders are layers, each
// including only itself and those below it; cb-grade's main is flag parsing and one call; and no
// function of the project is longer than a reader can hold (120 lines).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

struct Function {
  std::string file;
  std::string name;
  std::size_t lines = 0;
};

// Functions defined at a namespace's level (this project does not indent inside a namespace),
// from the line that names them to the closing brace at the start of a line. Functions defined
// inside a class are short by the project's style and are not counted.
std::vector<Function> functions_in(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  static const std::regex starts(R"(^[A-Za-z_][^;]*\()");
  static const std::regex not_a_function(
      R"(^(namespace|using|struct|class|enum|template|typedef|static_assert|return)\b)");
  static const std::regex name(R"(([A-Za-z_0-9:~]+)\s*\()");
  std::vector<Function> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    // A definition on one line ends there: `int f() { return 1; }`.
    if (!std::regex_search(l, starts) || std::regex_search(l, not_a_function) || l.back() == ';' || l.back() == '}')
      continue;
    std::size_t open = i;
    while (open < lines.size() && !lines[open].ends_with("{") && !lines[open].ends_with(";")) ++open;
    if (open == lines.size() || !lines[open].ends_with("{")) continue;
    std::size_t close = open + 1;
    while (close < lines.size() && lines[close] != "}") ++close;
    std::smatch m;
    std::regex_search(l, m, name);
    out.push_back({std::filesystem::relative(file, CB_SOURCE_DIR).string(), m[1], close - i + 1});
    i = close;
  }
  return out;
}

std::vector<Function> functions_under(const std::string& dir) {
  std::vector<Function> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CB_SOURCE_DIR) + "/" + dir))
    if (e.path().extension() == ".cpp" || e.path().extension() == ".h")
      for (Function& f : functions_in(e.path())) out.push_back(std::move(f));
  return out;
}

// The grader's folders, bottom to top (docs/GRADER.md says what each holds).
constexpr const char* kLayers[] = {"lab", "record", "report", "conformance", "evidence", "checks", "class", "queue"};

TEST_CASE("code shape: no include inside the grader runs back up to a layer above") {
  const std::filesystem::path grader = std::filesystem::path(CB_SOURCE_DIR) / "grader";
  // Every header of the layers, public (cb/grade/NAME.h) or a folder's own (NAME.h): its layer.
  std::map<std::string, std::size_t> layer_of;
  for (std::size_t i = 0; i < std::size(kLayers); ++i)
    for (const auto& e : std::filesystem::recursive_directory_iterator(grader / kLayers[i]))
      if (e.path().extension() == ".h")
        layer_of[(e.path().parent_path().filename() == "grade" ? "cb/grade/" : "") + e.path().filename().string()] = i;
  REQUIRE(layer_of.size() > 30);
  static const std::regex include(R"re(#include "([^"]+)")re");
  std::string upward;
  std::size_t seen = 0;
  for (std::size_t i = 0; i < std::size(kLayers); ++i)
    for (const auto& e : std::filesystem::recursive_directory_iterator(grader / kLayers[i])) {
      if (e.path().extension() != ".h" && e.path().extension() != ".cpp") continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const auto found = layer_of.find(m[1]);
        if (found == layer_of.end()) continue;  // not the grader's: support/, sandbox/, flaky_server/
        ++seen;
        if (found->second > i)
          upward += "\n" + std::filesystem::relative(e.path(), grader).string() + " (" + kLayers[i] + ") includes " +
                    m[1].str() + " (" + kLayers[found->second] + ")";
      }
    }
  REQUIRE(seen > 100);  // the scan reads the grader's includes at all
  CHECK_MESSAGE(upward.empty(), "includes that run back up:" << upward);
}

TEST_CASE("code shape: no function of the project is over 120 lines") {
  std::vector<Function> found;
  for (const char* dir : {"engine", "flaky_server", "fleet", "grader", "sandbox", "src", "support", "examples"})
    for (Function& f : functions_under(dir)) found.push_back(std::move(f));
  REQUIRE(found.size() > 600);  // the scan sees the project's functions at all
  std::string over;
  for (const Function& f : found)
    if (f.lines > 120) over += "\n" + f.file + ": " + f.name + ", " + std::to_string(f.lines) + " lines";
  CHECK_MESSAGE(over.empty(), "too long:" << over);
}

TEST_CASE("code shape: cb-grade's main.cpp is flag parsing and one call, under 150 lines") {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/grader/cli/main.cpp");
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  REQUIRE(n > 0);
  CHECK(n < 150);
}

}  // namespace

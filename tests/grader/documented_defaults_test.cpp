// The defaults the docs write down are the program's: each `[--flag VALUE]` of GRADER.md's
// synopsis (VALUE a number or a size, not a placeholder) is the default `cb-grade --help` shows,
// and the sizes GRADER.md gives the box in words are its flags' defaults.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cb/flaky/endpoints.h"
#include "cb/grade/gather.h"
#include "cb/grade/jobs.h"
#include "process.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `--flag TYPE=DEFAULT` in CLI11's help: the flag's default as the program has it.
std::map<std::string, std::string> help_defaults(const std::string& help) {
  static const std::regex option(R"((--[a-z-]+) [A-Z]+[^=\n]*=(\S+))");
  std::map<std::string, std::string> out;
  for (auto it = std::sregex_iterator(help.begin(), help.end(), option); it != std::sregex_iterator(); ++it)
    out.emplace((*it)[1], (*it)[2]);
  return out;
}

// GRADER.md's synopsis: from its first code block, each [--flag VALUE] whose VALUE starts with a
// digit (a number, a size, a duration) or is a path from here (./cb), not a NAME to fill in.
std::map<std::string, std::string> synopsis_defaults(const std::string& doc) {
  const auto from = doc.find("```sh\ncb-grade ");
  REQUIRE(from != std::string::npos);
  const auto to = doc.find("```", from + 4);
  const std::string synopsis = doc.substr(from, to - from);
  static const std::regex given(R"(\[(--[a-z-]+) ([0-9][^\]\s|]*|\./[^\]\s|]*)\])");
  std::map<std::string, std::string> out;
  for (auto it = std::sregex_iterator(synopsis.begin(), synopsis.end(), given); it != std::sregex_iterator(); ++it)
    out.emplace((*it)[1], (*it)[2]);
  return out;
}

// Every mode's help: the defaults of all of cb-grade's flags (a flag means one thing in every
// mode that takes it).
std::map<std::string, std::string> program_defaults() {
  std::map<std::string, std::string> out;
  for (const std::vector<std::string>& mode : std::vector<std::vector<std::string>>{{},
                                                                                    {"class"},
                                                                                    {"regrade"},
                                                                                    {"merge"},
                                                                                    {"verify"},
                                                                                    {"queue", "push"},
                                                                                    {"queue", "work"},
                                                                                    {"queue", "status"},
                                                                                    {"queue", "collect"}}) {
    std::vector<std::string> argv{CB_GRADE_BIN};
    argv.insert(argv.end(), mode.begin(), mode.end());
    argv.emplace_back("--help");
    const auto help = cb::testing::run(argv);
    // A queue the build left out (no hiredis) has no help to read.
    if (help.exit_code != 0) continue;
    for (auto& [flag, value] : help_defaults(help.out)) out.emplace(flag, value);
  }
  return out;
}

TEST_CASE("documented defaults: GRADER.md's synopsis gives every flag the default cb-grade --help shows") {
  const auto has = program_defaults();
  REQUIRE(has.size() > 10);  // the help was read at all
  const auto said = synopsis_defaults(slurp(std::string(CB_SOURCE_DIR) + "/docs/GRADER.md"));
  REQUIRE(said.size() >= 12);
  for (const auto& [flag, value] : said) {
    INFO(flag);
    if (flag == "--heartbeat" && has.count(flag) == 0) continue;  // built without the queue
    REQUIRE(has.count(flag) == 1);
    CHECK(has.at(flag) == value);
  }
}

TEST_CASE(
    "documented defaults: GRADER.md's box is the size and the files --limit-box-size and --limit-box-files give") {
  const auto has = help_defaults(cb::testing::run({CB_GRADE_BIN, "--help"}).out);
  REQUIRE(has.count("--limit-box-size") == 1);
  REQUIRE(has.count("--limit-box-files") == 1);
  std::string size = has.at("--limit-box-size");  // "256M"
  REQUIRE(size.back() == 'M');
  size = size.substr(0, size.size() - 1) + " MiB";
  std::string files = has.at("--limit-box-files");  // "20000": the docs write 20,000
  if (files.size() > 3) files.insert(files.size() - 3, ",");
  const std::string doc = slurp(std::string(CB_SOURCE_DIR) + "/docs/GRADER.md");
  // Every "N MiB and M files" of the docs is the box's.
  static const std::regex box(R"(([0-9]+ MiB) and ([0-9,]+) files)");
  int seen = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), box); it != std::sregex_iterator(); ++it, ++seen) {
    CHECK((*it)[1] == size);
    CHECK((*it)[2] == files);
  }
  CHECK(seen >= 2);
}

// The lab's port is written once in code (flaky/endpoints.h). The scenarios that name it and
// every address of the lab's server in the docs (127.0.0.1 on a port of the 8000s: the other
// ports there are Redis's, or a free port shown as an example) say the same.
TEST_CASE("documented defaults: the lab's port is flaky::kDefaultPort in every scenario and every doc") {
  const std::string port = std::to_string(cb::flaky::kDefaultPort);
  static const std::regex address(R"(127\.0\.0\.1:(8[0-9]{3})\b)");
  int seen = 0;
  for (const char* folder : {"scenarios", "docs", "kits"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CB_SOURCE_DIR) + "/" + folder)) {
      if (!e.is_regular_file()) continue;
      const std::string text = slurp(e.path().string());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), address); it != std::sregex_iterator(); ++it) {
        ++seen;
        INFO(e.path().string());
        CHECK((*it)[1] == port);
      }
    }
  const std::string readme = slurp(std::string(CB_SOURCE_DIR) + "/README.md");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), address); it != std::sregex_iterator(); ++it) {
    ++seen;
    CHECK((*it)[1] == port);
  }
  CHECK(seen >= 20);  // the files were read at all
}

// A value as --help writes it: "60 s" is 60s, "2 GiB" 2G, "20,000" 20000.
std::string as_flag_value(std::string number, const std::string& unit) {
  std::erase(number, ',');
  if (unit == "GiB") return number + "G";
  if (unit == "MiB") return number + "M";
  return number + unit;
}

// The docs a user reads for what the program does now (PERFORMANCE.md records what was measured
// then, with the flags of then).
std::vector<std::filesystem::path> user_docs() {
  std::vector<std::filesystem::path> out{std::string(CB_SOURCE_DIR) + "/README.md"};
  for (const auto& e : std::filesystem::directory_iterator(std::string(CB_SOURCE_DIR) + "/docs"))
    if (e.path().extension() == ".md" && e.path().filename() != "PERFORMANCE.md") out.push_back(e.path());
  return out;
}

TEST_CASE("documented defaults: a default the docs give beside its flag, in words, is the one --help shows") {
  const auto has = program_defaults();
  // "`--conformance-timeout` (120 s)", "`--warm-up`, 20 s", "30 s of CPU (`--limit-cpu`", "256 open files
  // (`--limit-files`)": a number, its unit, and the flag beside it.
  static const std::regex after(R"(`(--[a-z-]+)`(?:,| \() ?([0-9][0-9,.]*) ?(s|ms|GiB|MiB)?[ );,])");
  static const std::regex before(R"(\b([0-9][0-9,.]*) ?(s|ms|GiB|MiB)?\b[a-zA-Z ]{0,16}\(`(--[a-z-]+)`)");
  int seen = 0;
  for (const auto& path : user_docs()) {
    const std::string text = slurp(path.string());
    const auto hold = [&](const std::string& flag, const std::string& value) {
      if (has.count(flag) == 0) return;  // a flag without a default, or one the build left out
      ++seen;
      INFO(path.filename().string() << ": " << flag << " " << value);
      CHECK(has.at(flag) == value);
    };
    for (auto it = std::sregex_iterator(text.begin(), text.end(), after); it != std::sregex_iterator(); ++it)
      hold((*it)[1], as_flag_value((*it)[2], (*it)[3]));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), before); it != std::sregex_iterator(); ++it)
      hold((*it)[3], as_flag_value((*it)[1], (*it)[2]));
  }
  CHECK(seen >= 8);
}

TEST_CASE("documented defaults: -j's rule and the traces a conformance part runs are the code's, wherever said") {
  static const std::regex per_cpu(R"(\b([0-9]+) per CPU)");
  static const std::regex per_memory(R"(one per ([0-9]+) MiB)");
  int seen = 0;
  for (const auto& path : user_docs()) {
    const std::string text = slurp(path.string());
    INFO(path.filename().string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), per_cpu); it != std::sregex_iterator(); ++it, ++seen)
      CHECK(std::stoi((*it)[1]) == cb::grade::kJobsPerCpu);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), per_memory); it != std::sregex_iterator();
         ++it, ++seen)
      CHECK(std::stoull((*it)[1]) == (cb::grade::kMemoryPerJob >> 20));
  }
  CHECK(seen >= 6);
  // A kit's README shows `cb-grade --conformance ...` with no --traces, and says how many it runs.
  static const std::regex traces(R"(cb-grade --conformance [^\n#]*# ([0-9]+) traces)");
  int kits = 0;
  for (const char* kit : {"python", "node", "cpp", "java", "go"}) {
    const std::string text = slurp(std::string(CB_SOURCE_DIR) + "/kits/" + kit + "/README.md");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), traces); it != std::sregex_iterator(); ++it, ++kits) {
      INFO(kit);
      CHECK(std::stoi((*it)[1]) == cb::grade::TraceSet{}.count);
    }
  }
  CHECK(kits == 5);
}

}  // namespace

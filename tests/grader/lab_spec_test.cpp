// The lab's spec (scenarios/lab.json, built into the grader): what it works out from the numbers,
// what it refuses, that every check of its catalogue has code and every message the grader says
// is in it, and that a lab with other numbers is run and graded by the same code.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cb/flaky/server.h"
#include "cb/grade/check.h"
#include "flaky_fixture.h"
#include "cb/grade/grade.h"
#include "cb/grade/lab_spec.h"
#include "process.h"
#include "report_json.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using grade::LabSpec;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

json lab_json() { return json::parse(read_text(std::string(CB_SCENARIOS) + "/lab.json")); }

// The lab with other numbers: window 8, judged from 4, at 40%, 2 s in OPEN, 2 trials.
json other_numbers() {
  json lab = lab_json();
  auto& m = lab["breakers"]["main"];
  m["window_size"] = 8;
  m["minimum_calls"] = 4;
  m["failure_rate"] = 40;
  m["wait_in_open"] = "2s";
  m["permitted_in_half_open"] = 2;
  return lab;
}

LabSpec parsed(const json& j) {
  auto s = grade::parse_lab_spec(j.dump(), "lab.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  return std::move(*s);
}

std::string error_of(const json& j) {
  auto s = grade::parse_lab_spec(j.dump(), "lab.json");
  REQUIRE(!s.ok());
  return s.error().message;
}

TEST_CASE("lab spec: the grader's built-in spec is scenarios/lab.json") {
  CHECK(grade::embedded_lab_spec_text() == read_text(std::string(CB_SCENARIOS) + "/lab.json"));
  CHECK(grade::lab_spec().steps() == 8);
}

TEST_CASE("lab spec: the trip is worked out from the numbers - the lab's opens on the 3rd failure, at 3 of 6") {
  const LabSpec& s = grade::lab_spec();
  CHECK(s.trip_at == 3);
  CHECK(s.trip_failures == 3);
  CHECK(s.trip_calls == 6);
  CHECK(s.trip_at_gt == 4);  // 3 of 6 is exactly 50%: > waits for 4 of 7
  CHECK(s.step_title(3) == "5 calls to /always500 open it on the 3rd failure");
  CHECK(s.fill(grade::find_check("s2.window")->title) == "state.json: \"window_size\" is 10");

  const LabSpec other = parsed(other_numbers());
  // 3 successes, then 1 of 4 = 25%, 2 of 5 = 40% >= 40%: the 2nd; > waits for 3 of 6.
  CHECK(other.trip_at == 2);
  CHECK(other.trip_failures == 2);
  CHECK(other.trip_calls == 5);
  CHECK(other.trip_at_gt == 3);
  CHECK(other.step_title(3) == "5 calls to /always500 open it on the 2nd failure");
  CHECK(other.step_title(5) == "After the 2 s cool-down, one call finds it HALF_OPEN");
  CHECK(other.step_title(6) == "Successful trials in HALF_OPEN close it (2 permitted)");
  CHECK(other.fill("{trip_failures} of {trip_calls} is exactly {failure_rate}%") == "2 of 5 is exactly 40%");
}

TEST_CASE("lab spec: what it refuses is named by file and field") {
  json missing = lab_json();
  missing["breakers"]["main"].erase("minimum_calls");
  CHECK(error_of(missing) == "lab.json: breakers.main.minimum_calls: missing (the lab spec writes it out)");

  json never = lab_json();
  never["breakers"]["main"]["failure_rate"] = 100;  // 5 failures after 3 successes never reach 100%
  CHECK(error_of(never) ==
        "lab.json: breakers.main: these numbers never open the breaker within step 3's 5 "
        "failing calls");

  json renamed = lab_json();
  renamed["steps"][2]["id"] = "burst";
  CHECK(error_of(renamed).find("lab.json: steps[2].id: expected \"trip\"") == 0);

  CHECK(grade::parse_lab_spec("{", "lab.json").error().message.rfind("lab.json: ", 0) == 0);
}

TEST_CASE("lab spec: every check is well formed, and what it needs was decided before it") {
  const LabSpec& spec = grade::lab_spec();
  std::set<std::string_view> ids;
  for (int step = 1; step <= spec.steps(); ++step) {
    std::set<const grade::CheckDef*> before;
    REQUIRE(!grade::checks_of_step(step).empty());
    for (const grade::CheckDef* c : grade::checks_of_step(step)) {
      CAPTURE(c->id);
      CHECK(ids.insert(c->id).second);  // one check of each id
      CHECK(c->id.rfind("s" + std::to_string(step) + ".", 0) == 0);
      // A body, or a file's contract, judged by the one rule for all files: never both, never neither.
      CHECK((c->body == nullptr) == (c->contract != grade::FileRole::None));
      CHECK((c->id.find("_contract") != std::string_view::npos) == (c->contract != grade::FileRole::None));
      const std::string title = spec.fill(c->title);
      CHECK((title.find('{') == std::string::npos || c->id == "s1.count"));  // {"count": N} is JSON
      for (const grade::Need& n : c->needs) {
        if (n.kind != grade::Need::Kind::Check) continue;
        CAPTURE(n.check->id);
        CHECK(before.count(n.check) == 1);            // a check of its own step, listed before it
        CHECK(c->contract == grade::FileRole::None);  // a file's contract needs nothing
      }
      before.insert(c);
    }
  }
  CHECK(grade::checks_of_step(spec.steps() + 1).empty());
}

// C++ string literals of a source file (comments skipped; raw strings whole).
std::vector<std::string> literals(const std::string& src) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src.compare(i, 2, "//") == 0) {
      i = src.find('\n', i);
      if (i == std::string::npos) break;
    } else if (src.compare(i, 2, "/*") == 0) {
      i = src.find("*/", i);
      if (i == std::string::npos) break;
      ++i;
    } else if (src[i] == 'R' && i + 1 < src.size() && src[i + 1] == '"') {
      const std::size_t open = src.find('(', i);
      const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = src.find(close, open);
      out.push_back(src.substr(open + 1, end - open - 1));
      i = end + close.size() - 1;
    } else if (src[i] == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(src[i - 1]))) {
      continue;  // a digit separator: 1'000
    } else if (src[i] == '"' || src[i] == '\'') {
      const char q = src[i];
      std::string lit;
      for (++i; i < src.size() && src[i] != q; ++i) {
        if (src[i] == '\\') ++i;
        lit += src[i];
      }
      if (q == '"') out.push_back(lit);
    }
  }
  return out;
}

// Every C++ source of the project's libraries and programs, by its path from the repository's
// top, with its string literals.
std::map<std::string, std::vector<std::string>> source_literals() {
  std::map<std::string, std::vector<std::string>> out;
  for (const char* dir : {"support", "engine", "sandbox", "flaky_server", "grader", "fleet", "src"}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CB_SOURCE_DIR) + "/" + dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".cpp" || ext == ".h")
        out[std::filesystem::relative(e.path(), CB_SOURCE_DIR).string()] = literals(read_text(e.path()));
    }
  }
  return out;
}

// A line `path: "literal" has "word"` for every literal of `sources` that holds one of `banned`.
std::string holding(const std::map<std::string, std::vector<std::string>>& sources,
                    const std::vector<std::string>& banned) {
  std::string found;
  for (const auto& [path, lits] : sources)
    for (const std::string& lit : lits)
      for (const std::string& b : banned)
        if (lit.find(b) != std::string::npos) found += path + ": \"" + lit + "\" has \"" + b + "\"\n";
  return found;
}

TEST_CASE("lab spec: the lab's numbers, step titles and file names are written in scenarios/lab.json alone") {
  const LabSpec& spec = grade::lab_spec();
  std::vector<std::string> banned;
  for (std::string_view f : spec.files.all()) banned.emplace_back(f);
  for (int n = 1; n <= spec.steps(); ++n) banned.emplace_back(spec.step_title(n));
  // The values with their units.
  const auto& v = spec.values();
  for (const std::string& phrase :
       {v.at("window") + " calls", v.at("failure_rate") + "%", v.at("wait") + " cool-down",
        "the " + v.at("trip_at_nth"), v.at("trials") + " trials", v.at("trials") + " permitted",
        "blocked=" + v.at("blocked"), "all " + v.at("bad"), v.at("fast") + " /fast", "< " + v.at("max_refusal_ms"),
        ">= " + v.at("trials"), ">= " + v.at("wait")})
    banned.push_back(phrase);

  const std::string found = holding(source_literals(), banned);
  CHECK_MESSAGE(found.empty(), found);
}

TEST_CASE("lab spec: every title and message of the checks names only the lab's values and the moment's") {
  const LabSpec& spec = grade::lab_spec();
  // What is left in braces is what the code fills in at the moment it speaks.
  static const std::set<std::string> at_the_moment{"got",       "got_nth", "got_trials", "line", "open_line", "stamp",
                                                   "precision", "low_nth", "low",        "high", "other"};
  const std::regex name(R"(\{([a-z_]+)\})");
  std::size_t templates = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CB_SOURCE_DIR) + "/grader/checks")) {
    if (e.path().extension() != ".cpp") continue;
    for (const std::string& lit : literals(read_text(e.path()))) {
      if (!std::regex_search(lit, name)) continue;
      ++templates;
      const std::string filled = spec.fill(lit);
      CAPTURE(filled);
      for (std::sregex_iterator it(filled.begin(), filled.end(), name), end; it != end; ++it)
        CHECK(at_the_moment.count((*it)[1].str()) == 1);
    }
  }
  CHECK(templates > 50);  // the scan sees the titles and messages at all
}

// A kit's code with its comments (and a Python file's docstrings) taken out: what it does, not
// what it says to its reader.
std::string kit_code(const std::filesystem::path& file) {
  std::string text = read_text(file);
  if (file.extension() == ".py") {
    text = std::regex_replace(text, std::regex(R"re("""[\s\S]*?""")re"), "");
    return std::regex_replace(text, std::regex("#[^\n]*"), "");
  }
  return std::regex_replace(text, std::regex(R"((^|\s)//[^\n]*)"), "$1");
}

TEST_CASE("lab spec: the kits take the server, its paths and the file names from lab-settings.json") {
  const LabSpec& spec = grade::lab_spec();
  std::vector<std::string> banned{std::to_string(cb::flaky::kDefaultPort), std::string(cb::flaky::path::kCount)};
  for (const std::string& p : {spec.script.fast_path, spec.script.fail_path, spec.script.bad_path})
    banned.push_back("\"" + p + "\"");  // as a string of its own: "/fast", not "/fast_path"
  for (std::string_view f : spec.files.all()) banned.emplace_back(f);
  std::string found;
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CB_SOURCE_DIR) + "/kits")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".py" && ext != ".js" && ext != ".cpp" && ext != ".hpp" && ext != ".sh") continue;
    ++files;
    const std::string code = kit_code(e.path());
    for (const std::string& b : banned)
      if (code.find(b) != std::string::npos)
        found += std::filesystem::relative(e.path(), CB_SOURCE_DIR).string() + " has " + b + "\n";
  }
  CHECK(files >= 15);
  CHECK_MESSAGE(found.empty(), found);
}

TEST_CASE("lab spec: the number of the lab's steps is written in cb/grade/lab_steps.h alone") {
  const std::string found = holding(source_literals(), {"1-8", "8 steps", "eight steps", "steps 1 to 8"});
  CHECK_MESSAGE(found.empty(), found);
}

TEST_CASE("lab spec: the flaky server's port and paths are written in cb/flaky/endpoints.h alone") {
  // Each as a literal of its own or inside one ("http://127.0.0.1:8110", "/admin/record?since=").
  const std::vector<std::string> banned{"8110",  "/fast",   "/always500", "/bad",     "/count", "/slow",
                                        "/hang", "/toggle", "/garbage",   "/status/", "/admin"};
  auto sources = source_literals();
  CHECK(sources.erase("flaky_server/include/cb/flaky/endpoints.h") == 1);
  const std::string found = holding(sources, banned);
  CHECK_MESSAGE(found.empty(), found);
}

// ---- A lab of other numbers, run by cb-lab and graded by cb-grade ----------------------------

Ran grade_with(const TempDir& out, const Flaky& f, const std::string& spec_path) {
  std::vector<std::string> argv{CB_GRADE_BIN, "--dir", out.path(), "--server", f.url, "--format", "json"};
  if (!spec_path.empty()) {
    argv.emplace_back("--spec");
    argv.push_back(spec_path);
  }
  return run(argv);
}

TEST_CASE("lab spec: a lab of other numbers passes 8/8 on its own spec - and fails where one number differs") {
  Flaky f;
  TempDir out;
  TempDir specs;
  const json lab = other_numbers();
  specs.write("lab.json", lab.dump(2));
  const Ran ran =
      run({CB_LAB_BIN, "run", "--dir", out.path(), "--server", f.url, "--scenario", specs / "lab.json"}, {}, {}, 60s);
  CAPTURE(ran.out);
  REQUIRE(ran.exit_code == 0);  // cb-lab grades its run on the spec it ran
  CHECK(ran.out.find("open it on the 2nd failure") != std::string::npos);

  const Ran own = grade_with(out, f, specs / "lab.json");
  CAPTURE(own.out);
  CHECK(own.exit_code == 0);
  const json report = json::parse(own.out);
  CHECK(report["score"] == 8);
  CHECK(report["steps"][2]["title"] == "5 calls to /always500 open it on the 2nd failure");
  const auto checks = checks_by_id(report);
  CHECK(checks.at("s3.trip")["name"] == "the breaker opened on the 2nd /always500");
  CHECK(checks.at("s6.trials")["name"] == "at least 2 successful trial calls reached the server");
  CHECK(checks.at("s5.waited")["name"] == "the first call after the breaker opened came at least 2 s later");

  // The same run against the lab's own numbers: it reports and follows another set, which is
  // said once (s1.numbers), not as a wrong trip, a short wait and too few trials.
  const Ran builtin = grade_with(out, f, "");
  CHECK(builtin.exit_code == 1);
  const json builtin_report = json::parse(builtin.out);
  const auto lab_checks = checks_by_id(builtin_report);
  CHECK(lab_checks.at("s1.numbers")["status"] == "fail");
  CHECK(lab_checks.at("s1.numbers")["message"] ==
        "state.json reports window_size 8 and permitted_in_half_open 2, and the breaker opened on the 2nd failure: "
        "these are the numbers of a different variant (window 8, opening on the 2nd failure, 2 trials), not the "
        "handout's numbers; run the lab with the lab-settings.json made for this student (cb-lab variant writes it)");
  CHECK(lab_checks.at("s3.trip")["status"] == "skip");
  for (const auto& step : builtin_report["steps"])
    if (step["step"] != 1) CHECK(step["status"] != "fail");

  // One number changed in the grader's expectations, the run unchanged: that step alone fails.
  struct Change {
    const char* field;
    json value;
    int step;
    const char* check;
    const char* says;
  };
  // (Trials or a window the program reports otherwise, with a trip that fits them, are another
  // variant's: that is said once, in step 1.)
  for (const Change& c : {Change{"failure_rate", 50, 3, "s3.trip", "expected the 3rd"},
                          Change{"wait_in_open", "3s", 5, "s5.waited", "the 3 s cool-down was not waited"},
                          Change{"permitted_in_half_open", 3, 1, "s1.numbers", "numbers of a different variant"},
                          Change{"window_size", 9, 1, "s1.numbers", "numbers of a different variant"}}) {
    CAPTURE(c.field);
    json changed = lab;
    changed["breakers"]["main"][c.field] = c.value;
    specs.write("changed.json", changed.dump(2));
    const Ran r = grade_with(out, f, specs / "changed.json");
    CHECK(r.exit_code == 1);
    const json changed_report = json::parse(r.out);
    std::vector<int> failed;
    for (const auto& step : changed_report["steps"])
      if (step["status"] == "fail") failed.push_back(step["step"].get<int>());
    CHECK(failed == std::vector<int>{c.step});
    const auto by_id = checks_by_id(changed_report);
    CHECK(by_id.at(c.check)["status"] == "fail");
    CHECK(by_id.at(c.check)["message"].get<std::string>().find(c.says) != std::string::npos);
  }
}

}  // namespace
}  // namespace cb::testing

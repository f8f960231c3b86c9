// The HTML page's step labels: each is read as the step of the line it sits by, so each sits by
// its own line (right or left of it), or is joined to it by a leader. A run whose steps 5 to 8
// come a few microseconds apart once had "6 FAIL" beside step 7's line.
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "cb/grade/class_page.h"
#include "cb/grade/format.h"
#include "cb/grade/grade.h"
#include "evidence_of.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

Report crowded_run() {
  Report r;
  r.dir = "out";
  r.server = "http://127.0.0.1:8110";
  const std::int64_t t0 = 1'700'000'000'000'000;
  // Steps 1-4 spread out; 5, 6, 7 and 8 within a few microseconds of each other.
  const std::int64_t at[] = {0, 1000, 2000, 3000, 3'003'000, 3'003'002, 3'003'004, 3'003'006};
  for (int n = 1; n <= 8; ++n) {
    StepReport s;
    s.step = n;
    s.title = "step " + std::to_string(n);
    s.status = n == 6 ? Status::Fail : Status::Pass;
    if (n == 6)
      s.checks.push_back({"s6.trials", "trials", Status::Fail, "one trial closed it", nullptr, nullptr, true, {}});
    r.steps.push_back(s);
    r.timeline.requests.push_back({static_cast<std::uint64_t>(n), t0 + at[n - 1], 0.01, "/fast", 200, n});
  }
  return r;
}

TEST_CASE("html: every step label sits by its own line, or is joined to it") {
  const std::string page = render(crowded_run(), Format::Html, false);
  const std::regex step(
      R"re(<g class="step" data-step="(\d)"[^>]*><line class="stepline" x1="([\d.]+)"[^>]*/>(<path class="leader"[^>]*/>)?<text class="steplabel[^"]*" x="([\d.]+)"[^>]*?( text-anchor="end")?>([^<]*)</text>)re");
  int seen = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), step); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    ++seen;
    const double line = std::stod(m[2]);
    const double label = std::stod(m[4]);
    const double width = 7.5 * static_cast<double>(m[6].str().size());
    // Right of its line, or (anchored at its end) ending at it.
    const bool beside = m[5].matched ? label >= line - 2.01 && label <= line + 0.01
                                     : (label >= line - 0.01 && label <= line + 2.01) ||
                                           (label + width >= line - 2.01 && label + width <= line + 0.01);
    CAPTURE(m[1].str());
    CAPTURE(m[6].str());
    CHECK((beside || m[3].matched));
  }
  CHECK(seen == 8);
}

TEST_CASE("html: steps a program never reached share one label, inside the picture") {
  // A breaker that hung in HALF_OPEN: steps 1-4 in the record, 5-8 never reached, all drawn at
  // the axis's end, where four labels stacked ran off the picture's edge.
  Report r = crowded_run();
  r.timeline.requests.resize(4);
  for (StepReport& s : r.steps)
    if (s.step >= 5) {
      s.status = Status::Fail;
      s.checks = {
          {"s" + std::to_string(s.step) + ".x", "x", Status::Fail, "never reached", nullptr, nullptr, true, {}}};
    }
  const std::string page = render(r, Format::Html, false);
  const std::regex label(R"re(<text class="steplabel[^"]*" x="([\d.]+)"[^>]*?( text-anchor="end")?>([^<]*)</text>)re");
  int labels = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), label); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    ++labels;
    const double x = std::stod(m[1]);
    const double width = 7.5 * static_cast<double>(m[3].str().size());
    CAPTURE(m[3].str());
    CHECK((m[2].matched ? x : x + width) <= 1100);  // the picture's width
    CHECK((m[2].matched ? x - width : x) >= 0);
  }
  CHECK(labels == 5);  // 1, 2, 3, 4, and one for 5 to 8
  CHECK(page.find("5 FAIL [1] \xc2\xb7 6 FAIL [2] \xc2\xb7 7 FAIL [3] \xc2\xb7 8 FAIL [4]") != std::string::npos);
  // Every step is still there to be found by its number.
  for (int n = 1; n <= 8; ++n) CHECK(page.find("data-step=\"" + std::to_string(n) + "\"") != std::string::npos);
}

// A refused call never reaches the server, and only cb-lab's own run knew when each was: the
// grader's page drew none. The record and the files say how many there were, and between which
// requests: step 3's calls that never arrived, and fastfail.txt's blocked= between the two
// /count reads of step 4.
TEST_CASE("html: the refusals the record and the files show are drawn, by count, where they were") {
  const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
  auto dir = SubmissionDir::open(good);
  REQUIRE(dir.ok());
  auto record = parse_record(cb::testing::slurp(good + "/record.json"));
  REQUIRE(record.ok());
  const Report r = grade_steps(cb::testing::evidence_of(*dir, *record), GradeOptions{});
  const std::string page = render(r, Format::Html, false);
  CHECK(page.find("<g class=\"refused-group\" data-count=\"2\">") != std::string::npos);
  CHECK(page.find("<g class=\"refused-group\" data-count=\"10\">") != std::string::npos);
  CHECK(page.find("fastfail.txt: blocked=10 between the two /count reads") != std::string::npos);
  CHECK(page.find("refused (not sent)") != std::string::npos);
  // Which numbers the page is on, as every report says first.
  CHECK(page.find("Graded on the handout&apos;s numbers (window 10, minimum 5, 50%, 3 s, 3 trials).") !=
        std::string::npos);
}

// A submission the grader itself failed three times is nothing its student did: the class page
// kept it among "not graded" with the folders that could not be graded as handed in.
TEST_CASE("html: the class page sets the grader's own failures apart from the students'") {
  ClassPage page;
  page.title = "cls";
  BatchRow broken;
  broken.submission = "bob";
  broken.status = RowStatus::Error;
  broken.fault = Fault::Program;
  broken.error = "bob/cb: a link";
  BatchRow stalled;
  stalled.submission = "cy";
  stalled.status = RowStatus::NotGraded;
  stalled.fault = Fault::Grader;
  stalled.error = "not graded: the grader stalled for 10.2 s during the lab run (tried 3 times)";
  page.rows = {broken, stalled};
  const std::string html = class_page_html(page);
  CHECK(html.find("<div><b>1</b>not graded</div>") != std::string::npos);
  CHECK(html.find("<div><b>1</b>the grader failed</div>") != std::string::npos);
  const auto apart = html.find("Not graded: the grader's failure, not the students'");
  REQUIRE(apart != std::string::npos);
  CHECK(html.find("<b>cy</b>", apart) != std::string::npos);
  CHECK(html.find("<b>bob</b>", apart) == std::string::npos);
  CHECK(html.find("--resume") != std::string::npos);
}

// Students graded on numbers of their own passed steps titled with their own numbers: the class
// page titles each step with what they share, N for the numbers, not one student's as everyone's.
TEST_CASE("html: the class page's step titles show N where the students' numbers differ") {
  const auto row = [](const std::string& name, const std::string& title) {
    BatchRow r;
    r.submission = name;
    r.status = RowStatus::Graded;
    Report report;
    StepReport s;
    s.step = 3;
    s.title = title;
    s.status = Status::Pass;
    report.steps.push_back(s);
    r.report = report;
    return r;
  };
  ClassPage page;
  page.title = "cls";
  page.rows = {row("ann", "5 calls to /always500 open it on the 3rd failure (50%)"),
               row("bob", "7 calls to /always500 open it on the 5th failure (62.5%)")};
  std::string html = class_page_html(page);
  CHECK(html.find(">N calls to /always500 open it on the Nth failure (N%)<") != std::string::npos);
  CHECK(html.find("on the 5th failure") == std::string::npos);
  page.rows = {row("ann", "5 calls to /always500 open it on the 3rd failure (50%)")};
  html = class_page_html(page);
  CHECK(html.find(">5 calls to /always500 open it on the 3rd failure (50%)<") != std::string::npos);
}

}  // namespace
}  // namespace cb::grade

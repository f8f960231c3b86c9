// The same run gets the same verdict wherever its stamps fall inside what they can mean. Each
// saved run is re-graded with its CLOSED->OPEN and HALF_OPEN->CLOSED stamps moved to every
// moment (50 us apart) between the request the transition followed and the next one the server
// saw, as the stamp a breaker would write then, truncated to the millisecond and not: every
// check's verdict, and what it counted, stays the same. (A busy machine moves those moments; a
// verdict that moved with them charged a `>` breaker to step 4 on some runs and to step 3 on
// others.)
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cb/grade/grade.h"
#include "evidence_of.h"
#include "cb/utc_time.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

namespace fs = std::filesystem;
using cb::testing::slurp;
using cb::testing::TempDir;

struct Window {
  std::int64_t after_us;   // the transition followed this answer ...
  std::int64_t before_us;  // ... and came before this arrival
};

std::int64_t wall(const std::string& text) { return *parse_utc(text); }

// Where each transition of the fixture's log truly lies: between the answer it judged and the
// next request the server saw.
std::map<std::string, Window> windows(const std::string& dir) {
  const auto record = nlohmann::json::parse(slurp(dir + "/record.json"));
  struct Req {
    std::string path;
    int status;
    std::int64_t arrived, answered;
  };
  std::vector<Req> reqs;
  for (const auto& e : record["entries"]) {
    const std::int64_t at = wall(e["wall"]);
    reqs.push_back(
        {e["path"], e.value("status", 0), at, at + static_cast<std::int64_t>(e["duration_ms"].get<double>() * 1000)});
  }
  // Each line's stamp, and where it ends (a stamp is worth its last digit).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> stamps;
  std::istringstream log(slurp(dir + "/transitions.log"));
  for (std::string line; std::getline(log, line);) {
    if (line.empty()) continue;
    const std::string stamp = line.substr(0, line.find(' '));
    const std::size_t digits = stamp.size() - stamp.find('.') - 2;  // between '.' and 'Z'
    std::int64_t unit = 1;
    for (std::size_t d = digits; d < 6; ++d) unit *= 10;
    stamps[line.substr(line.find(' ') + 1)] = {wall(stamp), wall(stamp) + unit};
  }
  std::map<std::string, Window> out;
  // CLOSED->OPEN: after the last /always500 of the burst (the next request is something else).
  for (std::size_t i = 0; i + 1 < reqs.size(); ++i)
    if (reqs[i].path == "/always500" && reqs[i + 1].path != "/always500") {
      out["CLOSED->OPEN"] = {reqs[i].answered, reqs[i + 1].arrived};
      break;
    }
  // HALF_OPEN->CLOSED: after the last trial answered before the fixture's own stamp ended.
  const auto [half_open, unused] = stamps.at("OPEN->HALF_OPEN");
  (void)unused;
  const std::int64_t closed_end = stamps.at("HALF_OPEN->CLOSED").second;
  for (std::size_t i = 0; i + 1 < reqs.size(); ++i)
    if (reqs[i].path == "/fast" && reqs[i].arrived >= half_open && reqs[i].answered < closed_end)
      out["HALF_OPEN->CLOSED"] = {reqs[i].answered, reqs[i + 1].arrived};
  return out;
}

// Every check's verdict, and what the placement checks counted (a measured time, such as the
// cool-down from the trip's stamp, moves with the stamp, and is no verdict).
std::map<std::string, std::string> verdicts(const std::string& dir, const Record& record) {
  auto sub = SubmissionDir::open(dir);
  REQUIRE(sub.ok());
  const Report report = grade_steps(cb::testing::evidence_of(*sub, record, ""), GradeOptions{});
  std::map<std::string, std::string> out;
  for (const StepReport& s : report.steps) {
    out["step " + std::to_string(s.step)] = to_string(s.status);
    for (const Check& c : s.checks) {
      const bool counts = c.id == "s3.trip" || c.id == "s4.none_reached" || c.id == "s6.closed_after_trials";
      out[c.id] = std::string(to_string(c.status)) + (counts ? " " + c.actual.dump() : "");
    }
  }
  return out;
}

void same_verdict_everywhere(const std::string& name) {
  const std::string fixture = std::string(CB_FIXTURES) + "/submissions/" + name;
  const auto record = parse_record(slurp(fixture + "/record.json"));
  REQUIRE(record.ok());
  const auto where = windows(fixture);
  REQUIRE(where.size() == 2);
  TempDir dir;
  for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json"}) fs::copy_file(fixture + "/" + f, dir / f);
  const std::string original = slurp(fixture + "/transitions.log");
  std::optional<std::map<std::string, std::string>> first;
  int graded = 0;
  for (const auto& [moved, w] : where) {
    const std::string transition = moved;  // a copy: CAPTURE's lambda cannot take a structured binding in clang 14
    for (std::int64_t t = w.after_us + 1; t < w.before_us; t += 50) {
      for (int digits : {3, 6}) {
        const std::int64_t stamp = digits == 3 ? t / 1000 * 1000 : t;
        std::string log;
        std::istringstream in(original);
        for (std::string line; std::getline(in, line);) {
          if (line.empty()) continue;
          const std::string what = line.substr(line.find(' ') + 1);
          log += (what == transition ? format_utc(stamp, digits) : line.substr(0, line.find(' '))) + " " + what + "\n";
        }
        dir.write("transitions.log", log);
        const auto got = verdicts(dir.path(), *record);
        if (!first) first = got;
        std::string differs;
        for (const auto& [id, v] : got)
          if (first->count(id) == 0 || first->at(id) != v)
            differs += id + ": " + (first->count(id) ? first->at(id) : "-") + " -> " + v + "\n";
        CAPTURE(transition);
        CAPTURE(log);
        CAPTURE(differs);
        CHECK(differs.empty());
        ++graded;
      }
    }
  }
  MESSAGE(name << ": the same verdicts on " << graded << " placements of its stamps");
  CHECK(graded > 10);
}

TEST_CASE("placement: a saved run's verdicts do not move with its stamps inside what they can mean") {
  for (const char* name : {"good", "wrong-operator", "closes-after-one-trial", "library-circuitbreaker"}) {
    SUBCASE(name) { same_verdict_everywhere(name); }
  }
}

// A saved run re-graded with its own state files and record, and `log` as its transitions.log.
Report regrade_with_log(const std::string& name, const std::string& log) {
  const std::string fixture = std::string(CB_FIXTURES) + "/submissions/" + name;
  const auto record = parse_record(slurp(fixture + "/record.json"));
  REQUIRE(record.ok());
  TempDir dir;
  for (const char* f : {"state.json", "fastfail.txt", "ignore4xx.json"}) fs::copy_file(fixture + "/" + f, dir / f);
  dir.write("transitions.log", log);
  auto sub = SubmissionDir::open(dir.path());
  REQUIRE(sub.ok());
  return grade_steps(cb::testing::evidence_of(*sub, *record, ""), GradeOptions{});
}

TEST_CASE("placement: a > breaker is charged to step 3, never to step 4, wherever its stamp falls") {
  // wrong-operator: the 4th /always500 reached the server and the 5th was refused. A stamp in the
  // 4th's millisecond alone would allow "opened on the 3rd, and let the 4th through while OPEN";
  // the record, which saw nothing more while OPEN, reads "opened on the 4th".
  // 19:28:54.851Z: the millisecond the 2nd, 3rd and 4th /always500 were answered in.
  const Report report = regrade_with_log(
      "wrong-operator",
      "2026-11-29T19:28:54.851Z CLOSED->OPEN\n2026-11-29T19:28:57.904Z OPEN->HALF_OPEN\n2026-11-29T19:28:57.909Z "
      "HALF_OPEN->CLOSED\n");
  CHECK(to_string(report.steps[2].status) == std::string("fail"));
  CHECK(to_string(report.steps[3].status) == std::string("pass"));
  const Check& trip = report.steps[2].checks.front();
  CHECK(trip.message.find("where the rules open") != std::string::npos);
  CHECK(trip.message.find("the record reads the 4th") != std::string::npos);
}

TEST_CASE("placement: a close the record cannot settle passes on the benefit of the doubt, and says so") {
  // good: the trials were answered at .905, .907 and .908 (ms). A close stamped .908Z may have
  // come after the 3rd (answered at .908013) or right after the 2nd: the student gets the 3rd,
  // in writing.
  const Report report = regrade_with_log(
      "good",
      "2026-11-29T19:28:54.852Z CLOSED->OPEN\n2026-11-29T19:28:57.904Z OPEN->HALF_OPEN\n2026-11-29T19:28:57.908Z "
      "HALF_OPEN->CLOSED\n");
  CHECK(report.passed);
  const Check& closed = report.steps[5].checks.back();
  CHECK(closed.id == "s6.closed_after_trials");
  CHECK(closed.status == Status::Pass);
  CHECK(closed.message ==
        "passed on the benefit of the doubt: HALF_OPEN->CLOSED (line 3) is stamped in milliseconds, which allows the "
        "close after the 3rd trial but also after the 2nd (answered within the stamp's last digit); stamp to the "
        "microsecond to decide");
  // A stamp that settles it says nothing more.
  const Report settled =
      regrade_with_log("good", slurp(std::string(CB_FIXTURES) + "/submissions/good/transitions.log"));
  CHECK(settled.steps[5].checks.back().message.empty());
}

// A record built by hand: each entry a path and its arrival, in milliseconds.
Record record_of(const std::vector<std::pair<std::string, double>>& requests) {
  Record r;
  r.epoch = 1;
  std::int64_t counted = 0;
  for (const auto& [path, t] : requests) {
    RecordEntry e;
    e.seq = r.entries.size() + 1;
    e.t_ms = t;
    e.wall_us = static_cast<std::int64_t>(t * 1000);
    e.method = "GET";
    e.path = path;
    e.outcome = "answered";
    e.counted = path != "/count";
    e.status = path == "/fast" ? 200 : path == "/always500" ? 500 : 200;
    e.duration_ms = 1.0;
    if (path == "/count") e.count = counted;
    counted += e.counted ? 1 : 0;
    r.entries.push_back(e);
  }
  r.count = static_cast<std::uint64_t>(counted);
  return r;
}

// On a server someone kept running, two /fast tried by hand came before the program's run: they
// were charged to it ("5 /fast answered 200 reached the server before the first /always500,
// expected 3"). The run begins at its step 1's /count after the pause; on the grader's own fresh
// server every request is the program's.
TEST_CASE("placement: requests a kept server saw before the run's first /count, after a pause, are not the run's") {
  std::vector<std::pair<std::string, double>> reqs{{"/fast", 0}, {"/fast", 400}, {"/count", 5000}};
  for (int i = 0; i < 3; ++i) reqs.emplace_back("/fast", 5001 + i);
  for (int i = 0; i < 5; ++i) reqs.emplace_back("/always500", 5010 + i);
  reqs.emplace_back("/count", 5020);
  const Record r = record_of(reqs);
  const LabRun kept = analyse(r, lab_spec(), true);
  CHECK(kept.before_run == 2);
  CHECK(kept.fast_before_first_500 == 3);
  CHECK(kept.lab.size() == 8);
  CHECK(kept.count_calls.size() == 2);
  CHECK(*kept.trip + kept.before_run + 1 == 10);  // what step 4's "before" reads: the /count's answer
  const LabRun fresh = analyse(r, lab_spec(), false);
  CHECK(fresh.before_run == 0);
  CHECK(fresh.fast_before_first_500 == 5);
  // A program that asks /count between its own calls, with no pause: all of it is the run.
  const Record own = record_of(
      {{"/count", 0}, {"/fast", 1}, {"/count", 2}, {"/fast", 3}, {"/count", 4}, {"/fast", 5}, {"/always500", 6}});
  const LabRun all = analyse(own, lab_spec(), true);
  CHECK(all.before_run == 0);
  CHECK(all.fast_before_first_500 == 3);
}

// A call that reached the server while OPEN is step 4's to charge (its before/after counts any
// path), once: step 5's wait is measured to the first call after step 4's closing /count, not to
// the leaked one ("the next call reached the server 0.004 s after the breaker opened", charged a
// second time), and the leaked call is no trial of step 6.
TEST_CASE("placement: a call leaked while OPEN is step 4's, not step 5's first call nor a trial") {
  std::vector<std::pair<std::string, double>> reqs{{"/count", 0}};
  for (int i = 0; i < 3; ++i) reqs.emplace_back("/fast", 1 + i);
  for (int i = 0; i < 5; ++i) reqs.emplace_back("/always500", 10 + i);
  reqs.emplace_back("/count", 20);  // step 4's before
  reqs.emplace_back("/fast", 24);   // leaked while OPEN (a program of its own calls /fast in step 4)
  reqs.emplace_back("/count", 30);  // step 4's after
  for (int i = 0; i < 3; ++i) reqs.emplace_back("/fast", 3100 + i);
  const LabRun run = analyse(record_of(reqs), lab_spec(), false);
  REQUIRE(run.gap_after_open_ms);
  CHECK(*run.gap_after_open_ms >= 3000);
  CHECK(run.trials.size() == 3);
  // Without step 4's closing /count, nothing tells the leaked call from the first trial.
  reqs.erase(reqs.begin() + 11);
  const LabRun unclosed = analyse(record_of(reqs), lab_spec(), false);
  REQUIRE(unclosed.gap_after_open_ms);
  CHECK(*unclosed.gap_after_open_ms < 3000);
}

}  // namespace
}  // namespace cb::grade

// The lab's checks, step by step: every rule of what a finished (or half-finished) lab must
// show, in one file. Numbers are the lab's own (seed 001): window 10, minimum 5, 50%, 3 s in
// OPEN, 3 trials; and the lab's script: 3 /fast, 5 /always500, 10 calls while OPEN, 10 /bad.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cb/grade/artifacts.h"
#include "cb/grade/grade.h"
#include "step_builder.h"

namespace cb::grade {
namespace {

constexpr int kFast = 3;
constexpr int kAlways500 = 3;   // of the 5 the lab sends: the breaker opens on the 3rd
constexpr int kBlocked = 10;
constexpr double kMaxRefusalMs = 50.0;
constexpr double kWaitMs = 3000.0;
constexpr int kTrials = 3;
constexpr int kBad = 10;
constexpr int kWindow = 10;

struct Inputs {
  const std::optional<Record>& record;
  std::string no_record_reason;
  std::optional<LabRun> run;
  Parsed<StateFile> state;
  Parsed<StateFile> ignore;
  Parsed<FastFail> fastfail;
  Parsed<std::vector<TransitionLine>> transitions;
};

template <class T, class F>
Parsed<T> read_file(const SubmissionDir& dir, const std::string& name, F parse) {
  Parsed<T> out;
  const FileRead f = dir.read(name);
  if (f.status != FileRead::Status::Ok) {
    out.problem = f.reason;
    return out;
  }
  if (f.bytes.empty()) {
    out.problem = name + " is empty";
    return out;
  }
  if (const auto bad = invalid_utf8_at(f.bytes); bad != std::string::npos) {
    out.problem = name + " is not UTF-8 text (an invalid byte at offset " + std::to_string(bad) + ")";
    return out;
  }
  auto parsed = parse(f.bytes);
  if (!parsed) {
    out.problem = name + ": " + parsed.error().message;
    return out;
  }
  out.ok = true;
  out.value = std::move(parsed).value();
  return out;
}

std::string quoted(const std::string& s) { return "\"" + s.substr(0, 40) + "\""; }

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", ms / 1000.0);
  return buf;
}

// "state.json: "state" is CLOSED", with the lab's most common slips as hints.
void expect_state(StepBuilder& s, const std::string& file, const StateFile& f, const std::string& want) {
  std::string message = file + ": \"state\" is " + quoted(f.state);
  if (upper(f.state) == want) {
    message += "; states are upper case: \"" + want + "\"";
  } else if (f.state == "HALF-OPEN" || f.state == "HALFOPEN") {
    message += "; the state is spelled \"HALF_OPEN\"";
  } else {
    message += ", expected \"" + want + "\"";
  }
  s.expect(f.state == want, file + ": \"state\" is \"" + want + "\"", message, want, f.state);
}

void expect_state_file(StepBuilder& s, const Parsed<StateFile>& p, const std::string& want) {
  if (const StateFile* f = s.file(p, "state.json follows the contract", {"state.json: \"state\" is \"" + want + "\""})) {
    expect_state(s, "state.json", *f, want);
  }
}

// Evidence checks are skipped, with the reason, when there is no record to judge them on.
const LabRun* evidence(StepBuilder& s, const Inputs& in, std::initializer_list<const char*> names) {
  s.on_evidence(true);
  if (in.run) return &*in.run;
  for (const char* n : names) s.skip(n, in.no_record_reason);
  return nullptr;
}

// ---- Step 1 ---------------------------------------------------------------------------------
void step1(StepBuilder& s, const Inputs& in, bool just_after) {
  s.on_evidence(true);
  if (!in.record) {
    s.skip("the flaky server answers", in.no_record_reason);
    return;
  }
  s.pass("the flaky server answers, with its record of every request");
  if (just_after) return;
  const auto& counts = in.run->count_calls;
  const bool answered = !counts.empty() && std::all_of(counts.begin(), counts.end(), [](const RecordEntry* e) {
    return e->status == 200 && e->count.has_value();
  });
  s.expect(answered, "/count was asked and answered {\"count\": N}",
           counts.empty() ? "the record has no /count request: fastfail.txt's before and after must come from /count"
                          : "a /count request was not answered with a count",
           nullptr, static_cast<std::uint64_t>(counts.size()));
}

// ---- Step 2 ---------------------------------------------------------------------------------
void step2(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    if (const StateFile* f = s.file(in.state, "state.json follows the contract",
                                    {"state.json: \"state\" is \"CLOSED\"", "state.json: \"failures\" is 0",
                                     "state.json: \"window_size\" is 10"})) {
      expect_state(s, "state.json", *f, "CLOSED");
      s.expect(f->failures == 0, "state.json: \"failures\" is 0",
               "state.json: \"failures\" is " + std::to_string(f->failures) + " after 3 successful calls", 0, f->failures);
      s.expect(f->window_size == kWindow, "state.json: \"window_size\" is 10",
               "state.json: \"window_size\" is " + std::to_string(f->window_size) + "; the lab's window is 10 calls",
               kWindow, f->window_size);
    }
  }
  const LabRun* run = evidence(s, in, {"the server received 3 /fast first"});
  if (run == nullptr) return;
  const auto fast = run->fast_before_first_500;
  std::string message = std::to_string(fast) + " /fast answered 200 reached the server before the first /always500";
  if (fast == 0 && run->lab.empty()) message = "the server saw no lab request at all: were the files written without calling it?";
  else if (fast > kFast) message += "; was the lab run more than once without a reset (POST /admin/reset)?";
  if (run->other_before_first_500 > 0)
    message += "; and " + std::to_string(run->other_before_first_500) + " other request(s) before it";
  s.expect(fast == kFast && run->other_before_first_500 == 0, "the server received 3 /fast first", message, kFast,
           static_cast<std::uint64_t>(fast));
}

// ---- Step 3 ---------------------------------------------------------------------------------
void step3(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    expect_state_file(s, in.state, "OPEN");
  } else if (const auto* t = s.file(in.transitions, "transitions.log follows the contract",
                                    {"transitions.log: the first transition is CLOSED->OPEN"})) {
    const bool ok = !t->empty() && t->front().from == "CLOSED" && t->front().to == "OPEN";
    s.expect(ok, "transitions.log: the first transition is CLOSED->OPEN",
             t->empty() ? "transitions.log has no transitions"
                        : "the first transition is " + t->front().from + "->" + t->front().to,
             "CLOSED->OPEN", t->empty() ? nlohmann::json(nullptr) : nlohmann::json(t->front().from + "->" + t->front().to));
  }
  const LabRun* run = evidence(s, in, {"the server received exactly 3 /always500"});
  if (run == nullptr) return;
  // The breaker's arithmetic: after 3 successes, failure 1 is 1 of 4 calls (under the minimum of
  // 5, not judged), failure 2 is 2 of 5 = 40%, failure 3 is 3 of 6 = 50% >= 50%: it opens, and
  // the 4th and 5th calls are refused.
  const auto n = run->first_burst_500;
  std::string message = std::to_string(n) + " /always500 reached the server, expected 3 of the 5";
  if (n == 4) message += ": a 4th got through, so the breaker compared with > instead of >= (3 of 6 is exactly 50%)";
  else if (n == 5) message += ": all 5 got through, so the breaker never opened (a 5-in-a-row rule, or no rate rule at all)";
  else if (n > 5) message += ": calls kept reaching the server after it should have opened";
  else if (n > 0) message += ": it opened before the window held the minimum of 5 calls (judging too early)";
  else message = "no /always500 reached the server";
  s.expect(n == kAlways500, "the server received exactly 3 /always500", message, kAlways500,
           static_cast<std::uint64_t>(n));
}

// ---- Step 4 ---------------------------------------------------------------------------------
void step4(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) expect_state_file(s, in.state, "OPEN");
  const FastFail* f = s.file(in.fastfail, "fastfail.txt follows the contract",
                             {"fastfail.txt: blocked=10", "fastfail.txt: before equals after", "fastfail.txt: max_ms < 50",
                              "fastfail.txt: before and after are /count answers from the server",
                              "fastfail.txt: before was taken after the breaker opened"});
  if (f == nullptr) return;
  s.expect(f->blocked == kBlocked, "fastfail.txt: blocked=10",
           "blocked=" + std::to_string(f->blocked) + ": the lab makes 10 calls while OPEN, and all 10 must be refused",
           kBlocked, f->blocked);
  const auto leaked = f->after - f->before;
  s.expect(leaked == 0, "fastfail.txt: before equals after",
           "before=" + std::to_string(f->before) + " after=" + std::to_string(f->after) + ": " + std::to_string(leaked) +
               " call(s) reached the server while the breaker was OPEN",
           f->before, f->after);
  char ms[64];
  std::snprintf(ms, sizeof ms, "%g", f->max_ms);
  s.expect(f->max_ms < kMaxRefusalMs, "fastfail.txt: max_ms < 50",
           std::string("max_ms=") + ms + " is not < 50: a refusal must not wait on the network", "< 50", f->max_ms);

  const LabRun* run = evidence(s, in, {"fastfail.txt: before and after are /count answers from the server",
                                       "fastfail.txt: before was taken after the breaker opened"});
  if (run == nullptr) return;
  // Two /count answers, before then after (one answer cannot be quoted twice). Equal answers
  // mean nothing was counted between them: the count never goes down.
  std::vector<std::int64_t> answers;
  for (const RecordEntry* c : run->count_calls)
    if (c->count) answers.push_back(*c->count);
  bool found = false;
  for (std::size_t i = 0; i < answers.size() && !found; ++i)
    if (answers[i] == f->before)
      for (std::size_t j = i + 1; j < answers.size() && !found; ++j) found = answers[j] == f->after;
  std::string list;
  for (std::size_t i = 0; i < answers.size() && i < 12; ++i) list += (i ? ", " : "") + std::to_string(answers[i]);
  s.expect(found, "fastfail.txt: before and after are /count answers from the server",
           answers.empty() ? "the server never answered /count: before and after were not measured"
                           : "the server answered /count with " + list + "; fastfail.txt quotes before=" +
                                 std::to_string(f->before) + " then after=" + std::to_string(f->after),
           nlohmann::json{{"before", f->before}, {"after", f->after}}, answers);
  // Taken after step 3: the count then is every lab request up to the trip (3 /fast and the
  // 3 /always500 in a correct run).
  const char* taken = "fastfail.txt: before was taken after the breaker opened";
  if (!run->trip) {
    s.fail(taken, "no /always500 reached the server, so the record shows no moment the breaker opened");
    return;
  }
  const auto expected_before = static_cast<std::int64_t>(*run->trip) + 1;
  s.expect(f->before == expected_before, taken,
           "before=" + std::to_string(f->before) + ", but " + std::to_string(expected_before) +
               " lab requests had reached the server when the breaker opened",
           expected_before, f->before);
}

// ---- Step 5 ---------------------------------------------------------------------------------
void step5(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    expect_state_file(s, in.state, "HALF_OPEN");
  } else if (const auto* t = s.file(in.transitions, "transitions.log follows the contract",
                                    {"transitions.log: OPEN->HALF_OPEN at least 3 s after CLOSED->OPEN"})) {
    const TransitionLine* opened = nullptr;
    const TransitionLine* half = nullptr;
    for (const auto& l : *t) {
      if (!opened && l.from == "CLOSED" && l.to == "OPEN") opened = &l;
      if (opened && !half && l.from == "OPEN" && l.to == "HALF_OPEN") half = &l;
    }
    const std::string name = "transitions.log: OPEN->HALF_OPEN at least 3 s after CLOSED->OPEN";
    if (!opened || !half) {
      s.fail(name, "transitions.log has no CLOSED->OPEN followed by OPEN->HALF_OPEN");
    } else if (!opened->at_us || !half->at_us) {
      s.skip(name, "transitions.log has no timestamps on these lines (they are optional)");
    } else {
      const double ms = static_cast<double>(*half->at_us - *opened->at_us) / 1000.0;
      s.expect(ms >= kWaitMs, name,
               "OPEN->HALF_OPEN (line " + std::to_string(half->line) + ") is " + seconds(ms) +
                   " after CLOSED->OPEN: the breaker must stay OPEN for its 3 s cool-down",
               ">= 3 s", seconds(ms));
    }
  }
  const LabRun* run = evidence(s, in, {"the first call after the breaker opened came at least 3 s later"});
  if (run == nullptr) return;
  const std::string name = "the first call after the breaker opened came at least 3 s later";
  if (!run->gap_after_open_ms) {
    s.fail(name, run->last_500 ? "no call reached the server after the breaker opened" : "the breaker never opened");
    return;
  }
  s.expect(*run->gap_after_open_ms >= kWaitMs, name,
           "the next call reached the server " + seconds(*run->gap_after_open_ms) +
               " after the breaker opened: the 3 s cool-down was not waited",
           ">= 3 s", seconds(*run->gap_after_open_ms));
}

// ---- Step 6 ---------------------------------------------------------------------------------
void step6(StepBuilder& s, const Inputs& in, bool) {
  if (const StateFile* f = s.file(in.state, "state.json follows the contract",
                                  {"state.json: \"state\" is \"CLOSED\"", "state.json: \"permitted_in_half_open\" >= 3"})) {
    expect_state(s, "state.json", *f, "CLOSED");
    s.expect(f->permitted_in_half_open >= kTrials, "state.json: \"permitted_in_half_open\" >= 3",
             "permitted_in_half_open=" + std::to_string(f->permitted_in_half_open) +
                 ": with fewer than 3 trials, one lucky call closes the breaker and it flaps",
             ">= 3", f->permitted_in_half_open);
  }
  const LabRun* run = evidence(s, in, {"at least 3 successful trial calls closed the breaker"});
  if (run == nullptr) return;
  const auto ok = static_cast<std::size_t>(std::count_if(run->trials.begin(), run->trials.end(), [](const RecordEntry* e) {
    return e->status && *e->status >= 200 && *e->status < 400;
  }));
  std::string message = std::to_string(ok) + " successful call(s) reached the server in HALF_OPEN";
  if (ok == 1) message += ": a single trial decides too soon and makes the breaker flap";
  s.expect(ok >= kTrials, "at least 3 successful trial calls closed the breaker", message, ">= 3",
           static_cast<std::uint64_t>(ok));
}

// ---- Step 7 ---------------------------------------------------------------------------------
void step7(StepBuilder& s, const Inputs& in, bool) {
  if (const StateFile* f = s.file(in.ignore, "ignore4xx.json follows the contract",
                                  {"ignore4xx.json: \"state\" is \"CLOSED\"", "ignore4xx.json: \"failures\" is 0"})) {
    expect_state(s, "ignore4xx.json", *f, "CLOSED");
    s.expect(f->failures == 0, "ignore4xx.json: \"failures\" is 0",
             "failures=" + std::to_string(f->failures) + ": a 400 is the caller's mistake, not the dependency's; 4xx must not count as failures",
             0, f->failures);
  }
  const LabRun* run = evidence(s, in, {"the server received all 10 /bad"});
  if (run == nullptr) return;
  std::string message = std::to_string(run->bad) + " /bad reached the server, expected all 10";
  if (run->bad < static_cast<std::size_t>(kBad) && run->bad > 0)
    message += ": the breaker refused the rest, so it opened on 400s (4xx counted as failures)";
  else if (run->bad > static_cast<std::size_t>(kBad))
    message += "; was the lab run more than once without a reset (POST /admin/reset)?";
  s.expect(run->bad == static_cast<std::size_t>(kBad), "the server received all 10 /bad", message, kBad,
           static_cast<std::uint64_t>(run->bad));
}

// ---- Step 8 ---------------------------------------------------------------------------------
void step8(StepBuilder& s, const Inputs& in, bool) {
  const char* exact = "transitions.log: exactly CLOSED->OPEN, OPEN->HALF_OPEN, HALF_OPEN->CLOSED";
  const char* timed = "transitions.log: timestamps increase, with the 3 s cool-down between the first two";
  const char* seen = "transitions.log: the server saw each transition happen";
  const auto* t = s.file(in.transitions, "transitions.log follows the contract", {exact, timed, seen});
  if (t == nullptr) return;
  std::vector<std::string> got;
  for (const auto& l : *t) got.push_back(l.from + "->" + l.to);
  const std::vector<std::string> want{"CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED"};
  std::string message;
  if (got.size() != want.size()) {
    message = std::to_string(got.size()) + " transition(s), expected 3";
  } else {
    for (std::size_t i = 0; i < want.size() && message.empty(); ++i)
      if (got[i] != want[i]) message = "line " + std::to_string((*t)[i].line) + " is " + got[i] + ", expected " + want[i];
  }
  if (!message.empty() && got.size() > 3) message += " (did the lab run more than once into the same log?)";
  s.expect(message.empty(), exact, message, want, got);
  if (!message.empty()) {
    s.skip(timed, "needs the three transitions in order");
    s.on_evidence(true);
    s.skip(seen, "needs the three transitions in order");
    return;
  }
  const auto& l = *t;
  if (!l[0].at_us || !l[1].at_us || !l[2].at_us) {
    s.skip(timed, "transitions.log has no timestamps (they are optional)");
    s.on_evidence(true);
    s.skip(seen, "transitions.log has no timestamps (they are optional)");
    return;
  }
  const double wait = static_cast<double>(*l[1].at_us - *l[0].at_us) / 1000.0;
  const bool increasing = *l[0].at_us <= *l[1].at_us && *l[1].at_us <= *l[2].at_us;
  s.expect(increasing && wait >= kWaitMs, timed,
           increasing ? "OPEN->HALF_OPEN is only " + seconds(wait) + " after CLOSED->OPEN; the cool-down is 3 s"
                      : "the timestamps go backwards",
           ">= 3 s", seconds(wait));

  const LabRun* run = evidence(s, in, {seen});
  if (run == nullptr) return;
  // The log's times against the server's: CLOSED->OPEN when the last /always500 was answered,
  // HALF_OPEN->CLOSED no earlier than the first trial. A second of slack covers clocks read at
  // slightly different moments; a log from another run is off by far more.
  if (!run->last_500 || run->trials.empty() || !run->lab[*run->last_500]->wall_us || !run->trials.front()->wall_us) {
    s.fail(seen, "the server's record has no tripping /always500 followed by trial calls for these transitions");
    return;
  }
  const std::int64_t trip = *run->lab[*run->last_500]->wall_us;
  const std::int64_t first_trial = *run->trials.front()->wall_us;
  constexpr std::int64_t kSlackUs = 1'000'000;
  const bool open_ok = *l[0].at_us >= trip - kSlackUs && *l[0].at_us <= trip + kSlackUs;
  const bool close_ok = *l[2].at_us >= first_trial - kSlackUs && *l[2].at_us <= first_trial + 60 * kSlackUs;
  s.expect(open_ok && close_ok, seen,
           !open_ok ? "CLOSED->OPEN is stamped " + seconds(static_cast<double>(*l[0].at_us - trip) / 1000.0) +
                          " away from the /always500 that opened it: the log is not from the run the server saw"
                    : "HALF_OPEN->CLOSED is stamped outside the trial calls the server saw: the log is not from this run");
}

using StepFn = void (*)(StepBuilder&, const Inputs&, bool);
constexpr StepFn kSteps[] = {nullptr, step1, step2, step3, step4, step5, step6, step7, step8};

constexpr const char* kTitles[] = {
    "",
    "The flaky server runs and /count answers",
    "3 calls to /fast leave the breaker CLOSED",
    "5 calls to /always500 open it on the 3rd failure",
    "10 calls while OPEN are refused at once, none reaching the server",
    "After the 3 s cool-down, one call finds it HALF_OPEN",
    "Successful trials in HALF_OPEN close it (3 permitted)",
    "A new breaker ignores 4xx: 10 x /bad leave it CLOSED with 0 failures",
    "transitions.log holds the three transitions in order",
};

}  // namespace

const char* step_title(int step) noexcept { return step >= 1 && step <= 8 ? kTitles[step] : ""; }

Report grade(const SubmissionDir& dir, const std::optional<Record>& record, const std::string& no_record_reason,
             const GradeOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  Inputs in{record, no_record_reason, std::nullopt, {}, {}, {}, {}};
  if (record) in.run = analyse(*record);
  in.state = read_file<StateFile>(dir, "state.json", parse_state_file);
  in.ignore = read_file<StateFile>(dir, "ignore4xx.json", parse_state_file);
  in.fastfail = read_file<FastFail>(dir, "fastfail.txt", parse_fastfail);
  in.transitions = read_file<std::vector<TransitionLine>>(dir, "transitions.log", parse_transitions);

  Report report;
  report.dir = dir.path();
  report.evidence_note = record ? "" : no_record_reason;
  const bool just_after = !options.steps.empty();
  for (int n = 1; n <= 8; ++n) {
    if (just_after && options.steps.count(n) == 0) continue;
    StepBuilder b(n);
    kSteps[n](b, in, just_after);
    StepReport step = b.finish(options.rubric.points[static_cast<std::size_t>(n)]);
    step.title = kTitles[n];
    for (const Check& c : step.checks) {
      ++report.checks_total;
      if (c.status != Status::Skip) ++report.checks_run;
    }
    report.score += step.score;
    report.max_score += step.max_score;
    report.steps.push_back(std::move(step));
  }
  // Passed: nothing failed, and something was checked. A step whose every check was skipped (no
  // server record) neither passes nor fails; the report says how much was verified.
  report.passed = std::none_of(report.steps.begin(), report.steps.end(), [](const StepReport& s) { return s.status == Status::Fail; }) &&
                  std::any_of(report.steps.begin(), report.steps.end(), [](const StepReport& s) { return s.status == Status::Pass; });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace cb::grade

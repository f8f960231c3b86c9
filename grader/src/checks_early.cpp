// Steps 1-4: the server, the calls that leave it CLOSED, the trip, and the refusals while OPEN.
// Numbers are the lab's (lab_spec.h): 3 /fast, then 5 /always500 of which 3 reach the server,
// then 10 calls refused while OPEN.
#include <algorithm>
#include <cstdio>

#include "cb/grade/lab_spec.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

std::string quoted(const std::string& s) { return "\"" + s.substr(0, 40) + "\""; }

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

std::string nth(std::size_t n) {
  const char* suffix = n % 100 >= 11 && n % 100 <= 13 ? "th"
                       : n % 10 == 1                  ? "st"
                       : n % 10 == 2                  ? "nd"
                       : n % 10 == 3                  ? "rd"
                                                      : "th";
  return std::to_string(n) + suffix;
}

int last_step_seen(const LabRun& run) {
  if (run.bad > 0) return 7;
  if (run.trials.size() > 1) return 6;
  if (!run.trials.empty()) return 5;
  if (run.count_calls.size() >= 2 || run.always500 > run.first_burst_500) return 4;
  if (!run.burst.empty()) return 3;
  if (run.fast_before_first_500 > 0) return 2;
  return 1;
}

void state_just_after(StepBuilder& s, const Inputs& in, int step, const std::string& want) {
  const std::string prefix = "s" + std::to_string(step) + ".";
  const StateFile* f = s.file(in.state, prefix + "state_contract");
  if (f == nullptr) return;
  // A program that ran on past step N rewrote state.json later: what is wrong is when it
  // stopped, not the breaker.
  std::string later;
  if (const int seen = in.run ? last_step_seen(*in.run) : 0; seen > step)
    later = ": state.json is from a later step, since the record shows the run went on to step " +
            std::to_string(seen) + "; stop the program after step " + std::to_string(step) +
            " (a starter kit: sh run.sh --until " + std::to_string(step) + ")";
  expect_state(s, prefix + "state", "state.json", *f, want, later);
}

std::string seconds_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", ms / 1000.0);
  return buf;
}

void expect_state(StepBuilder& s, std::string_view id, const std::string& file, const StateFile& f,
                  const std::string& want, const std::string& why_other) {
  std::string message = file + ": \"state\" is " + quoted(f.state);
  if (upper(f.state) == want) {
    message += "; states are upper case: \"" + want + "\"";
  } else if (f.state == "HALF-OPEN" || f.state == "HALFOPEN") {
    message += "; the state is spelled \"HALF_OPEN\"";
  } else {
    message += ", expected \"" + want + "\"" + why_other;
  }
  s.expect(f.state == want, id, message, want, f.state);
}

bool never_opened(const LabRun& run) {
  return run.always500 >= run.first_burst_500 + static_cast<std::size_t>(lab::kBlocked);
}

bool never_left_closed(const Inputs& in) {
  if (!in.run || !never_opened(*in.run)) return false;
  return !in.transitions.ok || find_transition(*in.transitions.value, "CLOSED", "OPEN") == nullptr;
}

// ---- Step 1 ---------------------------------------------------------------------------------
void step1(StepBuilder& s, const Inputs& in, bool just_after) {
  if (in.probe && !in.probe->flaky) {
    s.fail("s1.server", in.probe->detail);
    return;
  }
  if (!s.ready("s1.server")) return;
  s.pass("s1.server");
  const LabRun& run = *in.run;
  // Only where the record is the program's alone (--run) is a second run its mistake; anywhere
  // else the evidence failed and grade() says so.
  if (const std::string& why = s.pre().record_unusable; !why.empty() || run.runs > 1) {
    s.fail("s1.once", why.empty() ? "the record holds " + std::to_string(run.runs) + " runs of the lab" : why, 1,
           static_cast<std::uint64_t>(run.runs));
  } else {
    s.pass("s1.once");
  }
  if (run.admin.empty()) {
    s.pass("s1.admin");
  } else {
    const RecordEntry& e = *run.admin.front();
    s.fail(
        "s1.admin",
        std::to_string(run.admin.size()) + " request(s) to the server's admin endpoints, the first " + e.method + " " +
            e.path + " at " + seconds_text(e.t_ms) +
            ": the record is the grader's evidence, and a program being graded may not reset or read it (they were refused)",
        0, static_cast<std::uint64_t>(run.admin.size()));
  }
  if (just_after) return;
  const auto& counts = run.count_calls;
  const bool answered = !counts.empty() && std::all_of(counts.begin(), counts.end(), [](const RecordEntry* e) {
    return e->status == 200 && e->count.has_value();
  });
  s.expect(answered, "s1.count",
           counts.empty() ? "the record has no /count request: fastfail.txt's before and after must come from /count"
                          : "a /count request was not answered with a count",
           nullptr, static_cast<std::uint64_t>(counts.size()));
}

// ---- Step 2 ---------------------------------------------------------------------------------
void step2(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    if (const StateFile* f = s.file(in.state, "s2.state_contract")) {
      expect_state(s, "s2.state", "state.json", *f, "CLOSED");
      s.expect(f->failures == 0, "s2.failures",
               "state.json: \"failures\" is " + std::to_string(f->failures) + " after " + std::to_string(lab::kFast) +
                   " successful calls",
               0, f->failures);
      s.expect(f->window_size == lab::kWindow, "s2.window",
               "state.json: \"window_size\" is " + std::to_string(f->window_size) + "; the lab's window is " +
                   std::to_string(lab::kWindow) + " calls",
               lab::kWindow, f->window_size);
    }
  }
  if (!s.ready("s2.fast_first")) return;
  const LabRun& run = *in.run;
  const auto fast = run.fast_before_first_500;
  std::string message = std::to_string(fast) + " /fast answered 200 reached the server before the first /always500";
  if (fast == 0 && run.lab.empty())
    message = "the server saw no lab request at all: were the files written without calling it?";
  if (run.other_before_first_500 > 0)
    message += "; and " + std::to_string(run.other_before_first_500) + " other request(s) before it";
  s.expect(fast == static_cast<std::size_t>(lab::kFast) && run.other_before_first_500 == 0, "s2.fast_first", message,
           lab::kFast, static_cast<std::uint64_t>(fast));
}

// ---- Step 3 ---------------------------------------------------------------------------------
// Judged at the trip point. The breaker's arithmetic: after 3 successes, failure 1 is 1 of 4
// calls (under the minimum of 5, not judged), failure 2 is 2 of 5 = 40%, failure 3 is 3 of 6 =
// 50% >= 50%: it opens there, and the 4th and 5th are refused. What reached the server after the
// trip is step 4's rule (nothing reaches the server while OPEN), so a breaker that opened on the
// 3rd but let the 4th through passes here and fails there. The log's CLOSED->OPEN stamp, read
// with the whole record (placement.h), tells those apart from a breaker that opened late;
// without one, the message names both.
void step3(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) {
    state_just_after(s, in, 3, "OPEN");
    // OPEN records nothing: what it reports is the window that opened it (3 failures of 6
    // calls), or nothing if the breaker empties its window on opening. Anything else counted
    // what came after, the refused calls among them.
    if (in.state.ok && s.ready("s3.failures")) {
      const auto failures = in.state.value->failures;
      s.expect(failures == lab::kTripAt || failures == 0, "s3.failures",
               "state.json: \"failures\" is " + std::to_string(failures) + " in OPEN: the window that opened it held " +
                   std::to_string(lab::kTripAt) +
                   " failures of 6 calls (report those, or 0 if opening empties the window); "
                   "a refused call is not a failure",
               nlohmann::json::array({0, lab::kTripAt}), failures);
    }
  }
  if (!s.ready("s3.trip")) return;
  const auto n = in.run->first_burst_500;
  const auto want = static_cast<std::size_t>(lab::kTripAt);
  const std::string got = std::to_string(n) + " /always500 reached the server before the breaker refused one";
  if (const auto& place = in.trip) {
    const std::size_t after = place->reading;
    if (after == want) {
      s.pass("s3.trip", lab::kTripAt, static_cast<std::uint64_t>(n));
      return;
    }
    std::string message = "transitions.log stamps CLOSED->OPEN after the server answered the " + nth(after) +
                          " /always500, expected the " + nth(want);
    if (after == want + 1)
      message += ": compared with > instead of >= (3 of 6 is exactly 50%)";
    else if (after > want)
      message += ": it opened late (a consecutive-failure rule, or no rate rule at all)";
    else
      message += ": it opened before the window held the minimum of 5 calls (judging too early)";
    if (place->low <= want && want < after)
      message += ". (The stamp's last digit alone would allow the " + nth(want) + ", but then the " + nth(want + 1) +
                 " reached the server while OPEN and the next did not: the record reads the " + nth(after) + ".)";
    s.fail("s3.trip", message, lab::kTripAt, static_cast<std::uint64_t>(after));
    return;
  }
  std::string message = got + ", expected " + std::to_string(want) + " of the " + std::to_string(lab::kBurst);
  const std::string either = "; a stamped transitions.log would tell which";
  if (n == want + 1)
    message +=
        ": either it opened on the 4th (compared with > instead of >=; 3 of 6 is exactly 50%), or it opened on "
        "the 3rd and let the 4th through while OPEN" +
        either;
  else if (n == static_cast<std::size_t>(lab::kBurst))
    message +=
        ": either it never opened (a 5-in-a-row rule, or no rate rule at all), or it opened and let calls "
        "through while OPEN" +
        either;
  else if (n > want)
    message += ": calls kept reaching the server after it should have opened";
  else if (n > 0)
    message += ": it opened before the window held the minimum of 5 calls (judging too early)";
  else
    message = "no /always500 reached the server";
  s.expect(n == want, "s3.trip", message, lab::kTripAt, static_cast<std::uint64_t>(n));
}

// ---- Step 4 ---------------------------------------------------------------------------------
void step4(StepBuilder& s, const Inputs& in, bool just_after) {
  if (just_after) state_just_after(s, in, 4, "OPEN");
  if (const FastFail* f = s.file(in.fastfail, "s4.fastfail_contract")) {
    s.expect(
        f->blocked == lab::kBlocked, "s4.blocked",
        "blocked=" + std::to_string(f->blocked) + ": the lab makes 10 calls while OPEN, and all 10 must be refused",
        lab::kBlocked, f->blocked);
    const auto leaked = f->after - f->before;
    s.expect(leaked == 0, "s4.before_after",
             "before=" + std::to_string(f->before) + " after=" + std::to_string(f->after) + ": " +
                 std::to_string(leaked) + " call(s) reached the server while the breaker was OPEN",
             f->before, f->after);
    char ms[64];
    std::snprintf(ms, sizeof ms, "%g", f->max_ms);
    s.expect(f->max_ms < lab::kMaxRefusalMs, "s4.max_ms",
             std::string("max_ms=") + ms + " is not < 50: a refusal must not wait on the network", "< 50", f->max_ms);
  }
  if (!s.ready("s4.none_reached")) return;
  const LabRun& run = *in.run;
  // Calls that reached the server while OPEN: the burst's /always500 after the trip, where the
  // stamp and the record place it (placement.h; without a stamp, none is counted there: step 3
  // names both readings), and every /always500 after the burst (the trials are /fast, so none
  // belongs anywhere else in the script).
  const std::size_t in_burst = in.trip ? run.first_burst_500 - in.trip->reading : 0;
  const std::size_t after_burst = run.always500 - run.first_burst_500;
  std::string message =
      std::to_string(in_burst + after_burst) + " call(s) reached the server while the breaker was OPEN";
  if (in_burst > 0)
    message +=
        ": " + std::to_string(in_burst) + " /always500 after the one that opened it (transitions.log's CLOSED->OPEN)";
  if (after_burst > 0)
    message +=
        std::string(in_burst > 0 ? ", and " : ": ") + std::to_string(after_burst) + " of the calls meant to be refused";
  s.expect(in_burst + after_burst == 0, "s4.none_reached", message, 0,
           static_cast<std::uint64_t>(in_burst + after_burst));

  if (!s.ready("s4.counts_real")) return;
  const FastFail& f = *in.fastfail.value;
  // Two /count answers, before then after (one answer cannot be quoted twice). Equal answers
  // mean nothing was counted between them: the count never goes down.
  std::vector<std::int64_t> answers;
  for (const RecordEntry* c : run.count_calls)
    if (c->count) answers.push_back(*c->count);
  bool found = false;
  for (std::size_t i = 0; i < answers.size() && !found; ++i)
    if (answers[i] == f.before)
      for (std::size_t j = i + 1; j < answers.size() && !found; ++j) found = answers[j] == f.after;
  std::string list;
  for (std::size_t i = 0; i < answers.size() && i < 12; ++i) list += (i ? ", " : "") + std::to_string(answers[i]);
  s.expect(found, "s4.counts_real",
           answers.empty() ? "the server never answered /count: before and after were not measured"
                           : "the server answered /count with " + list + "; fastfail.txt quotes before=" +
                                 std::to_string(f.before) + " then after=" + std::to_string(f.after),
           nlohmann::json{{"before", f.before}, {"after", f.after}}, answers);
  // Taken after step 3: the count then is every lab request up to the end of the burst (3 /fast
  // and the 3 /always500 in a correct run). A breaker that never opened has no such moment.
  if (never_left_closed(in)) {
    s.skip("s4.before_at_trip", std::string(kNeverOpened) +
                                    " (nor does transitions.log), so there was no moment it opened "
                                    "to take before at");
    return;
  }
  if (!run.trip) {
    s.fail("s4.before_at_trip", "no /always500 reached the server, so the record shows no moment the breaker opened");
    return;
  }
  const auto expected_before = static_cast<std::int64_t>(*run.trip) + 1;
  s.expect(f.before == expected_before, "s4.before_at_trip",
           "before=" + std::to_string(f.before) + ", but " + std::to_string(expected_before) +
               " lab requests had reached the server when the breaker opened",
           expected_before, f.before);
}

}  // namespace cb::grade

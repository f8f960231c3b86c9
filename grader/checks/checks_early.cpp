// Steps 1-4: the server, the calls that leave it CLOSED, the trip, and the refusals while OPEN.
// Every number and file name comes from the spec (lab_spec.h); the table at the end registers
// each body under its catalogue id.
#include <algorithm>
#include <cstdio>

#include "cb/grade/variant.h"
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

int last_step_seen(const LabRun& run) {
  if (run.bad > 0) return 7;
  if (run.trials.size() > 1) return 6;
  if (!run.trials.empty()) return 5;
  if (run.count_calls.size() >= 2 || run.always500 > run.first_burst_500) return 4;
  if (!run.burst.empty()) return 3;
  if (run.fast_before_first_500 > 0) return 2;
  return 1;
}

void contract_check(CheckVerdict& v, const Inputs& in, std::string_view role) {
  auto judge = [&](const auto& parsed) { parsed.ok ? v.pass() : v.fail(parsed.problem); };
  if (role == "state") return judge(in.state);
  if (role == "ignore") return judge(in.ignore);
  if (role == "fastfail") return judge(in.fastfail);
  if (in.transitions.ok && !in.stamp_problem.empty()) return v.fail(in.stamp_problem);
  judge(in.transitions);
}

void state_just_after(CheckVerdict& v, const Inputs& in, int step, const std::string& want) {
  // A program that ran on past step N rewrote state.json later: what is wrong is when it
  // stopped, not the breaker.
  const std::string& file = in.spec.files.state;
  std::string later;
  if (const int seen = in.run ? last_step_seen(*in.run) : 0; seen > step)
    later = ": " + file + " is from a later step, since the record shows the run went on to step " + str(seen) +
            "; stop the program after step " + str(step) + " (a starter kit: sh run.sh --until " + str(step) + ")";
  expect_state(v, file, *in.state.value, want, later);
}

std::string seconds_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", ms / 1000.0);
  return buf;
}

void expect_state(CheckVerdict& v, std::string_view file, const StateFile& f, const std::string& want,
                  const std::string& why_other) {
  std::string message = std::string(file) + ": \"state\" is " + quoted(f.state);
  if (upper(f.state) == want) {
    message += "; states are upper case: \"" + want + "\"";
  } else if (f.state == "HALF-OPEN" || f.state == "HALFOPEN") {
    message += "; the state is spelled \"HALF_OPEN\"";
  } else {
    message += ", expected \"" + want + "\"" + why_other;
  }
  v.expect(f.state == want, message, want, f.state);
}

bool never_opened(const LabRun& run, const LabSpec& spec) {
  return run.always500 >= run.first_burst_500 + static_cast<std::size_t>(spec.script.blocked);
}

bool never_left_closed(const Inputs& in) {
  if (!in.run || !never_opened(*in.run, in.spec)) return false;
  return !in.transitions.ok || find_transition(*in.transitions.value, "CLOSED", "OPEN") == nullptr;
}

std::string other_numbers(const Inputs& in) {
  if (!in.run || !in.state.ok) return {};
  const StateFile& f = *in.state.value;
  const LabSpec& spec = in.spec;
  if (f.window_size == spec.rules.window && f.permitted_in_half_open == spec.rules.trials) return {};
  const std::size_t trip = in.trip ? in.trip->reading : in.run->first_burst_500;
  // What shows in the run: the window and trials state.json reports, where the breaker opened,
  // and how many trials it closed after (when the log places it).
  auto shows = [&](const LabRules& r) {
    const auto trials = static_cast<std::size_t>(r.trials);
    return f.window_size == r.window && f.permitted_in_half_open == r.trials &&
           trip_point(r, spec.script.fast, spec.script.burst, false).at == static_cast<int>(trip) &&
           (!in.close || (in.close->low <= trials && trials <= in.close->high));
  };
  // (state.json already differs from this spec's window or trials, so a set that shows is another.)
  std::string other;
  if (shows(spec.handout)) {
    other = "the handout's: " + numbers_of(spec.handout).text();
  } else {
    for (const LabNumbers& n : variant_numbers(spec)) {
      if (!shows(rules_with(spec.rules, n))) continue;
      other = "window " + std::to_string(n.window) + ", opening on the " + nth(trip) + " failure, " +
              std::to_string(n.trials) + " trials";
      break;
    }
  }
  if (other.empty()) return {};
  return spec.say("s1.numbers", {{"got", spec.files.state + " reports window_size " + str(f.window_size) +
                                             " and permitted_in_half_open " + str(f.permitted_in_half_open) +
                                             ", and the breaker opened on the " + nth(trip) + " failure"},
                                 {"other", other}});
}

namespace {

// ---- Step 1 ---------------------------------------------------------------------------------
void s1_numbers(CheckVerdict& v, const Inputs& in, bool) {
  if (!in.pre.other_numbers.empty()) return v.fail(in.pre.other_numbers);
  v.pass();
}

void s1_server(CheckVerdict& v, const Inputs& in, bool) {
  if (in.probe && !in.probe->flaky) return v.fail(in.probe->detail);
  if (!in.pre.has_record) return v.skip_absent(in.pre.no_record_reason);
  v.pass();
}

void s1_once(CheckVerdict& v, const Inputs& in, bool) {
  // Only where the record is the program's alone (--run) is a second run its mistake; anywhere
  // else the evidence failed and grade() says so.
  const LabRun& run = *in.run;
  if (const std::string& why = in.pre.record_unusable; !why.empty() || run.runs > 1)
    return v.fail(why.empty() ? "the record holds " + std::to_string(run.runs) + " runs of the lab" : why, 1,
                  static_cast<std::uint64_t>(run.runs));
  v.pass();
}

void s1_count(CheckVerdict& v, const Inputs& in, bool) {
  const auto& counts = in.run->count_calls;
  const bool answered = !counts.empty() && std::all_of(counts.begin(), counts.end(), [](const RecordEntry* e) {
    return e->status == 200 && e->count.has_value();
  });
  v.expect(answered,
           counts.empty() ? "the record has no " + kCountPath + " request: " + in.spec.files.fastfail +
                                "'s before and after must come from " + kCountPath
                          : "a " + kCountPath + " request was not answered with a count",
           nullptr, static_cast<std::uint64_t>(counts.size()));
}

void s1_admin(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  if (run.admin.empty()) return v.pass();
  const RecordEntry& e = *run.admin.front();
  v.fail(std::to_string(run.admin.size()) + " request(s) to the server's admin endpoints, the first " + e.method + " " +
             e.path + " at " + seconds_text(e.t_ms) +
             ": the record is the grader's evidence, and a program being graded may not reset or read it (they were "
             "refused)",
         0, static_cast<std::uint64_t>(run.admin.size()));
}

// ---- Step 2 ---------------------------------------------------------------------------------
void s2_state(CheckVerdict& v, const Inputs& in, bool) {
  expect_state(v, in.spec.files.state, *in.state.value, "CLOSED");
}

void s2_failures(CheckVerdict& v, const Inputs& in, bool) {
  const auto failures = in.state.value->failures;
  v.expect(failures == 0, in.spec.say("s2.failures", {{"got", str(failures)}}), 0, failures);
}

void s2_window(CheckVerdict& v, const Inputs& in, bool) {
  const auto window = in.state.value->window_size;
  v.expect(window == in.spec.rules.window, in.spec.say("s2.window", {{"got", str(window)}}), in.spec.rules.window,
           window);
}

void s2_fast_first(CheckVerdict& v, const Inputs& in, bool) {
  const LabRun& run = *in.run;
  const auto fast = run.fast_before_first_500;
  std::string message = in.spec.say("s2.fast_first", {{"got", std::to_string(fast)}});
  if (fast == 0 && run.lab.empty())
    message = "the server saw no lab request at all: were the files written without calling it?";
  if (run.other_before_first_500 > 0)
    message += "; and " + std::to_string(run.other_before_first_500) + " other request(s) before it";
  v.expect(fast == static_cast<std::size_t>(in.spec.script.fast) && run.other_before_first_500 == 0, message,
           in.spec.script.fast, static_cast<std::uint64_t>(fast));
}

// ---- Step 3 ---------------------------------------------------------------------------------
// Judged at the trip point, which the spec works out from the numbers. The lab's: after 3
// successes, failure 1 is 1 of 4 calls (under the minimum of 5, not judged), failure 2 is 2 of
// 5 = 40%, failure 3 is 3 of 6 = 50% >= 50%: it opens there, and the 4th and 5th are refused.
// What reached the server after the trip is step 4's rule (nothing reaches the server while
// OPEN), so a breaker that opened on the 3rd but let the 4th through passes here and fails
// there. The log's CLOSED->OPEN stamp, read with the whole record (placement.h), tells those
// apart from a breaker that opened late; without one, the message names both.
void s3_state(CheckVerdict& v, const Inputs& in, bool) { state_just_after(v, in, 3, "OPEN"); }

void s3_failures(CheckVerdict& v, const Inputs& in, bool) {
  // OPEN records nothing: what it reports is the window that opened it, or nothing if the
  // breaker empties its window on opening. Anything else counted what came after, the refused
  // calls among them.
  const auto failures = in.state.value->failures;
  const int want = in.spec.trip_failures;
  v.expect(failures == want || failures == 0, in.spec.say("s3.failures", {{"got", str(failures)}}),
           nlohmann::json::array({0, want}), failures);
}

void s3_trip(CheckVerdict& v, const Inputs& in, bool) {
  const LabSpec& spec = in.spec;
  const auto n = in.run->first_burst_500;
  const auto want = static_cast<std::size_t>(spec.trip_at);
  // Where a breaker comparing with > would open, when the numbers tell it apart from >=.
  const auto gt = static_cast<std::size_t>(spec.trip_at_gt);
  if (const auto& place = in.trip) {
    const std::size_t after = place->reading;
    if (after == want) return v.pass(spec.trip_at, static_cast<std::uint64_t>(n));
    std::string message = spec.say("s3.trip.stamped", {{"got_nth", nth(after)}});
    if (after == gt)
      message += ": " + spec.say("s3.trip.gt");
    else if (after > want)
      message += ": " + spec.say("s3.trip.late");
    else
      message += ": " + spec.say("s3.trip.early");
    if (place->low <= want && want < after) message += ". " + spec.say("s3.trip.digit", {{"got_nth", nth(after)}});
    return v.fail(message, spec.trip_at, static_cast<std::uint64_t>(after));
  }
  std::string message = spec.say("s3.trip.unstamped", {{"got", std::to_string(n)}});
  if (n == want + 1 && gt == want + 1)
    message += ": " + spec.say("s3.trip.either_gt");
  else if (n == static_cast<std::size_t>(spec.script.burst))
    message += ": " + spec.say("s3.trip.either_never");
  else if (n > want)
    message += ": calls kept reaching the server after it should have opened";
  else if (n > 0)
    message += ": " + spec.say("s3.trip.early");
  else
    message = "no " + kFailingPath + " reached the server";
  v.expect(n == want, message, spec.trip_at, static_cast<std::uint64_t>(n));
}

// ---- Step 4 ---------------------------------------------------------------------------------
void s4_state(CheckVerdict& v, const Inputs& in, bool) { state_just_after(v, in, 4, "OPEN"); }

void s4_blocked(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  v.expect(f.blocked == in.spec.script.blocked, in.spec.say("s4.blocked", {{"got", str(f.blocked)}}),
           in.spec.script.blocked, f.blocked);
}

void s4_before_after(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  const auto leaked = f.after - f.before;
  v.expect(leaked == 0,
           "before=" + str(f.before) + " after=" + str(f.after) + ": " + str(leaked) +
               " call(s) reached the server while the breaker was OPEN",
           f.before, f.after);
}

void s4_max_ms(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  char ms[64];
  std::snprintf(ms, sizeof ms, "%g", f.max_ms);
  v.expect(f.max_ms < in.spec.max_refusal_ms, in.spec.say("s4.max_ms", {{"got", ms}}),
           "< " + in.spec.values().at("max_refusal_ms"), f.max_ms);
}

void s4_counts_real(CheckVerdict& v, const Inputs& in, bool) {
  const FastFail& f = *in.fastfail.value;
  // Two /count answers, before then after (one answer cannot be quoted twice). Equal answers
  // mean nothing was counted between them: the count never goes down.
  std::vector<std::int64_t> answers;
  for (const RecordEntry* c : in.run->count_calls)
    if (c->count) answers.push_back(*c->count);
  bool found = false;
  for (std::size_t i = 0; i < answers.size() && !found; ++i)
    if (answers[i] == f.before)
      for (std::size_t j = i + 1; j < answers.size() && !found; ++j) found = answers[j] == f.after;
  std::string list;
  for (std::size_t i = 0; i < answers.size() && i < 12; ++i) list += (i ? ", " : "") + str(answers[i]);
  v.expect(found,
           answers.empty() ? "the server never answered " + kCountPath + ": before and after were not measured"
                           : "the server answered " + kCountPath + " with " + list + "; " + in.spec.files.fastfail +
                                 " quotes before=" + str(f.before) + " then after=" + str(f.after),
           nlohmann::json{{"before", f.before}, {"after", f.after}}, answers);
}

void s4_before_at_trip(CheckVerdict& v, const Inputs& in, bool) {
  // Taken after step 3: the count then is every lab request up to the end of the burst (the
  // /fast and the /always500 that reached the server in a correct run). A breaker that never
  // opened has no such moment.
  const FastFail& f = *in.fastfail.value;
  if (never_left_closed(in))
    return v.skip(std::string(kNeverOpened) + " (nor does " + in.spec.files.transitions +
                  "), so there was no moment it opened to take before at");
  if (!in.run->trip)
    return v.fail("no " + kFailingPath + " reached the server, so the record shows no moment the breaker opened");
  const auto expected_before = static_cast<std::int64_t>(*in.run->trip) + 1;
  v.expect(f.before == expected_before,
           "before=" + str(f.before) + ", but " + str(expected_before) +
               " lab requests had reached the server when the breaker opened",
           expected_before, f.before);
}

void s4_none_reached(CheckVerdict& v, const Inputs& in, bool) {
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
    message += ": " + std::to_string(in_burst) + " " + kFailingPath + " after the one that opened it (" +
               in.spec.files.transitions + "'s CLOSED->OPEN)";
  if (after_burst > 0)
    message +=
        std::string(in_burst > 0 ? ", and " : ": ") + std::to_string(after_burst) + " of the calls meant to be refused";
  v.expect(in_burst + after_burst == 0, message, 0, static_cast<std::uint64_t>(in_burst + after_burst));
}

constexpr CheckEntry kEarly[] = {
    {"s1.server", s1_server},
    {"s1.once", s1_once},
    {"s1.count", s1_count},
    {"s1.admin", s1_admin},
    {"s1.numbers", s1_numbers},
    {"s2.state", s2_state},
    {"s2.failures", s2_failures},
    {"s2.window", s2_window},
    {"s2.fast_first", s2_fast_first},
    {"s3.state", s3_state},
    {"s3.failures", s3_failures},
    {"s3.trip", s3_trip},
    {"s4.state", s4_state},
    {"s4.blocked", s4_blocked},
    {"s4.before_after", s4_before_after},
    {"s4.max_ms", s4_max_ms},
    {"s4.counts_real", s4_counts_real},
    {"s4.before_at_trip", s4_before_at_trip},
    {"s4.none_reached", s4_none_reached},
};

}  // namespace

std::span<const CheckEntry> early_checks() noexcept { return kEarly; }

}  // namespace cb::grade

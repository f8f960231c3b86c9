#include "cb/grade/conformance_check.h"

#include "cb/grade/conformance_diagnosis.h"
#include "cb/grade/program_words.h"
#include "cb/grade/wording.h"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <vector>

namespace cb::grade {
namespace {

using namespace conformance;

// A line as its row shows it: a whole call's result, or which call in flight begins or ends.
std::string result_of(const Call& c) {
  std::string result = c.timed_out ? "timeout" : std::to_string(c.status);
  switch (c.phase) {
    case Phase::Begin: return "call " + std::to_string(c.id) + " begins";
    case Phase::End: return "call " + std::to_string(c.id) + " ends: " + result;
    case Phase::Whole: break;
  }
  return result;
}

// An End's answer is only the state: its call was let through when it began.
std::string answer_of(const Answer& a, Phase phase) {
  if (phase == Phase::End) return std::string(to_string(a.state));
  return std::string(to_string(a.decision)) + " " + std::string(to_string(a.state));
}

// `t` up to and with call `last` as rows a person compares, with `input` to replay it.
Counterexample table(int index, std::size_t original_calls, const Trace& t, const Replies& replies, std::size_t last,
                     const Replies* alone = nullptr) {
  Counterexample out;
  out.trace = index;
  out.original_calls = original_calls;
  out.settings = nlohmann::json::parse(settings_line(t.settings));
  out.input.push_back(settings_line(t.settings));
  Model m(t.settings);
  for (std::size_t i = 0; i <= last && i < t.calls.size(); ++i) {
    const Phase phase = t.calls[i].phase;
    const bool either = phase == Phase::End && m.wait_over(t.calls[i].t_ms);
    const Step want = m.step(t.calls[i]);
    ConformanceRow row;
    row.t_ms = t.calls[i].t_ms;
    row.result = result_of(t.calls[i]);
    row.expected = answer_of({want.decision, want.state}, phase);
    if (either && want.state == State::Open) row.expected += " or HALF_OPEN";
    if (i < replies.answers.size()) row.got = answer_of(replies.answers[i], phase);
    if (alone && i < alone->answers.size()) row.alone = answer_of(alone->answers[i], phase);
    row.differs = i == last;
    out.rows.push_back(row);
    out.input.push_back(call_line(t.calls[i]));
  }
  return out;
}

// A trace answered otherwise, and what it was put down to.
struct Failure {
  int index = 0;
  Trace trace;
  Replies replies;
  std::optional<Divergence> d;  // none: every answer right, the protocol broken (or state carried over)
  Explanation why;
  Replies alone;  // state_carried_over: the same trace in a process of its own
  [[nodiscard]] std::size_t at() const { return d ? d->at : trace.calls.size(); }
};

// Where a breaker's answers in a shared process part from its answers alone: what it carried
// over from the traces before.
Failure carried_over(int index, const Trace& trace, Replies shared, Replies alone) {
  Failure f;
  f.index = index;
  f.trace = trace;
  const auto at = static_cast<std::size_t>(
      std::mismatch(shared.answers.begin(), shared.answers.end(), alone.answers.begin(), alone.answers.end()).first -
      shared.answers.begin());
  f.d = Divergence{std::min(at, trace.calls.size() - 1), {}, std::nullopt};
  f.why = {"state_carried_over",
           "answered this trace otherwise after other traces in the same process than in a process of its own: "
           "something was kept from one trace to the next (build a new breaker, with its own window and clock, "
           "for each settings line)" +
               (shared.problem.empty() ? std::string() : "; after the others it " + shared.problem) +
               (alone.problem.empty() ? std::string() : "; alone it " + alone.problem)};
  f.replies = std::move(shared);
  f.alone = std::move(alone);
  return f;
}

// Thrown by a run asked for after the part's time ran out, and caught where that run was to
// explain or shrink a failure already found, which then stands as its trace showed it. It never
// leaves this file: it unwinds only through the diagnosis and shrinking that Judge drives.
struct OutOfTime {};

// The part's times (conformance_deadline.h): the whole part's, and within it the extra runs'
// (experiments on the failing traces, then shrinking), live or as the first grading met them.
struct Deadlines {
  Deadline part, experiments, shrinking;
  static Deadlines of(const ConformanceOptions& o) {
    if (o.replay_cuts)
      return {Deadline::replay(o.replay_cuts->part), Deadline::replay(o.replay_cuts->experiments),
              Deadline::replay(o.replay_cuts->shrinking)};
    const auto start = o.now();
    return {o.time_limit.count() > 0 ? Deadline::live(o.now, start, o.time_limit) : Deadline::never(),
            Deadline::live(o.now, start, o.shrink.time / 2), Deadline::live(o.now, start, o.shrink.time)};
  }
  [[nodiscard]] TimeCuts cuts() const { return {part.cut(), experiments.cut(), shrinking.cut()}; }
};

// A run alone that ran out of time before giving an answer the shared run did not give tells
// nothing: a machine too busy to run it in time looks the same. The shared answers stand.
bool inconclusive(const Replies& lone, const Replies& shared) {
  return lone.timed_out && lone.answers.size() < shared.answers.size() &&
         std::equal(lone.answers.begin(), lone.answers.end(), shared.answers.begin());
}

// How one part asks its program: the run, the run alone, what it reads of its settings.
class Judge {
 public:
  Judge(const ConformanceOptions& o, const Programs& p) : o_(o), p_(p), times_(Deadlines::of(o)) {
    // Every run beyond the traces asks the part's time first.
    gated_.run = gate(p_.run);
    if (p_.alone) gated_.alone = gate(p_.alone);
    gated_.explore = gate(p_.explore ? p_.explore : p_.run);
  }

  // Before each round of traces: whether the part's time is up.
  [[nodiscard]] bool out_of_time() { return times_.part.passed(); }
  [[nodiscard]] TimeCuts cuts() const { return times_.cuts(); }

  // What `replies` to trace number `index` got wrong, or nullopt when they are right.
  std::optional<Failure> judge(int index, const Trace& trace, Replies replies) {
    const bool wrong_shared = compare(trace, replies.answers) || !replies.problem.empty();
    // A sample of the traces, and the wrong ones, again in a process of its own: a wrong answer
    // is the breaker's own only if it gives it alone too. Each start costs what a whole shared
    // process's traces do (a few tens of milliseconds in the sandbox), so the sample is small,
    // and once 3 wrong traces have been answered alone the same, the rest are taken as they are.
    // The first trace is among them when its process was kept open: how a process ends (exit 0
    // at the end of its input) is seen only alone. A trace that got no answer in time would
    // cost its whole limit again: it stands as it is.
    const bool sample = index % kSampleEvery == 0 || (wrong_shared && alone_agreed_ < kAloneChecks);
    if (p_.alone && (replies.shared || replies.open) && sample && !replies.timed_out && !times_.part.passed()) {
      Replies lone = p_.alone(trace);
      spent_ += 1;
      if (!inconclusive(lone, replies)) {
        if (lone.answers != replies.answers) return carried_over(index, trace, std::move(replies), std::move(lone));
        if (wrong_shared) ++alone_agreed_;
        replies = std::move(lone);  // the same answers, and the whole protocol, start to exit
      }
    }
    const auto d = compare(trace, replies.answers);
    const bool wrong = d || !replies.problem.empty();
    if (!wrong) return std::nullopt;
    Failure f;
    f.index = index;
    f.trace = trace;
    f.d = d;
    if (!d) {
      f.why = {"protocol", "answered every call as the rules do, but then " + replies.problem};
    } else if (replies.answers.empty() || replies.timed_out || !experiments_allowed()) {
      // Not one answer (it could not start, or its file is not there), or none in time (asking
      // again would cost the limit again): nothing to ask it. Or no budget left to: the rule
      // at the call says it.
      f.why = explain(*d, trace, replies);
    } else {
      f.why = why(trace, replies, *d);
    }
    f.replies = std::move(replies);
    return f;
  }

  // `f` on as small a trace as shows the same departure, for the report.
  ConformanceRule show(const Failure& f) {
    ConformanceRule r;
    r.rule = f.why.id;
    r.message = f.why.text;
    if (f.why.id == "state_carried_over") {
      r.example = table(f.index, f.trace.calls.size(), f.trace, f.replies, f.at(), &f.alone);
      return r;
    }
    if (!f.d) {  // protocol: every call, nothing that differs
      r.example = table(f.index, f.trace.calls.size(), f.trace, f.replies, f.trace.calls.size());
      r.example.rows.clear();
      return r;
    }
    if ((f.replies.answers.empty() && !f.replies.problem.empty()) || f.replies.timed_out) {
      // Shrinking would run it a few hundred times more to say the same (the reason is in its
      // standard error), or wait out a trace's limit at every step.
      r.example = table(f.index, f.trace.calls.size(), f.trace, f.replies, f.d->at);
      return r;
    }
    try {
      shrunk(f, r);
    } catch (const OutOfTime&) {
      r.message = f.why.text;
      r.shrunk_fully = false;
      r.example = table(f.index, f.trace.calls.size(), f.trace, f.replies, f.d->at);
    }
    return r;
  }

  [[nodiscard]] int runs() const { return spent_; }

  // One mistake, one headline: once a trace has shown the unread settings whole
  // (settings_ignored), every other departure whose answers up to it are the rules' with the
  // lab's numbers in their place is put down to that root cause, not counted as a mistake of its
  // own (the handout's numbers typed into the rules once showed as five).
  void group_under_root(std::vector<Failure>& failures) const {
    if (!probe_ || probe_->unread.empty()) return;
    const auto root = [](const Failure& f) { return f.why.id == "settings_ignored"; };
    if (std::none_of(failures.begin(), failures.end(), root)) return;
    for (Failure& f : failures) {
      if (root(f) || f.why.id == "state_carried_over" || !f.d || !f.d->got) continue;
      if (auto e = unread_settings(f.trace, f.replies, f.d->at, *probe_)) f.why = *e;
    }
  }

 private:
  // `r` shown on `f` shrunk as far as the runs and time allow.
  void shrunk(const Failure& f, ConformanceRule& r) {
    ShrinkGoal goal;
    const std::string wanted = f.why.id;
    goal.same = [this, wanted](const Trace& t, const Replies& rep, const Divergence& d, const Program&) {
      return diagnose(t, rep, d, gated_.explore, probe(), nullptr).id == wanted;
    };
    goal.keep_settings = wanted == "settings_ignored";
    ShrinkBudget budget{std::max(0, o_.shrink.runs - spent_), std::chrono::hours{24 * 365}, {}};
    budget.stop = [this] { return times_.shrinking.passed(); };
    const Shrunk small = shrink(f.trace, gated_.run, budget, goal);
    spent_ += small.runs;
    r.shrunk_fully = small.complete;
    // The shrunk trace once more, alone, for the table; a program that answers it differently
    // this time (it is not deterministic) is tabled on the trace it was caught on.
    const Program& again = gated_.alone ? gated_.alone : gated_.run;
    Replies replies = again(small.trace);
    spent_ += 1;
    const auto d = compare(small.trace, replies.answers);
    const Explanation shown = d ? why(small.trace, replies, *d) : Explanation{};
    if (d && shown.id == wanted) {
      r.message = shown.text;
      r.example = table(f.index, f.trace.calls.size(), small.trace, replies, d->at);
    } else {
      r.example = table(f.index, f.trace.calls.size(), f.trace, f.replies, f.d->at);
    }
  }

  Program gate(const Program& program) {
    return [this, &program](const Trace& t) {
      if (times_.part.passed()) throw OutOfTime{};
      return program(t);
    };
  }

  // Experiments on each failing trace take no more than half the extra runs and time, so
  // shrinking always has some.
  bool experiments_allowed() { return spent_ < o_.shrink.runs / 2 && !times_.experiments.passed(); }

  Explanation why(const Trace& trace, const Replies& replies, const Divergence& d) {
    int runs = 0;
    try {
      Explanation e = diagnose(trace, replies, d, gated_.explore, probe(), &runs);
      spent_ += runs;
      return e;
    } catch (const OutOfTime&) {
      spent_ += runs;
      return explain(d, trace, replies);
    }
  }

  // What the program reads of its settings, found out the first time it matters.
  const SettingsProbe& probe() {
    if (!probe_) {
      probe_ = probe_settings(gated_.explore, o_.traces.seed);
      spent_ += probe_->runs;
    }
    return *probe_;
  }

  static constexpr int kSampleEvery = 50;
  static constexpr int kAloneChecks = 3;

  const ConformanceOptions& o_;
  const Programs& p_;
  Deadlines times_;
  Programs gated_;
  int spent_ = 0;  // runs beyond the traces
  int alone_agreed_ = 0;
  std::optional<SettingsProbe> probe_;
};

// Every rule's count and one counterexample each: the shortest to its divergence, shrunk;
// the first trace answered otherwise has its own already (`first`).
std::vector<ConformanceRule> summary(const std::vector<Failure>& failures, const ConformanceRule& first, Judge& judge) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Failure*>> by_rule;
  for (const Failure& f : failures) {
    if (by_rule.count(f.why.id) == 0) order.push_back(f.why.id);
    by_rule[f.why.id].push_back(&f);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return by_rule[a].size() > by_rule[b].size(); });
  std::vector<ConformanceRule> out;
  for (const std::string& id : order) {
    const auto& those = by_rule[id];
    const Failure* shortest = *std::min_element(those.begin(), those.end(),
                                                [](const Failure* a, const Failure* b) { return a->at() < b->at(); });
    ConformanceRule r = shortest == &failures.front() ? first : judge.show(*shortest);
    r.traces = static_cast<int>(those.size());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::uint64_t random_seed() {
  std::uint32_t seed = 0;
  while (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed)) {
  }
  return seed;
}

namespace {

// The part as asked for, before anything is judged: what ran, on which traces, for how much.
ConformancePart asked(const ConformanceOptions& o) {
  ConformancePart part;
  part.traces = o.traces;
  part.max_score = o.points;
  part.visibility = o.visibility;
  return part;
}

}  // namespace

ConformancePart check_conformance(const ConformanceOptions& o, const Program& program) {
  return check_conformance(o, Programs{program, {}, {}, {}});
}

namespace {

std::string whole_seconds(std::chrono::milliseconds t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(t).count()) + " s";
}

// Why a part whose every trace was answered rightly is still not passed.
std::string not_probed_message(const ConformancePart& part) {
  std::string ids;
  for (std::size_t i = 0; i < part.not_probed.size(); ++i)
    ids += (i == 0 ? "" : i + 1 == part.not_probed.size() ? " and " : ", ") + part.not_probed[i];
  return "answered all " + std::to_string(part.agreed) +
         " traces rightly, but one call at a time: it never said \"in_flight\": true, so " + ids +
         ", which only calls in flight can reach, were never probed, and a rule not probed is not passed; put "
         "\"in_flight\": true in your first answer and answer the begin and end lines (docs/CONTRACTS.md, \"Calls "
         "in flight\"; the starter kits' replay does)";
}

}  // namespace

ConformancePart check_conformance(const ConformanceOptions& o, const Programs& programs) {
  const auto started = std::chrono::steady_clock::now();
  ConformancePart part = asked(o);
  Judge judge(o, programs);
  std::vector<Failure> failures;
  const int jobs = std::max(1, o.jobs);
  bool silent = false;
  bool too_slow = false;
  int unanswered = 0;    // traces in a row with no answer in time
  bool hanging = false;  // o.no_answer_run of them
  // Whether the program takes calls in flight is said in its first answer, so the first trace
  // is a round of its own; from then on, every 4th trace has calls in flight when it does.
  bool in_flight = false;
  for (int i = 0, size = 1; i < o.traces.count && !silent && !hanging; i += size, size = jobs) {
    if (judge.out_of_time() || (o.stop_after >= 0 && i >= o.stop_after)) {
      too_slow = true;
      break;
    }
    // A round of traces at once, judged in order, so what is found does not depend on `jobs`.
    std::vector<Trace> round;
    for (int j = i; j < std::min(o.traces.count, i + size); ++j)
      round.push_back(trace_for(o.traces.seed, j, in_flight, o.traces.generation));
    std::vector<std::future<Replies>> running;
    for (std::size_t j = 1; j < round.size(); ++j)
      running.push_back(std::async(std::launch::async, [&programs, &t = round[j]] { return programs.run(t); }));
    std::vector<Replies> answered;
    answered.push_back(programs.run(round[0]));
    for (auto& f : running) answered.push_back(f.get());
    for (std::size_t k = 0; k < round.size() && !silent && !hanging; ++k) {
      const int index = i + static_cast<int>(k);
      ++part.judged;
      unanswered = answered[k].timed_out ? unanswered + 1 : 0;
      if (index == 0) in_flight = answered[k].in_flight;
      hanging = o.no_answer_run > 0 && unanswered >= o.no_answer_run;
      if (auto f = judge.judge(index, round[k], std::move(answered[k]))) {
        // Not one answer to a trace (it cannot start, its file is not there, it waits for
        // something else): every other trace would say the same, each after its time limit.
        silent = f->replies.answers.empty() && !f->replies.problem.empty();
        failures.push_back(std::move(*f));
      } else {
        ++part.agreed;
      }
      if (o.progress) o.progress(static_cast<std::size_t>(index) + 1, static_cast<std::size_t>(o.traces.count));
    }
  }
  // Why the traces after the last judged were not run, when they were not.
  const int not_run = o.traces.count - part.judged;
  std::string cut_short;
  if (hanging && not_run > 0) {
    cut_short = "; then " + std::to_string(unanswered) +
                " traces in a row got no answer within the time limit of one trace, so the other " +
                std::to_string(not_run) + " were not run (a program that hangs would cost each its whole limit)";
  } else if (too_slow && !failures.empty()) {
    cut_short = "; then the " + whole_seconds(o.time_limit) +
                " a submission's conformance may take (--conformance-timeout) ran out, and the other " +
                std::to_string(not_run) + " traces were not run";
  }
  if (silent) {
    // Not one answer: a program that cannot start (a missing file, a compile error), or does not
    // speak the protocol. One line
    // says so; there is no trace to show it on, and nothing to shrink.
    const Failure& f = failures.back();
    part.status = Status::Fail;
    part.rule = "no_answer";
    // Said of the trace it was: a program that answered traces before this one started, and
    // spoke the protocol, and then stopped (it crashed, or could not be started again).
    const std::string which = f.index == 0 ? "the first trace"
                                           : "trace " + std::to_string(f.index + 1) + " (after answering " +
                                                 std::to_string(part.agreed) + " of the " + std::to_string(f.index) +
                                                 " before it rightly)";
    part.message = "your program did not answer the first call of " + which + ": it " + f.replies.problem +
                   (program_words(f.replies.stderr_tail).empty() ? "" : ": " + program_words(f.replies.stderr_tail));
    part.stderr_tail = f.replies.stderr_tail;
  } else if (!failures.empty()) {
    judge.group_under_root(failures);
    const auto shrink_started = std::chrono::steady_clock::now();
    part.status = Status::Fail;
    const Failure& first = failures.front();
    ConformanceRule shown = judge.show(first);
    part.rule = shown.rule;
    part.message = shown.message + cut_short;
    part.stderr_tail = first.replies.stderr_tail;
    part.shrunk_fully = shown.shrunk_fully;
    part.example = shown.example;
    part.rules = summary(failures, shown, judge);
    for (const ConformanceRule& r : part.rules) part.shrunk_fully = part.shrunk_fully && r.shrunk_fully;
    part.shrink_runs = judge.runs();
    part.shrink_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - shrink_started).count();
  } else if (too_slow) {
    part.status = Status::Fail;
    part.rule = "too_slow";
    part.message = "answered " + std::to_string(part.judged) + " of " + std::to_string(o.traces.count) +
                   " traces rightly, then ran out of the " + whole_seconds(o.time_limit) +
                   " a submission's conformance may take (--conformance-timeout): a breaker answers a trace in "
                   "milliseconds";
  } else {
    part.status = Status::Pass;
  }
  part.in_flight = in_flight;
  if (!in_flight)
    for (Rule r : {Rule::TrialCap, Rule::LateResult}) part.not_probed.emplace_back(id(r));
  // No opting out: a rule a program keeps from being probed is not passed by default. A breaker
  // with no cap on its trials would otherwise earn the part by never saying "in_flight".
  if (part.status == Status::Pass && !part.not_probed.empty()) {
    part.status = Status::Fail;
    part.rule = "not_probed";
    part.message = not_probed_message(part);
  }
  part.cuts = judge.cuts();
  if (programs.processes) part.processes = programs.processes();
  part.score = part.status == Status::Pass ? o.points : 0;
  part.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return part;
}

ConformancePart conformance_refused(const ConformanceOptions& o, std::string rule, std::string message) {
  ConformancePart part = asked(o);
  part.status = Status::Fail;
  part.rule = std::move(rule);
  part.message = std::move(message);
  return part;
}

void add_conformance(Report& r, ConformancePart part) {
  r.score += part.score;
  r.max_score += part.max_score;
  r.checks_total += 1;
  if (part.status == Status::Pass || part.status == Status::Fail) r.checks_run += 1;
  if (r.steps.empty()) {
    r.status = part.status;
  } else if (r.status != Status::Error && (part.status == Status::Fail || part.status == Status::Error)) {
    r.status = part.status;
  } else if (r.status == Status::Skip && part.status == Status::Pass) {
    r.status = Status::Pass;
  }
  r.passed = r.status == Status::Pass;
  r.seconds += part.seconds;
  r.conformance = std::move(part);
}

}  // namespace cb::grade

#include "cb/grade/conformance_check.h"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <vector>

namespace cb::grade {
namespace {

using namespace conformance;

std::string result_of(const Call& c) { return c.timed_out ? "timeout" : std::to_string(c.status); }

std::string answer_of(Decision d, State s) { return std::string(to_string(d)) + " " + std::string(to_string(s)); }

// The shrunk trace, up to and with the call that differs, as rows a person compares.
void table(ConformancePart& part, const Trace& t, const Replies& replies, const Divergence& d) {
  Model m(t.settings);
  part.settings = nlohmann::json::parse(settings_line(t.settings));
  part.input.push_back(settings_line(t.settings));
  for (std::size_t i = 0; i <= d.at && i < t.calls.size(); ++i) {
    const Step want = m.call(t.calls[i]);
    ConformanceRow row;
    row.t_ms = t.calls[i].t_ms;
    row.result = result_of(t.calls[i]);
    row.expected = answer_of(want.decision, want.state);
    if (i < replies.answers.size()) row.got = answer_of(replies.answers[i].decision, replies.answers[i].state);
    row.differs = i == d.at;
    part.rows.push_back(row);
    part.input.push_back(call_line(t.calls[i]));
  }
}

// The part's verdict on the trace `t` it is shown on: the rule, what it says, and the table.
void counterexample(ConformancePart& part, const Trace& t, const Replies& replies, const Divergence& d) {
  const Explanation why = explain(d, t, replies);
  part.rule = why.id;
  part.message = why.text;
  part.stderr_tail = replies.stderr_tail;
  table(part, t, replies, d);
}

}  // namespace

std::uint64_t random_seed() {
  std::uint32_t seed = 0;
  while (::getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed)) {
  }
  return seed;
}

ConformancePart check_conformance(const ConformanceOptions& o, const Program& program) {
  const auto started = std::chrono::steady_clock::now();
  ConformancePart part;
  part.command = o.command;
  part.seed = o.seed;
  part.traces = o.traces;
  part.max_score = o.points;
  part.visibility = o.visibility;
  const int jobs = std::max(1, o.jobs);
  std::vector<Trace> round;
  std::vector<Replies> answered;
  for (int i = 0; i < o.traces; ++i) {
    const auto k = static_cast<std::size_t>(i % jobs);
    if (k == 0) {
      round.clear();
      for (int j = i; j < std::min(o.traces, i + jobs); ++j) round.push_back(generate(o.seed, j));
      std::vector<std::future<Replies>> running;
      for (std::size_t j = 1; j < round.size(); ++j)
        running.push_back(std::async(std::launch::async, [&program, &t = round[j]] { return program(t); }));
      answered.clear();
      answered.push_back(program(round[0]));
      for (auto& f : running) answered.push_back(f.get());
    }
    const Trace& trace = round[k];
    const Replies& replies = answered[k];
    auto d = compare(trace, replies.answers);
    if (o.progress) o.progress(static_cast<std::size_t>(i) + 1, static_cast<std::size_t>(o.traces));
    if (!d && replies.problem.empty()) {
      ++part.agreed;
      continue;
    }
    part.status = Status::Fail;
    part.failing_trace = i;
    part.original_calls = trace.calls.size();
    if (d && replies.answers.empty() && !replies.problem.empty()) {
      // Not one answer (it could not start, or its file is not there): shrinking would run it a
      // few hundred times more to say the same, and the reason is in its standard error.
      counterexample(part, trace, replies, *d);
      break;
    }
    if (!d) {
      // Every answer right, but the program did not end as the protocol says: nothing to shrink.
      part.rule = "protocol";
      part.message = "answered every call as the rules do, but then " + replies.problem;
      part.stderr_tail = replies.stderr_tail;
      part.input.push_back(settings_line(trace.settings));
      for (const Call& c : trace.calls) part.input.push_back(call_line(c));
      break;
    }
    const auto shrink_started = std::chrono::steady_clock::now();
    const Shrunk small = shrink(trace, program, o.shrink);
    part.shrink_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - shrink_started).count();
    part.shrink_runs = small.runs;
    part.shrunk_fully = small.complete;
    // The shrunk trace once more, for the table; a program that answers it differently this
    // time (it is not deterministic) is tabled on the trace it was caught on.
    Trace shown = small.trace;
    Replies again = program(shown);
    auto d_again = compare(shown, again.answers);
    if (!d_again) {
      shown = trace;
      again = replies;
      d_again = d;
    }
    counterexample(part, shown, again, *d_again);
    break;
  }
  if (part.status != Status::Fail) part.status = Status::Pass;
  part.score = part.status == Status::Pass ? o.points : 0;
  part.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
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

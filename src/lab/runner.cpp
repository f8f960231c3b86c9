#include "cb/lab/runner.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <thread>

#include "cb/atomic_file.h"
#include "cb/decimal_time.h"
#include "cb/lab/lab_files.h"
#include "cb/flaky/endpoints.h"

namespace cb::lab {
namespace {

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// "200 x3", "refused x10", "500 500 500 refused refused" -> runs of the same word folded.
std::string fold(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size();) {
    std::size_t j = i;
    while (j < words.size() && words[j] == words[i]) ++j;
    if (!out.empty()) out += ' ';
    out += words[i];
    if (j - i >= 3) {
      out += " x" + std::to_string(j - i);
    } else {
      for (std::size_t k = i + 1; k < j; ++k) out += ' ' + words[k];
    }
    i = j;
  }
  return out;
}

std::string describe(const Status& s) {
  const Metrics& m = s.metrics;
  std::string out = std::string(to_string(s.state));
  if (s.state == State::HalfOpen) {
    out += " (" + std::to_string(m.trials_admitted) + " trial(s), " + std::to_string(m.trial_failures) + " failed)";
  } else if (m.window.calls > 0) {
    out += " (" + std::to_string(m.window.failures) + " of " + std::to_string(m.window.calls) + " failed";
    if (m.failure_rate_percent) out += ": " + std::to_string(std::lround(*m.failure_rate_percent)) + "%";
    out += ")";
  }
  return out;
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f ms", ms);
  return buf;
}

}  // namespace

struct Runner::Live {
  std::unique_ptr<CircuitBreaker> breaker;
  std::vector<Transition> transitions;
  classify::Classifier classifier = classify::Classifier::http();
};

Runner::Runner(const Scenario& scenario, std::string out_dir, ServerUrl server, std::chrono::milliseconds call_timeout,
               Reporter& reporter, const std::atomic<bool>& interrupted)
    : scenario_(scenario),
      out_dir_(std::move(out_dir)),
      server_(std::move(server)),
      call_timeout_(call_timeout),
      reporter_(reporter),
      interrupted_(interrupted) {
  for (const auto& [name, spec] : scenario_.breakers) make_breaker(name);
}

Runner::~Runner() = default;

void Runner::make_breaker(const std::string& name) {
  const BreakerSpec& spec = scenario_.breakers.at(name);
  auto live = std::make_unique<Live>();
  // The scenario's options were validated when it was loaded.
  live->breaker = CircuitBreaker::create(spec.options, clock_).value();
  if (spec.classifier) live->classifier = *spec.classifier;
  Live* raw = live.get();
  // Kept in wall-clock time: transitions.log's stamps are compared with the server's record.
  live->breaker->subscribe([raw, this](const Transition& t) {
    Transition wall = t;
    wall.at = clock_.to_wall(t.at);
    raw->transitions.push_back(wall);
  });
  breakers_[name] = std::move(live);
}

CircuitBreaker& Runner::breaker(const std::string& name) { return *breakers_.at(name)->breaker; }

Result<void> Runner::restore(const StepState& state, int after_step) {
  for (const std::string& name : breakers_in_use(scenario_, after_step))
    if (state.breakers.count(name) == 0)
      return Error{"breakers: no breaker '" + name + "', which steps 1-" + std::to_string(after_step) + " use"};
  if (state.ended_at) clock_.resume_from(*state.ended_at);
  for (const auto& [name, snapshot] : state.breakers) {
    const auto it = breakers_.find(name);
    if (it == breakers_.end()) return Error{"the saved session has a breaker '" + name + "' this scenario does not"};
    if (auto r = it->second->breaker->restore(snapshot); !r)
      return Error{"breakers." + name + ": " + r.error().message};
  }
  for (const auto& [name, list] : state.transitions)
    if (const auto it = breakers_.find(name); it != breakers_.end()) it->second->transitions = list;
  values_ = state.values;
  return {};
}

StepState Runner::capture() {
  StepState s;
  for (auto& [name, live] : breakers_) {
    s.breakers[name] = live->breaker->snapshot();
    s.transitions[name] = live->transitions;
  }
  s.values = values_;
  s.ended_at = clock_.now();
  return s;
}

void Runner::say(const std::string& text) {
  lines_.push_back(text);
  reporter_.action(text);
}

Result<void> Runner::write(const std::string& file, const std::string& content) {
  if (auto w = write_file_atomically(out_dir_ + "/" + file, content); !w) return w;
  written_[file] = {content, std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count()};
  return {};
}

Result<void> Runner::call(const Action& a) {
  Live& live = *breakers_.at(a.breaker);
  std::vector<std::string> words;
  long long refused = 0;
  double slowest_ms = 0;
  for (int i = 0; a.until ? i < a.max : i < a.times; ++i) {
    if (a.until && live.breaker->state() == *a.until) break;
    if (interrupted_.load()) return Error{"interrupted"};
    const auto t0 = SteadyClock::now();
    const Admission admission = live.breaker->try_acquire();
    if (!admission) {
      // Refused at once: the network is never touched.
      const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
      slowest_ms = std::max(slowest_ms, ms);
      ++refused;
      refused_at_.push_back(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count());
      words.emplace_back("refused");
      continue;
    }
    const HttpAnswer answer = http_request(server_, "GET", a.path, call_timeout_);
    const Verdict verdict = live.classifier.classify(answer.observation);
    (void)live.breaker->record(admission.ticket,
                               {verdict, std::chrono::duration_cast<std::chrono::microseconds>(answer.elapsed)});
    slowest_ms = std::max(slowest_ms, std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
    words.push_back(outcome_word(answer));
  }
  if (a.measure) {
    values_["blocked"] = static_cast<double>(refused);
    values_["max_ms"] = slowest_ms;
  }
  std::string text = a.path + " x" + std::to_string(words.size()) + ": " + fold(words);
  if (a.measure) text += " (slowest " + ms_text(slowest_ms) + ")";
  say(text + "  -> " + describe(live.breaker->status()));
  return {};
}

Result<void> Runner::wait(const Action& a) {
  std::chrono::microseconds total = a.duration;
  if (a.wait_for_cooldown) {
    const Status s = breakers_.at(a.breaker)->breaker->status();
    if (s.state != State::Open || !s.open_remaining) {
      say("no cool-down to wait for: the breaker is " + std::string(to_string(s.state)));
      return {};
    }
    total = *s.open_remaining;
  }
  const auto until = SteadyClock::now() + total;
  for (;;) {
    if (interrupted_.load()) return Error{"interrupted"};
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - SteadyClock::now());
    if (left <= 0us) break;
    reporter_.countdown(left, total);
    std::this_thread::sleep_for(std::min<std::chrono::microseconds>(left, 100ms));
  }
  say("waited " + format_seconds(total) + " s" + (a.wait_for_cooldown ? " (what remained of the cool-down)" : ""));
  return {};
}

Result<void> Runner::run_step(int n) {
  const Step& step = scenario_.steps.at(static_cast<std::size_t>(n - 1));
  lines_.clear();
  for (const Action& a : step.actions) {
    if (interrupted_.load()) return Error{"interrupted"};
    switch (a.kind) {
      case Action::Kind::ResetServer: {
        const HttpAnswer r = http_request(server_, "POST", std::string(flaky::path::kAdminReset), call_timeout_);
        const auto j = nlohmann::json::parse(r.body, nullptr, false);
        if (r.observation.status == 200 && j.is_object() && j.contains("epoch") && j["epoch"].is_number_unsigned())
          epoch_ = j["epoch"].get<std::uint64_t>();
        say(r.observation.status == 200 ? "reset the server's record, so this run's evidence is its own"
                                        : "could not reset the server's record: " + r.detail);
        break;
      }
      case Action::Kind::Count: {
        const HttpAnswer r = http_request(server_, "GET", std::string(flaky::path::kCount), call_timeout_);
        const auto j = nlohmann::json::parse(r.body, nullptr, false);
        if (r.observation.status == 200 && j.is_object() && j.contains("count") && j["count"].is_number_integer()) {
          values_[a.as] = j["count"].get<double>();
          say(std::string(flaky::path::kCount) + " -> " + std::to_string(j["count"].get<long long>()));
        } else {
          values_.erase(a.as);
          say(std::string(flaky::path::kCount) + " did not answer with a count: " + r.detail);
        }
        break;
      }
      case Action::Kind::Call:
        if (auto r = call(a); !r) return r;
        break;
      case Action::Kind::Wait:
        if (auto r = wait(a); !r) return r;
        break;
      case Action::Kind::NewBreaker:
        make_breaker(a.breaker);
        say("a new breaker, '" + a.breaker + "', CLOSED with fresh counts");
        break;
      case Action::Kind::WriteState: {
        CircuitBreaker& b = *breakers_.at(a.breaker)->breaker;
        const Status s = b.status();
        if (auto w = write(a.file, state_file(s, b.options(), clock_.to_wall(clock_.now()))); !w) return w;
        say("wrote " + a.file + ": " + describe(s));
        break;
      }
      case Action::Kind::WriteFastfail: {
        for (const char* key : {"before", "after", "blocked", "max_ms"}) {
          if (values_.count(key) == 0) {
            say(a.file + " not written: no value for " + std::string(key) + " (an earlier action failed)");
            return {};
          }
        }
        const std::string text =
            fastfail_file(static_cast<long long>(values_["before"]), static_cast<long long>(values_["after"]),
                          static_cast<long long>(values_["blocked"]), values_["max_ms"]);
        if (auto w = write(a.file, text); !w) return w;
        say("wrote " + a.file + ": " + text.substr(0, text.size() - 1));
        break;
      }
      case Action::Kind::Scene:
        return Error{"a scene action (charges, pool, traffic, fleet) runs with `cb-lab scene`, not as a lab step"};
      case Action::Kind::WriteTransitions: {
        const auto& list = breakers_.at(a.breaker)->transitions;
        if (auto w = write(a.file, transitions_file(list)); !w) return w;
        std::string path;
        for (const Transition& t : list)
          path += (path.empty() ? "" : ", ") + std::string(to_string(t.from)) + "->" + std::string(to_string(t.to));
        say("wrote " + a.file + ": " + (path.empty() ? "no transitions" : path));
        break;
      }
    }
  }
  return {};
}

}  // namespace cb::lab

// A breaker on the conformance line protocol, written apart from both the engine and the
// grader's model, that can be told to make one of the mistakes students make:
//   bent_breaker [--mistake NAME] [--one-trace]
// NAME: none (a right breaker), minimum-ignored, rate-strict (> for the rate), wait-strict (>
// for the end of the wait), window-never-slides, 4xx-failure, 4xx-success, 4xx-trial (a 4xx in
// HALF_OPEN takes a trial slot), one-trial, settings-ignored, wait-ignored (the lab's 3000 ms
// whatever the settings say), carries-state (a new settings line keeps the last trace's window
// and state), hangs-in-half-open (once HALF_OPEN, never answers again), slow-after-first-start (a right
// breaker whose every process but the first never answers in time), no-cap (HALF_OPEN lets every trial
// begin, however many are in flight), late-counted (a result counted in whatever state it comes back to,
// CLOSED or HALF_OPEN, not only the one its call began in). It answers many traces in one process
// ("traces": "many"), or with --one-trace one, and takes calls in flight ("in_flight": true) unless told
// --one-at-a-time: as programs written before those parts of the protocol do. The conformance tests run it
// through cb-grade --conformance as a real process.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Settings {
  int window = 10;
  int minimum = 5;
  int rate = 50;
  double wait_ms = 3000;
  int trials = 3;
};

class Breaker {
 public:
  Breaker(Settings s, std::string mistake) : s_(s), mistake_(std::move(mistake)) {}

  // A call begins at t: the state's generation when it is let through.
  std::optional<std::uint64_t> allow(double t) {
    if (state_ == "OPEN") {
      const double since = t - opened_at_;
      const double wait = is("wait-ignored") ? 3000 : s_.wait_ms;
      if (is("wait-strict") ? since <= wait : since < wait) return std::nullopt;
      move_to("HALF_OPEN");
      trial_results_.clear();
      admitted_ = 0;
    }
    if (state_ == "HALF_OPEN") {
      if (!is("no-cap") && admitted_ >= s_.trials) return std::nullopt;
      ++admitted_;
    }
    return generation_;
  }

  // The call let through in `generation` completes at t.
  void record(std::uint64_t generation, double t, bool timed_out, int status) {
    if (generation != generation_ && !(is("late-counted") && state_ != "OPEN")) return;
    const bool is_4xx = !timed_out && status >= 400 && status < 500;
    const bool failure = timed_out || status >= 500 || (is("4xx-failure") && is_4xx);
    const bool ignored = is_4xx && !is("4xx-failure") && !is("4xx-success") && !(is("4xx-trial") && state_ != "CLOSED");
    if (ignored) {
      if (state_ == "HALF_OPEN") --admitted_;  // the trial told nothing: its permit is free again
      return;
    }
    if (state_ == "HALF_OPEN") {
      trial_results_.push_back(failure);
      const std::size_t needed = is("one-trial") ? 1U : static_cast<std::size_t>(s_.trials);
      if (trial_results_.size() == needed) {
        if (reaches(trial_results_)) {
          open(t);
        } else {
          move_to("CLOSED");
          window_.clear();
        }
      }
      return;
    }
    window_.push_back(failure);
    if (!is("window-never-slides") && static_cast<int>(window_.size()) > s_.window) window_.pop_front();
    const int minimum = is("minimum-ignored") ? 1 : s_.minimum;
    if (static_cast<int>(window_.size()) >= minimum && reaches({window_.begin(), window_.end()})) open(t);
  }

  // One call that begins and completes at t; whether it was permitted.
  bool call(double t, bool timed_out, int status) {
    const auto generation = allow(t);
    if (generation) record(*generation, t, timed_out, status);
    return generation.has_value();
  }

  [[nodiscard]] const std::string& state() const { return state_; }
  void renew(Settings s) { s_ = s; }

 private:
  bool is(const char* m) const { return mistake_ == m; }

  bool reaches(const std::vector<bool>& calls) const {
    long failures = 0;
    for (bool f : calls) failures += f ? 1 : 0;
    const long lhs = failures * 100;
    const long rhs = static_cast<long>(s_.rate) * static_cast<long>(calls.size());
    return is("rate-strict") ? lhs > rhs : lhs >= rhs;
  }

  void move_to(const char* state) {
    state_ = state;
    ++generation_;
  }

  void open(double t) {
    move_to("OPEN");
    opened_at_ = t;
    window_.clear();
  }

  Settings s_;
  std::string mistake_;
  std::string state_ = "CLOSED";
  std::deque<bool> window_;
  std::vector<bool> trial_results_;
  int admitted_ = 0;  // HALF_OPEN: trials in flight or counted
  std::uint64_t generation_ = 0;
  double opened_at_ = 0;
};

Settings settings_of(const nlohmann::json& line) {
  Settings s;
  s.window = line.at("window").get<int>();
  s.minimum = line.at("minimum_calls").get<int>();
  s.rate = line.at("failure_rate_percent").get<int>();
  s.wait_ms = line.at("wait_in_open_ms").get<double>();
  s.trials = line.at("permitted_in_half_open").get<int>();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mistake = "none";
  bool one_trace = false;
  bool one_at_a_time = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mistake" && i + 1 < argc) mistake = argv[++i];
    if (arg == "--one-trace") one_trace = true;
    if (arg == "--one-at-a-time") one_at_a_time = true;
  }
  // slow-after-first-start: every process after the first (a trace run alone, to see whether an
  // answer is the breaker's own) takes an hour to start, as one started on a machine too busy to
  // run it in time would seem to.
  if (mistake == "slow-after-first-start" && std::fopen(".started", "r") != nullptr)
    std::this_thread::sleep_for(std::chrono::hours{1});
  if (mistake == "slow-after-first-start") std::fclose(std::fopen(".started", "w"));
  std::string line;
  std::optional<Breaker> b;
  std::map<long long, std::uint64_t> in_flight;  // call number -> the generation it was let through in
  const std::string says =
      std::string(one_trace ? "" : ",\"traces\":\"many\"") + (one_at_a_time ? "" : ",\"in_flight\":true");
  while (std::getline(std::cin, line)) {
    const auto msg = nlohmann::json::parse(line);
    if (msg.contains("window")) {
      const Settings s = mistake == "settings-ignored" ? Settings{} : settings_of(msg);
      if (b && mistake == "carries-state")
        b->renew(s);  // the new settings, but the last trace's window and state
      else
        b.emplace(s, mistake);
      in_flight.clear();
      continue;
    }
    const double t = msg.at("t_ms").get<double>();
    if (msg.contains("begin")) {
      const auto generation = b->allow(t);
      if (generation) in_flight[msg.at("begin").get<long long>()] = *generation;
      std::printf("{\"decision\":\"%s\",\"state\":\"%s\"%s}\n", generation ? "permitted" : "rejected",
                  b->state().c_str(), says.c_str());
      std::fflush(stdout);
      continue;
    }
    const auto& result = msg.at("result");
    if (msg.contains("end")) {
      const auto it = in_flight.find(msg.at("end").get<long long>());
      if (it != in_flight.end()) {
        b->record(it->second, t, result.is_string(), result.is_string() ? 0 : result.get<int>());
        in_flight.erase(it);
      }
      std::printf("{\"state\":\"%s\"%s}\n", b->state().c_str(), says.c_str());
      std::fflush(stdout);
      continue;
    }
    const bool timed_out = result.is_string();
    const bool permitted = b->call(t, timed_out, timed_out ? 0 : result.get<int>());
    while (mistake == "hangs-in-half-open" && b->state() == "HALF_OPEN")
      std::this_thread::sleep_for(std::chrono::hours{1});
    std::printf("{\"decision\":\"%s\",\"state\":\"%s\"%s}\n", permitted ? "permitted" : "rejected", b->state().c_str(),
                says.c_str());
    std::fflush(stdout);
  }
  return b ? 0 : 1;
}

// A breaker on the conformance line protocol, written apart from both the engine and the
// grader's model, that can be told to make one of the mistakes students make:
//   bent_breaker [--mistake NAME]
// NAME: none (a right breaker), minimum-ignored, rate-strict (> for the rate), wait-strict (>
// for the end of the wait), window-never-slides, 4xx-failure, one-trial, settings-ignored.
// The conformance tests run it through cb-grade --conformance as a real process.
#include <cstdio>
#include <deque>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
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

  // One call completing at t; whether it was permitted.
  bool call(double t, bool timed_out, int status) {
    const bool failure = timed_out || status >= 500 || (is("4xx-failure") && status >= 400);
    const bool ignored = !failure && status >= 400 && status < 500;
    if (state_ == "OPEN") {
      const double since = t - opened_at_;
      if (is("wait-strict") ? since <= s_.wait_ms : since < s_.wait_ms) return false;
      state_ = "HALF_OPEN";
      trial_results_.clear();
    }
    if (ignored) return true;
    if (state_ == "HALF_OPEN") {
      trial_results_.push_back(failure);
      const std::size_t needed = is("one-trial") ? 1U : static_cast<std::size_t>(s_.trials);
      if (trial_results_.size() == needed) {
        if (reaches(trial_results_)) {
          open(t);
        } else {
          state_ = "CLOSED";
          window_.clear();
        }
      }
      return true;
    }
    window_.push_back(failure);
    if (!is("window-never-slides") && static_cast<int>(window_.size()) > s_.window) window_.pop_front();
    const int minimum = is("minimum-ignored") ? 1 : s_.minimum;
    if (static_cast<int>(window_.size()) >= minimum && reaches({window_.begin(), window_.end()})) open(t);
    return true;
  }

  [[nodiscard]] const std::string& state() const { return state_; }

 private:
  bool is(const char* m) const { return mistake_ == m; }

  bool reaches(const std::vector<bool>& calls) const {
    long failures = 0;
    for (bool f : calls) failures += f ? 1 : 0;
    const long lhs = failures * 100;
    const long rhs = static_cast<long>(s_.rate) * static_cast<long>(calls.size());
    return is("rate-strict") ? lhs > rhs : lhs >= rhs;
  }

  void open(double t) {
    state_ = "OPEN";
    opened_at_ = t;
    window_.clear();
  }

  Settings s_;
  std::string mistake_;
  std::string state_ = "CLOSED";
  std::deque<bool> window_;
  std::vector<bool> trial_results_;
  double opened_at_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string mistake = "none";
  if (argc == 3 && std::string(argv[1]) == "--mistake") mistake = argv[2];
  std::string line;
  if (!std::getline(std::cin, line)) return 1;
  const auto first = nlohmann::json::parse(line);
  Settings s;
  if (mistake != "settings-ignored") {
    s.window = first.at("window").get<int>();
    s.minimum = first.at("minimum_calls").get<int>();
    s.rate = first.at("failure_rate_percent").get<int>();
    s.wait_ms = first.at("wait_in_open_ms").get<double>();
    s.trials = first.at("permitted_in_half_open").get<int>();
  }
  Breaker b(s, mistake);
  while (std::getline(std::cin, line)) {
    const auto call = nlohmann::json::parse(line);
    const auto& result = call.at("result");
    const bool timed_out = result.is_string();
    const bool permitted = b.call(call.at("t_ms").get<double>(), timed_out, timed_out ? 0 : result.get<int>());
    std::printf("{\"decision\":\"%s\",\"state\":\"%s\"}\n", permitted ? "permitted" : "rejected", b.state().c_str());
    std::fflush(stdout);
  }
  return 0;
}

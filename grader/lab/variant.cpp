#include "cb/grade/variant.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cb/bounded_file.h"
#include "cb/flaky/endpoints.h"
#include "cb/hmac_sha256.h"

namespace cb::grade {
namespace {

// The ranges: docs/TEACHING.md gives the reasons for each bound.
constexpr int kWindowLow = 8, kWindowHigh = 12;
constexpr int kMinimumLow = 4, kMinimumHigh = 6;
constexpr int kRateLow = 40, kRateHigh = 60;
constexpr int kWaitLowMs = 2000, kWaitHighMs = 4000, kWaitStepMs = 500;
constexpr int kTrialsLow = 2, kTrialsHigh = 4;

// Versioned, so a change of how numbers are drawn is a new list, never a silent reshuffle.
constexpr std::string_view kDerivation = "cb-lab variant 1\n";

}  // namespace

LabRules rules_with(const LabRules& base, const LabNumbers& n) {
  LabRules r = base;
  r.window = n.window;
  r.minimum_calls = n.minimum_calls;
  r.failure_rate = n.failure_rate;
  r.wait_ms = n.wait_ms;
  r.trials = n.trials;
  return r;
}

namespace {

std::string ms_duration(int ms) { return std::to_string(ms) + "ms"; }

// A whole number as one (the kits compare failures x 100 with rate x calls in integers).
nlohmann::ordered_json number(double v) {
  if (v == static_cast<double>(static_cast<long long>(v))) return static_cast<long long>(v);
  return v;
}

}  // namespace

std::string LabNumbers::text() const {
  char wait[32];
  std::snprintf(wait, sizeof wait, "%g", wait_ms / 1000.0);
  return "window " + std::to_string(window) + ", minimum " + std::to_string(minimum_calls) + ", " +
         std::to_string(failure_rate) + "%, " + wait + " s, " + std::to_string(trials) + " trials";
}

LabNumbers numbers_of(const LabRules& r) {
  return {r.window, r.minimum_calls, static_cast<int>(r.failure_rate), static_cast<int>(r.wait_ms), r.trials};
}

std::string missing_trap(const LabSpec& spec, const LabNumbers& n) {
  const LabRules r = rules_with(spec.rules, n);
  const int fast = spec.script.fast;
  const int burst = spec.script.burst;
  const TripPoint ge = trip_point(r, fast, burst, false);
  const TripPoint gt = trip_point(r, fast, burst, true);
  if (ge.at == 0) return "the breaker never opens within step 3";
  if (ge.at >= burst) return "nothing of step 3 is refused, so OPEN does not show there";
  if (gt.at == ge.at) return "> and >= open the breaker at the same call";
  if (gt.at == 0) return "a > breaker never opens within step 3 (it is charged as one that never opened)";
  if (fast + ge.at > n.window) return "the window no longer holds every call at the trip";
  if (n.trials < 2) return "one trial and all of them close the breaker at the same moment";
  if (n.wait_ms < kWaitLowMs || n.wait_ms > kWaitHighMs) return "the wait is outside 2-4 s";
  return {};
}

std::vector<LabNumbers> variant_numbers(const LabSpec& base) {
  std::vector<LabNumbers> out;
  for (int w = kWindowLow; w <= kWindowHigh; ++w)
    for (int m = kMinimumLow; m <= kMinimumHigh; ++m)
      for (int rate = kRateLow; rate <= kRateHigh; ++rate)
        for (int wait = kWaitLowMs; wait <= kWaitHighMs; wait += kWaitStepMs)
          for (int t = kTrialsLow; t <= kTrialsHigh; ++t)
            if (const LabNumbers n{w, m, rate, wait, t}; missing_trap(base, n).empty()) out.push_back(n);
  return out;
}

Result<std::string> read_course_key(const std::string& path) {
  auto text = read_bounded_file(path, 4096, "course key");
  if (!text) return text.error();
  std::string key = *text;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.size() < 16)
    return Error{path + ": a course key is at least 16 bytes (make one with: head -c 32 /dev/urandom | base64 > " +
                 path + ")"};
  return key;
}

Result<std::string> student_id(std::string_view raw) {
  std::size_t b = 0, e = raw.size();
  while (b < e && (raw[b] == ' ' || raw[b] == '\t')) ++b;
  while (e > b && (raw[e - 1] == ' ' || raw[e - 1] == '\t' || raw[e - 1] == '\r' || raw[e - 1] == '\n')) --e;
  std::string id(raw.substr(b, e - b));
  if (id.empty() || id.size() > 200) return Error{"a student id is 1 to 200 characters"};
  for (char& c : id) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return Error{"a student id has no control characters"};
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return id;
}

Result<LabSpec> with_numbers(const LabSpec& base, const LabNumbers& n, std::string student) {
  // Named as the key reads the id, whoever calls: a regrade of a kept "Ada@Uni.edu" says the same
  // "student ada@uni.edu's numbers" its batch did.
  if (!student.empty())
    if (auto id = student_id(student)) student = std::move(*id);
  nlohmann::json j = nlohmann::json::parse(base.source());
  auto& m = j["breakers"]["main"];
  m["window_size"] = n.window;
  m["minimum_calls"] = n.minimum_calls;
  m["failure_rate"] = n.failure_rate;
  m["wait_in_open"] = ms_duration(n.wait_ms);
  m["permitted_in_half_open"] = n.trials;
  auto spec = VariantMaker::make(j.dump(2), std::move(student), n.text());
  if (spec) {
    spec->handout = base.handout;
    spec->sha256 = base.sha256;
  }
  return spec;
}

Result<std::shared_ptr<const LabSpec>> variant_spec(const LabSpec& base, std::string_view raw_student,
                                                    std::string_view course_key) {
  auto student = student_id(raw_student);
  if (!student) return student.error();
  const std::vector<LabNumbers> all = variant_numbers(base);
  if (all.empty()) return Error{"the lab's script leaves no numbers in the ranges that keep every trap"};
  const Digest d = hmac_sha256(course_key, std::string(kDerivation) + *student);
  std::uint64_t pick = 0;
  for (std::size_t i = 0; i < 8; ++i) pick = pick << 8 | d[i];
  auto spec = with_numbers(base, all[pick % all.size()], *student);
  if (!spec) return spec.error();
  return std::shared_ptr<const LabSpec>(std::make_shared<LabSpec>(std::move(*spec)));
}

Result<LabNumbers> numbers_of_settings(std::string_view text, const std::string& name) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{name + ": not a JSON object"};
  auto whole = [&](const char* key, int& out) -> Result<void> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number() || it->get<double>() != static_cast<double>(it->get<long long>()) ||
        it->get<long long>() < 1 || it->get<long long>() > 1000000)
      return Error{name + ": " + key + ": expected a whole number"};
    out = static_cast<int>(it->get<long long>());
    return {};
  };
  LabNumbers n;
  CB_TRY_VOID(whole("window_size", n.window));
  CB_TRY_VOID(whole("minimum_calls", n.minimum_calls));
  CB_TRY_VOID(whole("failure_rate_percent", n.failure_rate));
  CB_TRY_VOID(whole("wait_in_open_ms", n.wait_ms));
  CB_TRY_VOID(whole("permitted_in_half_open", n.trials));
  return n;
}

Result<LabSpec> spec_of_settings_file(const LabSpec& base, const std::string& path) {
  const auto text = read_bounded_file(path, 64 << 10, "settings");
  if (!text) return text.error();
  auto numbers = numbers_of_settings(*text, path);
  if (!numbers) return numbers.error();
  auto spec = with_numbers(base, *numbers, "");
  if (!spec) return Error{path + ": " + spec.error().message};
  return spec;
}

std::string kit_settings_json(const LabSpec& spec) {
  // One key a line: the C++ kit reads it without a JSON library.
  nlohmann::ordered_json j{{"numbers", spec.numbers_name()},
                           {"window_size", spec.rules.window},
                           {"minimum_calls", spec.rules.minimum_calls},
                           {"failure_rate_percent", number(spec.rules.failure_rate)},
                           {"wait_in_open_ms", number(spec.rules.wait_ms)},
                           {"permitted_in_half_open", spec.rules.trials},
                           {"call_timeout_ms", number(spec.rules.call_timeout_ms)},
                           {"fast", spec.script.fast},
                           {"burst", spec.script.burst},
                           {"blocked", spec.script.blocked},
                           {"trials_max", spec.script.trials_max},
                           {"bad", spec.script.bad},
                           {"server", flaky::default_url()},
                           {"count_path", std::string(flaky::path::kCount)},
                           {"fast_path", spec.script.fast_path},
                           {"fail_path", spec.script.fail_path},
                           {"bad_path", spec.script.bad_path},
                           {"state_file", spec.files.state},
                           {"fastfail_file", spec.files.fastfail},
                           {"ignore_file", spec.files.ignore},
                           {"transitions_file", spec.files.transitions}};
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    out += std::string(first ? "" : ",\n") + "  \"" + key + "\": " + value.dump();
    first = false;
  }
  return out + "\n}\n";
}

std::string settings_table(const LabSpec& spec) {
  const auto& v = spec.values();
  return "| setting | value |\n"
         "|---|---|\n"
         "| window: the recent calls the failure rate is judged over | " +
         v.at("window") +
         " calls |\n"
         "| minimum calls before any judgement | " +
         v.at("minimum_calls") +
         " |\n"
         "| failure rate that opens the breaker | " +
         v.at("failure_rate") +
         "% or more |\n"
         "| time in OPEN before trial calls (the cool-down) | " +
         v.at("wait") +
         " (production systems often use 30 s) |\n"
         "| trial calls permitted in HALF_OPEN, judged together | " +
         v.at("trials") +
         " |\n"
         "| what counts as a failure | 5xx and no answer at all (timeout, refused, reset); never 4xx |\n"
         "| per-call timeout | " +
         v.at("call_timeout") + " (without one, a hanging server never produces a failure to count) |\n";
}

std::string handout_text(const LabSpec& spec) {
  return spec.fill(embedded_handout_text(), {{"settings_table", settings_table(spec)}});
}

}  // namespace cb::grade

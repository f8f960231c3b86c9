#include "cb/grade/lab_spec.h"

#include "cb/grade/variant.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>

#include "cb/bounded_file.h"
#include "cb/decimal_time.h"
#include "cb/flaky/endpoints.h"
#include "cb/hmac_sha256.h"

namespace cb::grade {
namespace {

using nlohmann::json;

}  // namespace

TripPoint trip_point(const LabRules& r, int fast, int burst, bool strict) {
  std::deque<bool> window;  // true: a failure
  auto push = [&](bool failed) {
    window.push_back(failed);
    if (static_cast<int>(window.size()) > r.window) window.pop_front();
  };
  for (int i = 0; i < fast; ++i) push(false);
  for (int k = 1; k <= burst; ++k) {
    push(true);
    const int calls = static_cast<int>(window.size());
    const int failures = static_cast<int>(std::count(window.begin(), window.end(), true));
    if (calls < r.minimum_calls) continue;
    const double lhs = failures * 100.0;
    const double rhs = r.failure_rate * calls;
    if (strict ? lhs > rhs : lhs >= rhs) return {k, failures, calls};
  }
  return {};
}

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string seconds_words(double ms) {
  return format_seconds(std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0))) + " s";
}

std::string count_word(std::size_t n) {
  constexpr std::array<std::string_view, 11> kWords{"no",  "one",   "two",   "three", "four", "five",
                                                    "six", "seven", "eight", "nine",  "ten"};
  return n < kWords.size() ? std::string(kWords[n]) : std::to_string(n);
}

// Reads one object's fields, naming the path of the one that is wrong.
struct Reader {
  const std::string& file;
  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  Error error(const std::string& path, const std::string& what) const {
    return Error{file + ": " + path + ": " + what};
  }

  Result<const json*> member(const json& j, const std::string& path, const char* key) const {
    if (!j.is_object()) return error(path, "expected an object");
    const auto it = j.find(key);
    if (it == j.end()) return error(join(path, key), "missing (the lab spec writes it out)");
    return &*it;
  }
  Result<double> number(const json& j, const std::string& path, const char* key, double low, double high) const {
    CB_TRY(v, member(j, path, key));
    if (!(*v)->is_number() || (*v)->get<double>() < low || (*v)->get<double>() > high)
      return error(join(path, key), "expected a number from " + number_text(low) + " to " + number_text(high));
    return (*v)->get<double>();
  }
  Result<int> whole(const json& j, const std::string& path, const char* key, int low, int high) const {
    CB_TRY(v, member(j, path, key));
    if (!(*v)->is_number_integer() || (*v)->get<long long>() < low || (*v)->get<long long>() > high)
      return error(join(path, key),
                   "expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
    return static_cast<int>((*v)->get<long long>());
  }
  Result<std::string> text(const json& j, const std::string& path, const char* key) const {
    CB_TRY(v, member(j, path, key));
    if (!(*v)->is_string() || (*v)->get_ref<const std::string&>().empty())
      return error(join(path, key), "expected a non-empty string");
    return (*v)->get<std::string>();
  }
  Result<double> millis(const json& j, const std::string& path, const char* key) const {
    CB_TRY(t, text(j, path, key));
    auto d = parse_duration(*t);
    if (!d) return error(join(path, key), d.error().message);
    return static_cast<double>(d->count()) / 1000.0;
  }
};

Result<LabRules> read_rules(const Reader& r, const json& root) {
  CB_TRY(breakers, r.member(root, "", "breakers"));
  CB_TRY(main, r.member(**breakers, "breakers", "main"));
  const std::string at = "breakers.main";
  const json& m = **main;
  LabRules rules;
  CB_TRY(window, r.whole(m, at, "window_size", 1, 1000));
  CB_TRY(minimum, r.whole(m, at, "minimum_calls", 1, 1000));
  CB_TRY(rate, r.number(m, at, "failure_rate", 1, 100));
  CB_TRY(slow_rate, r.number(m, at, "slow_call_rate", 1, 100));
  CB_TRY(slow, r.millis(m, at, "slow_call_duration"));
  CB_TRY(wait, r.millis(m, at, "wait_in_open"));
  CB_TRY(trials, r.whole(m, at, "permitted_in_half_open", 1, 1000));
  if (*minimum > *window) return r.error(at + ".minimum_calls", "is more than window_size");
  rules = {*window, *minimum, *rate, *slow_rate, *slow, *wait, *trials};
  return rules;
}

// The first action of `kind` in a step's "do".
const json* action_of(const json& step, std::string_view kind) {
  const auto it = step.find("do");
  if (it == step.end() || !it->is_array()) return nullptr;
  for (const json& a : *it)
    if (a.is_object() && a.value("action", "") == kind) return &a;
  return nullptr;
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

std::string_view LabFiles::of(std::string_view role) const noexcept {
  if (role == "state") return state;
  if (role == "fastfail") return fastfail;
  if (role == "ignore") return ignore;
  if (role == "transitions") return transitions;
  return {};
}

Result<LabSpec> parse_lab_spec(std::string_view json_text, const std::string& name) {
  return parse_spec(json_text, name, {}, {});
}

Result<LabSpec> VariantMaker::make(std::string_view json_text, std::string student, std::string variant) {
  const std::string name = "the variant of " + student;  // before the id is moved away
  return parse_spec(json_text, name, std::move(student), std::move(variant));
}

namespace {

// The words a message template may name ({window}, {trip_at_nth}, ...), from the spec's numbers.
std::map<std::string, std::string, std::less<>> values_of(const LabSpec& spec) {
  std::map<std::string, std::string, std::less<>> v;
  v["window"] = std::to_string(spec.rules.window);
  v["minimum_calls"] = std::to_string(spec.rules.minimum_calls);
  v["failure_rate"] = number_text(spec.rules.failure_rate);
  v["slow_call_rate"] = number_text(spec.rules.slow_call_rate);
  v["wait"] = seconds_words(spec.rules.wait_ms);
  v["trials"] = std::to_string(spec.rules.trials);
  v["trials_nth"] = nth(static_cast<std::size_t>(spec.rules.trials));
  v["fast"] = std::to_string(spec.script.fast);
  v["burst"] = std::to_string(spec.script.burst);
  v["blocked"] = std::to_string(spec.script.blocked);
  v["bad"] = std::to_string(spec.script.bad);
  v["trip_at"] = std::to_string(spec.trip_at);
  v["trip_at_nth"] = nth(static_cast<std::size_t>(spec.trip_at));
  v["trip_next_nth"] = nth(static_cast<std::size_t>(spec.trip_at) + 1);
  v["trip_failures"] = std::to_string(spec.trip_failures);
  v["trip_calls"] = std::to_string(spec.trip_calls);
  v["max_refusal_ms"] = number_text(spec.max_refusal_ms);
  v["call_timeout"] = seconds_words(spec.rules.call_timeout_ms);
  v["numbers"] = spec.numbers_name();
  v["state_file"] = spec.files.state;
  v["fastfail_file"] = spec.files.fastfail;
  v["ignore_file"] = spec.files.ignore;
  v["transitions_file"] = spec.files.transitions;
  v["fast_path"] = spec.script.fast_path;
  v["fail_path"] = spec.script.fail_path;
  v["bad_path"] = spec.script.bad_path;
  v["count_path"] = std::string(flaky::path::kCount);
  v["transition_count"] = std::to_string(spec.transitions.size());
  v["transition_words"] = count_word(spec.transitions.size());
  std::string list;
  for (std::size_t i = 0; i < spec.transitions.size(); ++i) list += (i == 0 ? "" : ", ") + spec.transitions[i];
  v["transition_list"] = list;
  return v;
}

}  // namespace

Result<LabSpec> parse_spec(std::string_view json_text, const std::string& name, std::string student,
                           std::string variant) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    if (const auto at = what.find(" at line "); at != std::string::npos) what = what.substr(at + 4);
    return Error{name + ": " + what};
  }
  const Reader r{name};
  LabSpec spec;
  spec.source_ = std::string(json_text);
  spec.sha256 = cb::hex(cb::sha256(json_text));
  spec.student = std::move(student);
  spec.variant = std::move(variant);
  CB_TRY(rules, read_rules(r, root));
  spec.rules = *rules;
  spec.handout = *rules;
  CB_TRY(timeout, r.millis(root, "", "call_timeout"));
  spec.rules.call_timeout_ms = *timeout;

  CB_TRY(grading, r.member(root, "", "grading"));
  CB_TRY(max_ms, r.number(**grading, "grading", "max_refusal_ms", 1, 10000));
  spec.max_refusal_ms = *max_ms;
  CB_TRY(transitions, r.member(**grading, "grading", "transitions"));
  if (!(*transitions)->is_array() || (*transitions)->empty())
    return r.error("grading.transitions", "expected an array of \"FROM->TO\"");
  for (const json& t : **transitions) {
    if (!t.is_string() || t.get_ref<const std::string&>().find("->") == std::string::npos)
      return r.error("grading.transitions", "expected an array of \"FROM->TO\"");
    spec.transitions.push_back(t.get<std::string>());
  }

  // The steps: their ids in the grader's order, their titles, and the numbers their actions send.
  CB_TRY(steps_j, r.member(root, "", "steps"));
  const json& steps = **steps_j;
  // Steps after the lab's are the runner's alone: a scenario may add some, and they are not graded.
  if (!steps.is_array() || steps.size() < kStepIds.size())
    return r.error("steps", "expected the lab's " + std::to_string(kStepIds.size()) + " steps");
  auto call_in = [&](std::size_t i) -> Result<const json*> {
    const json* a = action_of(steps[i], "call");
    if (a == nullptr) return r.error("steps[" + std::to_string(i) + "].do", "expected a \"call\" action");
    return a;
  };
  auto file_in = [&](std::size_t i, std::string_view kind, std::string& out) -> Result<void> {
    const json* a = action_of(steps[i], kind);
    const std::string at = "steps[" + std::to_string(i) + "].do";
    if (a == nullptr) return r.error(at, "expected a \"" + std::string(kind) + "\" action");
    CB_TRY(file, r.text(*a, at, "file"));
    out = *file;
    return {};
  };
  for (std::size_t i = 0; i < kStepIds.size(); ++i) {
    const std::string at = "steps[" + std::to_string(i) + "]";
    CB_TRY(id, r.text(steps[i], at, "id"));
    if (*id != kStepIds[i])
      return r.error(at + ".id", "expected \"" + std::string(kStepIds[i]) + "\" (the grader grades the lab's script)");
    spec.step_ids_.push_back(*id);
  }
  auto times = [&](std::size_t i, int& out, std::string* path) -> Result<void> {
    CB_TRY(a, call_in(i));
    out = (*a)->value("times", 1);
    if (path != nullptr) *path = (*a)->value("path", "");
    return {};
  };
  CB_TRY_VOID(times(step_index(StepRole::Fast), spec.script.fast, &spec.script.fast_path));
  CB_TRY_VOID(times(step_index(StepRole::Trip), spec.script.burst, &spec.script.fail_path));
  CB_TRY_VOID(times(step_index(StepRole::Refused), spec.script.blocked, nullptr));
  CB_TRY_VOID(times(step_index(StepRole::Ignore4xx), spec.script.bad, &spec.script.bad_path));
  {
    CB_TRY(a, call_in(step_index(StepRole::Trials)));
    spec.script.trials_max = (*a)->value("max", 20);
  }
  CB_TRY_VOID(file_in(step_index(StepRole::Fast), "write_state", spec.files.state));
  CB_TRY_VOID(file_in(step_index(StepRole::Refused), "write_fastfail", spec.files.fastfail));
  CB_TRY_VOID(file_in(step_index(StepRole::Ignore4xx), "write_state", spec.files.ignore));
  CB_TRY_VOID(file_in(step_index(StepRole::Log), "write_transitions", spec.files.transitions));

  const TripPoint trip = trip_point(spec.rules, spec.script.fast, spec.script.burst, false);
  if (trip.at == 0)
    return r.error("breakers.main", "these numbers never open the breaker within step 3's " +
                                        std::to_string(spec.script.burst) + " failing calls");
  spec.trip_at = trip.at;
  spec.trip_failures = trip.failures;
  spec.trip_calls = trip.calls;
  spec.trip_at_gt = trip_point(spec.rules, spec.script.fast, spec.script.burst, true).at;

  spec.values_ = values_of(spec);

  for (std::size_t i = 0; i < kStepIds.size(); ++i) {
    CB_TRY(title, r.text(steps[i], "steps[" + std::to_string(i) + "]", "title"));
    spec.step_titles_.push_back(spec.fill(*title));
  }

  return spec;
}

Result<std::shared_ptr<const LabSpec>> load_lab_spec(const std::string& path) {
  // The lab's spec is 12 KiB; 1 MiB is far past any a person writes.
  auto text = read_bounded_file(path, 1U << 20, "lab spec");
  if (!text) return text.error();
  auto spec = parse_lab_spec(*text, path);
  if (!spec) return spec.error();
  return std::shared_ptr<const LabSpec>(std::make_shared<LabSpec>(std::move(*spec)));
}

const LabSpec& lab_spec() {
  // Checked at build time by the tests, which parse the same text; a build whose spec does not
  // parse cannot grade at all, so it stops at once and says why.
  static const LabSpec spec = [] {
    auto s = parse_lab_spec(embedded_lab_spec_text(), "lab.json (built in)");
    if (!s) throw std::runtime_error(s.error().message);
    return std::move(*s);
  }();
  return spec;
}

std::string LabSpec::numbers_name() const {
  if (student.empty() && variant.empty()) return "the handout's numbers";
  if (student.empty()) return "the numbers of lab-settings.json (" + variant + ")";
  return "student " + student + "'s numbers (" + variant + ")";
}

std::string LabSpec::numbers_said() const {
  std::string said = numbers_name();
  if (student.empty() && variant.empty()) said += " (" + numbers_of(rules).text() + ")";
  if (!numbers_from.empty()) said += ", from " + numbers_from;
  return said;
}

std::string_view LabSpec::step_title(int n) const noexcept {
  return n >= 1 && n <= steps() ? std::string_view(step_titles_[static_cast<std::size_t>(n - 1)]) : "";
}

std::string_view LabSpec::step_id(int n) const noexcept {
  return n >= 1 && n <= steps() ? std::string_view(step_ids_[static_cast<std::size_t>(n - 1)]) : "";
}

std::string LabSpec::fill(std::string_view text, Vars vars) const {
  std::string out;
  out.reserve(text.size() + 32);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 1, close - open - 1);
    const bool is_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    const std::string* value = nullptr;
    if (is_name) {
      for (const auto& [k, val] : vars)
        if (k == name) value = &val;
      if (value == nullptr)
        if (const auto it = values_.find(name); it != values_.end()) value = &it->second;
    }
    out.append(text.substr(i, open - i));
    if (value != nullptr) {
      out += *value;
      i = close + 1;
    } else {
      out += '{';
      i = open + 1;
    }
  }
  out.append(text.substr(i));
  return out;
}

}  // namespace cb::grade

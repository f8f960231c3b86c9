#include "cb/lab/scenario.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/breaker/profiles.h"
#include "cb/decimal_time.h"
#include "cb/grade/json_limits.h"
#include "cb/lab/http_call.h"
#include "cb/lab/scenes.h"
#include "json_fields.h"
#include "cb/flaky/endpoints.h"

namespace cb::lab {
namespace {

Result<BreakerSpec> breaker_spec(const json& j, const std::string& path) {
  if (!j.is_object()) return Error{path + ": expected an object"};
  Fields f(j, path);
  CB_TRY(profile, f.text("profile"));
  auto base = profiles::by_name(profile->value_or("lab"));
  if (!base) return Error{f.at("profile") + ": " + base.error().message};
  BreakerSpec spec;
  BreakerOptions o = std::move(*base);
  CB_TRY(wait, f.duration("wait_in_open"));
  if (*wait) o.cooldown.base = **wait;
  CB_TRY(window, f.whole("window_size", 1, 100000));
  if (*window) o.trip.window.size = static_cast<int>(**window);
  CB_TRY(minimum, f.whole("minimum_calls", 1, 100000));
  if (*minimum) o.trip.window.minimum_calls = static_cast<int>(**minimum);
  CB_TRY(rate, f.number("failure_rate"));
  if (*rate) o.trip.failure_rate_percent = **rate;
  CB_TRY(slow_rate, f.number("slow_call_rate"));
  if (*slow_rate) o.trip.slow_call_rate_percent = **slow_rate;
  CB_TRY(slow, f.duration("slow_call_duration"));
  if (*slow) o.trip.slow_call_duration = **slow;
  CB_TRY(consecutive, f.whole("consecutive_failures", 0, 100000));
  if (*consecutive) o.trip.consecutive_failures = static_cast<int>(**consecutive);
  CB_TRY(trials, f.whole("permitted_in_half_open", 0, 100000));
  if (*trials) o.half_open.permitted_calls = static_cast<int>(**trials);
  CB_TRY(max_wait, f.duration("max_wait_in_half_open"));
  if (*max_wait) o.half_open.max_wait = **max_wait;
  CB_TRY(rules, f.text("classification"));
  if (*rules) {
    auto c = classify::Classifier::parse(**rules);
    if (!c) return Error{f.at("classification") + ": " + c.error().message};
    spec.classifier = std::move(*c);
  }
  if (auto others = f.no_others(); !others) return others.error();
  auto valid = validate(o);
  if (!valid) return Error{path + ": " + valid.error().message};
  spec.options = valid->get();
  return spec;
}

Result<Action> action(const json& j, const std::string& path, const Scenario& s) {
  if (!j.is_object()) return Error{path + ": expected an object with an \"action\""};
  Fields f(j, path);
  CB_TRY(kind, f.text("action"));
  if (!*kind) return Error{f.at("action") + ": missing"};
  Action a;
  const std::string& k = **kind;
  auto need_breaker = [&]() -> Result<void> {
    auto b = f.text("breaker");
    if (!b) return b.error();
    if (*b) a.breaker = **b;
    if (s.breakers.count(a.breaker) == 0)
      return Error{f.at("breaker") + ": no breaker named '" + a.breaker + "' under \"breakers\""};
    return {};
  };
  auto need_file = [&]() -> Result<void> {
    auto file = f.text("file");
    if (!file) return file.error();
    const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
    if (!*file || (*file)->empty() || (*file)->find('/') != std::string::npos || **file == "." || **file == ".." ||
        std::any_of((*file)->begin(), (*file)->end(), control) || (*file)->size() > kMaxAtomicFileName)
      return Error{f.at("file") + ": expected a file name (no directories, no control characters, at most " +
                   std::to_string(kMaxAtomicFileName) + " bytes)"};
    a.file = **file;
    return {};
  };
  if (k == "reset_server") {
    a.kind = Action::Kind::ResetServer;
  } else if (k == "count") {
    a.kind = Action::Kind::Count;
    CB_TRY(as, f.text("as"));
    if (*as) a.as = **as;
  } else if (k == "call") {
    a.kind = Action::Kind::Call;
    CB_TRY(p, f.text("path"));
    if (!*p) return Error{f.at("path") + ": expected a path such as \"" + std::string(flaky::path::kFast) + "\""};
    if (auto bad = request_path_problem(**p)) return Error{f.at("path") + ": " + *bad};
    a.path = **p;
    CB_TRY(times, f.whole("times", 1, 1000));
    if (*times) a.times = static_cast<int>(**times);
    CB_TRY(until, f.text("until"));
    if (*until) {
      a.until = parse_state(**until);
      if (!a.until) return Error{f.at("until") + ": expected CLOSED, OPEN or HALF_OPEN"};
    }
    CB_TRY(max, f.whole("max", 1, 1000));
    if (*max) a.max = static_cast<int>(**max);
    CB_TRY(measure, f.flag("measure"));
    a.measure = *measure;
    if (auto b = need_breaker(); !b) return b.error();
  } else if (k == "wait") {
    a.kind = Action::Kind::Wait;
    CB_TRY(what, f.text("for"));
    CB_TRY(d, f.duration("duration"));
    if (*what && **what != "cooldown") return Error{f.at("for") + ": the only thing to wait for is \"cooldown\""};
    if (static_cast<bool>(*what) == static_cast<bool>(*d))
      return Error{path + ": a wait takes either \"for\": \"cooldown\" or a \"duration\""};
    a.wait_for_cooldown = static_cast<bool>(*what);
    if (*d) a.duration = **d;
    if (auto b = need_breaker(); !b) return b.error();
  } else if (k == "new_breaker") {
    a.kind = Action::Kind::NewBreaker;
    if (auto b = need_breaker(); !b) return b.error();
  } else if (k == "write_state" || k == "write_transitions") {
    a.kind = k == "write_state" ? Action::Kind::WriteState : Action::Kind::WriteTransitions;
    if (auto file = need_file(); !file) return file.error();
    if (auto b = need_breaker(); !b) return b.error();
  } else if (k == "write_fastfail") {
    a.kind = Action::Kind::WriteFastfail;
    if (auto file = need_file(); !file) return file.error();
  } else if (k == "charges" || k == "pool" || k == "traffic" || k == "fleet") {
    auto spec = parse_scene_action(k, j, path);
    if (!spec) return spec.error();
    const std::string named = std::visit([](const auto& v) { return v.breaker; }, *spec);
    if (named != "none" && s.breakers.count(named) == 0)
      return Error{path + ".breaker: no breaker named '" + named + "' under \"breakers\""};
    a.kind = Action::Kind::Scene;
    a.breaker = named;
    a.scene = std::make_shared<const SceneSpec>(std::move(*spec));
    return a;  // parse_scene_action has checked every field
  } else {
    return Error{f.at("action") + ": '" + k +
                 "' is not an action (reset_server, count, call, wait, new_breaker, write_state, write_fastfail, "
                 "write_transitions, charges, pool, traffic, fleet)"};
  }
  if (auto others = f.no_others(); !others) return others.error();
  return a;
}

}  // namespace

Result<Scenario> parse_scenario(const std::string& text, const std::string& name) {
  // Parsed as the grader parses a submission's JSON: a key twice in one object is refused
  // (nlohmann keeps the last, and a person editing a scenario may have meant the first).
  auto parsed = grade::parse_bounded_json(text);
  if (!parsed) return Error{name + ": " + parsed.error().message};
  const json j = std::move(*parsed);
  auto in_file = [&](const Error& e) { return Error{name + ": " + e.message}; };
  if (!j.is_object()) return Error{name + ": expected a JSON object"};
  Fields f(j, "");
  Scenario s;
  auto n = f.text("name");
  if (!n) return in_file(n.error());
  s.name = n->value_or("scenario");
  auto t = f.text("title");
  if (!t) return in_file(t.error());
  s.title = t->value_or(s.name);
  auto server = f.text("server");
  if (!server) return in_file(server.error());
  s.server = server->value_or(flaky::default_url());
  auto timeout = f.duration("call_timeout");
  if (!timeout) return in_file(timeout.error());
  if (*timeout) {
    if (**timeout < std::chrono::milliseconds(1)) return Error{name + ": call_timeout: must be at least 1ms"};
    s.call_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(**timeout);
  }
  f.use("breakers");
  const auto breakers = j.find("breakers");
  if (breakers == j.end() || !breakers->is_object() || breakers->empty())
    return Error{name + ": breakers: expected an object naming at least one breaker"};
  // {"same_as": "main"}: another breaker with the same numbers, written once.
  for (const auto& [key, value] : breakers->items()) {
    if (value.is_object() && value.contains("same_as")) continue;
    auto spec = breaker_spec(value, "breakers." + key);
    if (!spec) return in_file(spec.error());
    s.breakers.emplace(key, std::move(*spec));
  }
  for (const auto& [key, value] : breakers->items()) {
    if (!value.is_object() || !value.contains("same_as")) continue;
    const std::string at = "breakers." + key + ".same_as";
    const auto& other = value["same_as"];
    if (value.size() != 1 || !other.is_string() || s.breakers.count(other.get<std::string>()) == 0)
      return Error{name + ": " + at + ": expected the name of a breaker written out under \"breakers\", alone"};
    BreakerSpec copy = s.breakers.at(other.get<std::string>());
    s.breakers.emplace(key, std::move(copy));
  }
  f.use("steps");
  const auto steps = j.find("steps");
  if (steps == j.end() || !steps->is_array() || steps->empty())
    return Error{name + ": steps: expected a non-empty array"};
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const std::string path = "steps[" + std::to_string(i) + "]";
    const json& sj = (*steps)[i];
    if (!sj.is_object()) return Error{name + ": " + path + ": expected an object"};
    Fields sf(sj, path);
    Step step;
    auto id = sf.text("id");
    if (!id) return in_file(id.error());
    step.id = id->value_or("");
    auto title = sf.text("title");
    if (!title) return in_file(title.error());
    step.title = title->value_or("step " + std::to_string(i + 1));
    sf.use("do");
    const auto actions = sj.find("do");
    if (actions == sj.end() || !actions->is_array())
      return Error{name + ": " + path + ".do: expected an array of actions"};
    for (std::size_t k = 0; k < actions->size(); ++k) {
      auto a = action((*actions)[k], path + ".do[" + std::to_string(k) + "]", s);
      if (!a) return in_file(a.error());
      step.actions.push_back(std::move(*a));
    }
    if (auto others = sf.no_others(); !others) return in_file(others.error());
    s.steps.push_back(std::move(step));
  }
  // A lab spec (lab_spec.h) also holds the grader's part: how it grades. Its titles name the
  // lab's numbers, filled from the same file.
  if (j.contains("grading")) {
    f.use("grading");
    auto spec = grade::parse_lab_spec(text, name);
    if (!spec) return spec.error();
    for (std::size_t i = 0; i < s.steps.size(); ++i)
      s.steps[i].title = static_cast<int>(i) < spec->steps() ? std::string(spec->step_title(static_cast<int>(i) + 1))
                                                             : spec->fill(s.steps[i].title);
    s.lab_spec = std::make_shared<const grade::LabSpec>(std::move(*spec));
  }
  if (auto others = f.no_others(); !others) return in_file(others.error());
  return s;
}

Result<Scenario> load_scenario(const std::string& path) {
  // The lab's own scenario is 6 KiB; 1 MiB is far past any scenario a person writes.
  auto text = read_bounded_file(path, 1U << 20, "scenario");
  if (!text) return text.error();
  return parse_scenario(*text, path);
}

std::vector<std::string> breakers_in_use(const Scenario& s, int through_step) {
  std::set<std::string> used;
  for (int n = 0; n < through_step && n < static_cast<int>(s.steps.size()); ++n)
    for (const Action& a : s.steps[static_cast<std::size_t>(n)].actions)
      if (a.kind == Action::Kind::Call || a.kind == Action::Kind::NewBreaker || a.kind == Action::Kind::WriteState ||
          (a.kind == Action::Kind::Wait && a.wait_for_cooldown))
        used.insert(a.breaker);
  return {used.begin(), used.end()};
}

std::string scenarios_dir() {
  if (const char* env = std::getenv("CB_SCENARIOS"); env != nullptr && *env != '\0') return env;
  return CB_SCENARIOS_DIR;
}

}  // namespace cb::lab

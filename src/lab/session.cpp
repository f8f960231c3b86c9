#include "cb/lab/session.h"

#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/grade/json_limits.h"

namespace cb::lab {
namespace {

using json = nlohmann::json;

json counters_json(const Counters& c) {
  return {{"permitted", c.permitted},
          {"not_permitted", c.not_permitted},
          {"successes", c.successes},
          {"failures", c.failures},
          {"ignored", c.ignored},
          {"slow", c.slow},
          {"late", c.late},
          {"released", c.released},
          {"transitions", c.transitions}};
}

json snapshot_json(const Snapshot& s) {
  json window = json::array();
  for (const WindowBucket& b : s.window) window.push_back({b.second, b.calls, b.failures, b.slow});
  return {{"state", std::string(to_string(s.state))},
          {"mode", std::string(to_string(s.mode))},
          {"generation", s.generation},
          {"since_us", s.since.time_since_epoch().count()},
          {"cooldown_us", s.cooldown.count()},
          {"failed_trials", s.failed_trials},
          {"consecutive_failures", s.consecutive_failures},
          {"window", window},
          {"trials_admitted", s.trials_admitted},
          {"trial_successes", s.trial_successes},
          {"trial_failures", s.trial_failures},
          {"trial_slow", s.trial_slow},
          {"counters", counters_json(s.counters)}};
}

// Reads a snapshot field by field; errors name the field.
class Reader {
 public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}
  template <class T>
  Result<T> get(const char* key) const {
    const auto it = j_.find(key);
    if (it == j_.end()) return Error{path_ + "." + key + ": missing"};
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string()) return Error{path_ + "." + key + ": expected a string"};
    } else {
      if (!it->is_number_integer()) return Error{path_ + "." + key + ": expected a whole number"};
      if constexpr (std::is_unsigned_v<T>)
        if (it->get<long long>() < 0) return Error{path_ + "." + key + ": must not be negative"};
    }
    return it->get<T>();
  }

 private:
  const json& j_;
  std::string path_;
};

#define CB_READ(var, type, reader, key) \
  auto var = (reader).get<type>(key);   \
  if (!var) return var.error();

Result<Snapshot> snapshot_from(const json& j, const std::string& path) {
  if (!j.is_object()) return Error{path + ": expected an object"};
  Reader r(j, path);
  Snapshot s;
  CB_READ(state, std::string, r, "state");
  const auto st = parse_state(*state);
  if (!st) return Error{path + ".state: '" + *state + "' is not a state"};
  s.state = *st;
  CB_READ(mode, std::string, r, "mode");
  const auto md = parse_mode(*mode);
  if (!md) return Error{path + ".mode: '" + *mode + "' is not a mode"};
  s.mode = *md;
  CB_READ(generation, std::uint64_t, r, "generation");
  s.generation = *generation;
  CB_READ(since, std::int64_t, r, "since_us");
  s.since = TimePoint{Duration{*since}};
  CB_READ(cooldown, std::int64_t, r, "cooldown_us");
  s.cooldown = Duration{*cooldown};
  CB_READ(failed_trials, int, r, "failed_trials");
  s.failed_trials = *failed_trials;
  CB_READ(consecutive, int, r, "consecutive_failures");
  s.consecutive_failures = *consecutive;
  CB_READ(admitted, int, r, "trials_admitted");
  s.trials_admitted = *admitted;
  CB_READ(ok, int, r, "trial_successes");
  s.trial_successes = *ok;
  CB_READ(bad, int, r, "trial_failures");
  s.trial_failures = *bad;
  CB_READ(slow, int, r, "trial_slow");
  s.trial_slow = *slow;
  const auto window = j.find("window");
  if (window == j.end() || !window->is_array()) return Error{path + ".window: expected an array"};
  for (std::size_t i = 0; i < window->size(); ++i) {
    const json& b = (*window)[i];
    if (!b.is_array() || b.size() != 4 || !b[0].is_number_integer() || !b[1].is_number_unsigned() ||
        !b[2].is_number_unsigned() || !b[3].is_number_unsigned())
      return Error{path + ".window[" + std::to_string(i) + "]: expected [second, calls, failures, slow]"};
    s.window.push_back(
        {b[0].get<std::int64_t>(), b[1].get<std::uint32_t>(), b[2].get<std::uint32_t>(), b[3].get<std::uint32_t>()});
  }
  const auto counters = j.find("counters");
  if (counters == j.end() || !counters->is_object()) return Error{path + ".counters: expected an object"};
  Reader c(*counters, path + ".counters");
  std::uint64_t* fields[] = {&s.counters.permitted, &s.counters.not_permitted, &s.counters.successes,
                             &s.counters.failures,  &s.counters.ignored,       &s.counters.slow,
                             &s.counters.late,      &s.counters.released,      &s.counters.transitions};
  const char* names[] = {"permitted", "not_permitted", "successes", "failures",   "ignored",
                         "slow",      "late",          "released",  "transitions"};
  for (std::size_t i = 0; i < 9; ++i) {
    auto v = c.get<std::uint64_t>(names[i]);
    if (!v) return v.error();
    *fields[i] = *v;
  }
  return s;
}

Result<Transition> transition_from(const json& j, const std::string& path) {
  if (!j.is_object()) return Error{path + ": expected an object"};
  Reader r(j, path);
  CB_READ(from, std::string, r, "from");
  CB_READ(to, std::string, r, "to");
  CB_READ(at, std::int64_t, r, "at_us");
  CB_READ(generation, std::uint64_t, r, "generation");
  const auto f = parse_state(*from);
  const auto t = parse_state(*to);
  if (!f || !t) return Error{path + ": from and to must be states"};
  Transition out;
  out.from = *f;
  out.to = *t;
  out.at = TimePoint{Duration{*at}};
  out.generation = *generation;
  // Read back as written, so a step's transitions compare equal to the ones it continues.
  if (const auto reason = j.find("reason"); reason != j.end()) {
    const auto named = reason->is_string() ? parse_reason(reason->get<std::string>()) : std::nullopt;
    if (!named) return Error{path + ".reason: not a reason a breaker gives"};
    out.reason = *named;
  }
  return out;
}

json transition_json(const Transition& t) {
  return {{"from", std::string(to_string(t.from))},
          {"to", std::string(to_string(t.to))},
          {"at_us", t.at.time_since_epoch().count()},
          {"reason", std::string(to_string(t.reason))},
          {"generation", t.generation}};
}

// One step's state, its transitions as what it added to the step before's: {"keep": K, "added":
// [...]} is the first K of the step before's list, then these. A list that does not continue the
// one before (a breaker made anew) keeps 0.
json step_json(const StepState& st, const StepState* before) {
  json breakers = json::object();
  for (const auto& [name, snap] : st.breakers) breakers[name] = snapshot_json(snap);
  json transitions = json::object();
  for (const auto& [name, list] : st.transitions) {
    std::size_t keep = 0;
    if (before != nullptr) {
      if (const auto it = before->transitions.find(name);
          it != before->transitions.end() && it->second.size() <= list.size() &&
          std::equal(it->second.begin(), it->second.end(), list.begin()))
        keep = it->second.size();
    }
    json added = json::array();
    for (std::size_t i = keep; i < list.size(); ++i) added.push_back(transition_json(list[i]));
    transitions[name] = {{"keep", keep}, {"added", added}};
  }
  json out{{"breakers", breakers}, {"transitions", transitions}, {"values", st.values}};
  if (st.ended_at) out["ended_at_us"] = st.ended_at->time_since_epoch().count();
  return out;
}

// A step's state from its file; `before` is the step before's, whose transitions this one's
// continue. Errors name the field, within the file.
Result<StepState> step_from(const json& step, const StepState* before) {
  if (!step.is_object()) return Error{"expected an object"};
  StepState st;
  // Kept in locals: a range-for over step.value(...).items() would iterate a destroyed copy.
  const json breakers = step.value("breakers", json::object());
  const json transitions = step.value("transitions", json::object());
  const json values = step.value("values", json::object());
  for (const auto& [name, snap] : breakers.items()) {
    auto s2 = snapshot_from(snap, "breakers." + name);
    if (!s2) return s2.error();
    st.breakers[name] = *s2;
  }
  for (const auto& [name, entry] : transitions.items()) {
    const std::string at = "transitions." + name;
    if (!entry.is_object() || !entry.contains("keep") || !entry["keep"].is_number_unsigned() ||
        !entry.contains("added") || !entry["added"].is_array())
      return Error{at + ": expected {\"keep\": N, \"added\": [...]}"};
    auto& list = st.transitions[name];
    const auto keep = entry["keep"].get<std::size_t>();
    if (keep > 0) {
      const auto it = before == nullptr ? std::map<std::string, std::vector<Transition>>::const_iterator{}
                                        : before->transitions.find(name);
      if (before == nullptr || it == before->transitions.end() || keep > it->second.size())
        return Error{at + ".keep: more than the step before had"};
      list.assign(it->second.begin(), it->second.begin() + static_cast<std::ptrdiff_t>(keep));
    }
    const json& added = entry["added"];
    for (std::size_t i = 0; i < added.size(); ++i) {
      auto t = transition_from(added[i], at + ".added[" + std::to_string(i) + "]");
      if (!t) return t.error();
      list.push_back(*t);
    }
  }
  for (const auto& [name, value] : values.items()) {
    if (!value.is_number()) return Error{"values." + name + ": expected a number"};
    st.values[name] = value.get<double>();
  }
  if (const auto ended = step.find("ended_at_us"); ended != step.end()) {
    if (!ended->is_number_integer()) return Error{"ended_at_us: expected microseconds since the epoch"};
    st.ended_at = TimePoint{Duration{ended->get<std::int64_t>()}};
  }
  return st;
}

constexpr const char* kAfresh = " (delete DIR/.cb-lab, or run `cb-lab run`, to start afresh)";

Result<json> read_json_file(const std::string& path, const char* what) {
  // A step's file holds its breakers' snapshots, a few KiB; anything past 1 MiB is not one.
  auto text = read_bounded_file(path, 1U << 20, what);
  if (!text) return Error{text.error().message + kAfresh};
  // A damaged file names where: the line and column, or the field, not just "damaged".
  auto j = grade::parse_bounded_json(*text);
  if (!j) return Error{path + ": " + j.error().message + kAfresh};
  if (!j->is_object()) return Error{path + ": expected a JSON object (a " + std::string(what) + ")" + kAfresh};
  return std::move(j).value();
}

}  // namespace

std::string session_path(const std::string& dir) { return dir + "/.cb-lab/session.json"; }
std::string step_path(const std::string& dir, int n) { return dir + "/.cb-lab/steps/" + std::to_string(n) + ".json"; }

Result<Session> load_session(const std::string& dir) {
  const std::string path = session_path(dir);
  struct stat found {};
  if (::lstat(path.c_str(), &found) != 0 && errno == ENOENT) return Session{};  // nothing run yet
  auto index = read_json_file(path, "cb-lab session");
  if (!index) return index.error();
  const json& j = *index;
  auto damaged = [&](const std::string& where, const std::string& why) { return Error{where + ": " + why + kAfresh}; };
  Session s;
  if (j.contains("scenario") && j["scenario"].is_string()) s.scenario = j["scenario"].get<std::string>();
  if (j.contains("server") && j["server"].is_string()) s.server = j["server"].get<std::string>();
  if (j.contains("settings") && j["settings"].is_string()) s.settings = j["settings"].get<std::string>();
  if (j.contains("server_pid") && j["server_pid"].is_number_integer()) s.server_pid = j["server_pid"].get<int>();
  if (!j.contains("steps") || !j["steps"].is_number_unsigned() || j["steps"].get<std::uint64_t>() > 100'000)
    return damaged(path, "steps: expected how many steps have run (a cb-lab session of this version)");
  const int steps = j["steps"].get<int>();
  // Each step ends after the one before it, and none in the future: a step resumes the lab's
  // clock where the last one ended, so a moved end would be waited out (or skipped) as real.
  const auto wall_now = std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch());
  const StepState* before = nullptr;
  for (int n = 1; n <= steps; ++n) {
    const std::string file = step_path(dir, n);
    auto text = read_json_file(file, "cb-lab step state");
    if (!text) return text.error();
    auto st = step_from(*text, before);
    if (!st) return damaged(file, st.error().message);
    if (!st->ended_at) {
      if (!st->breakers.empty()) return damaged(file, "ended_at_us: missing (when the step ended)");
    } else {
      if (st->ended_at->time_since_epoch() > wall_now + std::chrono::minutes(1))
        return damaged(file, "ended_at_us: " + std::to_string(st->ended_at->time_since_epoch().count()) +
                                 " is in the future (a step ends before it is saved)");
      if (before != nullptr && before->ended_at && *st->ended_at < *before->ended_at)
        return damaged(
            file, "ended_at_us: before the end of step " + std::to_string(n - 1) + " (each step runs after the last)");
    }
    before = &(s.after[n] = std::move(*st));
  }
  return s;
}

Result<void> save_session(const std::string& dir, const Session& s, std::optional<int> only) {
  for (const std::string& d : {dir + "/.cb-lab", dir + "/.cb-lab/steps"})
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) return Error{d + ": cannot create: " + std::strerror(errno)};
  // The steps are 1..N, each in its own file, so a run of N steps writes each once: one file of
  // them all, rewritten after every step, cost a run of 400 one-call steps 20 s.
  int last = 0;
  for (const auto& [n, st] : s.after) {
    if (n != last + 1) return Error{"the session's steps are not 1.." + std::to_string(n)};
    last = n;
    if (only && n != *only) continue;
    const auto before = s.after.find(n - 1);
    const json step = step_json(st, before == s.after.end() ? nullptr : &before->second);
    if (auto w = write_file_atomically(step_path(dir, n), step.dump(1) + "\n"); !w) return w;
  }
  json j{{"version", 2}, {"scenario", s.scenario}, {"server", s.server}, {"steps", last}};
  if (s.server_pid) j["server_pid"] = *s.server_pid;
  if (!s.settings.empty()) j["settings"] = s.settings;
  if (auto w = write_file_atomically(session_path(dir), j.dump(1) + "\n"); !w) return w;
  // Steps past the last are what a run longer than this one left: gone, so none is read later.
  for (int n = last + 1;; ++n)
    if (::unlink(step_path(dir, n).c_str()) != 0) break;
  return {};
}

}  // namespace cb::lab

#include "cb/lab/session.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"

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
  return out;
}

}  // namespace

std::string session_path(const std::string& dir) { return dir + "/.cb-lab/session.json"; }

Result<Session> load_session(const std::string& dir) {
  const std::string path = session_path(dir);
  auto damaged = [&](const std::string& why) {
    return Error{path + ": " + why + " (delete it, or run `cb-lab run`, to start afresh)"};
  };
  struct stat found {};
  if (::lstat(path.c_str(), &found) != 0 && errno == ENOENT) return Session{};  // nothing run yet
  // A session holds eight snapshots, a few KiB; anything past 1 MiB is not one.
  auto text = read_bounded_file(path, 1U << 20, "cb-lab session");
  if (!text) return Error{text.error().message + " (delete it, or run `cb-lab run`, to start afresh)"};
  const json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return damaged("not a cb-lab session");
  Session s;
  if (j.contains("scenario") && j["scenario"].is_string()) s.scenario = j["scenario"].get<std::string>();
  if (j.contains("server") && j["server"].is_string()) s.server = j["server"].get<std::string>();
  if (j.contains("server_pid") && j["server_pid"].is_number_integer()) s.server_pid = j["server_pid"].get<int>();
  if (!j.contains("after") || !j["after"].is_object()) return damaged("after: expected an object");
  for (const auto& [key, step] : j["after"].items()) {
    const std::string at = "after." + key;
    int n = 0;
    try {
      n = std::stoi(key);
    } catch (...) {
      return damaged(at + ": steps are numbered");
    }
    StepState st;
    if (!step.is_object()) return damaged(at + ": expected an object");
    // Kept in locals: a range-for over step.value(...).items() would iterate a destroyed copy.
    const json breakers = step.value("breakers", json::object());
    const json transitions = step.value("transitions", json::object());
    const json values = step.value("values", json::object());
    for (const auto& [name, snap] : breakers.items()) {
      auto s2 = snapshot_from(snap, at + ".breakers." + name);
      if (!s2) return damaged(s2.error().message);
      st.breakers[name] = *s2;
    }
    for (const auto& [name, list] : transitions.items()) {
      if (!list.is_array()) return damaged(at + ".transitions." + name + ": expected an array");
      for (std::size_t i = 0; i < list.size(); ++i) {
        auto t = transition_from(list[i], at + ".transitions." + name + "[" + std::to_string(i) + "]");
        if (!t) return damaged(t.error().message);
        st.transitions[name].push_back(*t);
      }
    }
    for (const auto& [name, value] : values.items()) {
      if (!value.is_number()) return damaged(at + ".values." + name + ": expected a number");
      st.values[name] = value.get<double>();
    }
    if (const auto ended = step.find("ended_at_us"); ended != step.end()) {
      if (!ended->is_number_integer()) return damaged(at + ".ended_at_us: expected microseconds since the epoch");
      st.ended_at = TimePoint{Duration{ended->get<std::int64_t>()}};
    }
    s.after[n] = std::move(st);
  }
  // Each step ends after the one before it, and none in the future: a step resumes the lab's
  // clock where the last one ended, so a moved end would be waited out (or skipped) as real.
  const auto wall_now = std::chrono::duration_cast<Duration>(std::chrono::system_clock::now().time_since_epoch());
  std::optional<TimePoint> before;
  for (const auto& [n, st] : s.after) {
    const std::string at = "after." + std::to_string(n) + ".ended_at_us";
    if (!st.ended_at) {
      if (st.breakers.empty()) continue;
      return damaged(at + ": missing (when the step ended)");
    }
    if (st.ended_at->time_since_epoch() > wall_now + std::chrono::minutes(1))
      return damaged(at + ": " + std::to_string(st.ended_at->time_since_epoch().count()) +
                     " is in the future (a step ends before it is saved)");
    if (before && *st.ended_at < *before)
      return damaged(at + ": before the end of the step before it (each step runs after the last)");
    before = st.ended_at;
  }
  return s;
}

Result<void> save_session(const std::string& dir, const Session& s) {
  const std::string hidden = dir + "/.cb-lab";
  if (::mkdir(hidden.c_str(), 0755) != 0 && errno != EEXIST)
    return Error{hidden + ": cannot create: " + std::strerror(errno)};
  json after = json::object();
  for (const auto& [n, st] : s.after) {
    json breakers = json::object();
    for (const auto& [name, snap] : st.breakers) breakers[name] = snapshot_json(snap);
    json transitions = json::object();
    for (const auto& [name, list] : st.transitions) {
      json arr = json::array();
      for (const Transition& t : list)
        arr.push_back({{"from", std::string(to_string(t.from))},
                       {"to", std::string(to_string(t.to))},
                       {"at_us", t.at.time_since_epoch().count()},
                       {"reason", std::string(to_string(t.reason))},
                       {"generation", t.generation}});
      transitions[name] = arr;
    }
    after[std::to_string(n)] = {{"breakers", breakers}, {"transitions", transitions}, {"values", st.values}};
    if (st.ended_at) after[std::to_string(n)]["ended_at_us"] = st.ended_at->time_since_epoch().count();
  }
  json j{{"version", 1}, {"scenario", s.scenario}, {"server", s.server}, {"after", after}};
  if (s.server_pid) j["server_pid"] = *s.server_pid;
  return write_file_atomically(session_path(dir), j.dump(1) + "\n");
}

}  // namespace cb::lab

// The scene actions' fields, read with the same care as the lab's (json_fields.h).
#include "cb/lab/http_call.h"
#include "cb/lab/scenes.h"
#include "json_fields.h"

namespace cb::lab {
namespace {

Result<std::vector<Micros>> durations(const json& j, const std::string& key, const std::string& at) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->empty())
    return Error{at + "." + key + ": expected a non-empty array of durations"};
  std::vector<Micros> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string here = at + "." + key + "[" + std::to_string(i) + "]";
    if (!(*it)[i].is_string()) return Error{here + ": expected a duration such as \"1.5s\""};
    auto d = scenario_duration((*it)[i].get<std::string>(), here);
    if (!d) return d.error();
    out.push_back(*d);
  }
  return out;
}

Result<std::vector<BackendPhase>> backend(const json& j, const std::string& at) {
  const auto it = j.find("backend");
  if (it == j.end() || !it->is_array() || it->empty())
    return Error{at + ".backend: expected phases like [{\"from\": \"0s\", \"answer\": \"ok\"}, ...]"};
  std::vector<BackendPhase> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string here = at + ".backend[" + std::to_string(i) + "]";
    if (!(*it)[i].is_object()) return Error{here + ": expected an object"};
    Fields f((*it)[i], here);
    BackendPhase p;
    CB_TRY(from, f.duration("from"));
    if (!*from) return Error{f.at("from") + ": missing"};
    p.from = **from;
    CB_TRY(answer, f.text("answer"));
    const std::string a = answer->value_or("ok");
    if (a == "ok")
      p.answer = BackendPhase::Answer::Ok;
    else if (a == "hang")
      p.answer = BackendPhase::Answer::Hang;
    else if (a == "error")
      p.answer = BackendPhase::Answer::Error;
    else
      return Error{f.at("answer") + ": expected ok, hang or error"};
    CB_TRY(latency, f.duration("latency"));
    if (*latency) p.latency = **latency;
    if (auto others = f.no_others(); !others) return others.error();
    if (!out.empty() && p.from <= out.back().from) return Error{f.at("from") + ": phases must start in order"};
    out.push_back(p);
  }
  if (out.front().from != Micros{0}) return Error{at + ".backend[0].from: the first phase starts at 0s"};
  return out;
}

template <class T>
Result<T> with_breaker(Fields& f, T spec, bool none_allowed) {
  CB_TRY(b, f.text("breaker"));
  if (!*b)
    return Error{f.at("breaker") + ": missing (a name under \"breakers\"" + (none_allowed ? ", or \"none\")" : ")")};
  if (!none_allowed && **b == "none") return Error{f.at("breaker") + ": this scene needs a breaker"};
  spec.breaker = **b;
  return spec;
}

}  // namespace

Result<SceneSpec> parse_scene_action(const std::string& kind, const json& j, const std::string& at) {
  Fields f(j, at);
  f.use("action");
  if (kind == "charges") {
    ChargesSpec s;
    f.use("send_at");
    CB_TRY(times, durations(j, "send_at", at));
    s.send_at = std::move(*times);
    f.use("backend");
    CB_TRY(phases, backend(j, at));
    s.backend = std::move(*phases);
    CB_TRY(timeout, f.duration("timeout"));
    if (*timeout) s.timeout = **timeout;
    CB_TRY(fallback, f.text("fallback"));
    if (*fallback) {
      if (**fallback != "degraded" && **fallback != "cached" && **fallback != "error")
        return Error{f.at("fallback") + ": expected degraded, cached or error"};
      s.fallback = **fallback;
    }
    CB_TRY(done, with_breaker(f, s, true));
    if (auto others = f.no_others(); !others) return others.error();
    return SceneSpec{*done};
  }
  if (kind == "pool") {
    PoolSpec s;
    CB_TRY(rate, f.number("rate"));
    if (*rate) {
      if (**rate <= 0 || **rate > 100000) return Error{f.at("rate") + ": expected requests per second, above 0"};
      s.rate = **rate;
    }
    CB_TRY(duration, f.duration("duration"));
    if (*duration) s.duration = **duration;
    CB_TRY(workers, f.whole("workers", 0, 100000));
    if (*workers) s.workers = static_cast<int>(**workers);
    f.use("backend");
    CB_TRY(phases, backend(j, at));
    s.backend = std::move(*phases);
    CB_TRY(timeout, f.duration("timeout"));
    if (*timeout) s.timeout = **timeout;
    CB_TRY(attempts, f.whole("attempts", 1, 100));
    if (*attempts) s.attempts = static_cast<int>(**attempts);
    CB_TRY(sample, f.duration("sample_every"));
    if (*sample) s.sample_every = **sample;
    if (s.sample_every <= Micros{0}) return Error{f.at("sample_every") + ": must be above 0"};
    CB_TRY(done, with_breaker(f, s, true));
    if (auto others = f.no_others(); !others) return others.error();
    return SceneSpec{*done};
  }
  if (kind == "traffic") {
    TrafficSpec s;
    CB_TRY(path, f.text("path"));
    if (*path) {
      if (auto bad = request_path_problem(**path)) return Error{f.at("path") + ": " + *bad};
      s.path = **path;
    }
    CB_TRY(rate, f.number("rate"));
    if (*rate) {
      if (**rate <= 0 || **rate > 1000) return Error{f.at("rate") + ": expected calls per second, 0 to 1000"};
      s.rate = **rate;
    }
    CB_TRY(duration, f.duration("duration"));
    if (*duration) s.duration = **duration;
    CB_TRY(period, f.duration("toggle_period"));
    if (*period) s.toggle_period = **period;
    CB_TRY(timeout, f.duration("timeout"));
    if (*timeout) s.timeout = **timeout;
    CB_TRY(done, with_breaker(f, s, false));
    if (auto others = f.no_others(); !others) return others.error();
    return SceneSpec{*done};
  }
  if (kind == "fleet") {
    FleetSpec s;
    CB_TRY(instances, f.whole("instances", 1, 10000));
    if (*instances) s.instances = static_cast<int>(**instances);
    CB_TRY(down, f.duration("down_for"));
    if (*down) s.down_for = **down;
    CB_TRY(every, f.duration("request_every"));
    if (*every) s.request_every = **every;
    CB_TRY(spread, f.duration("start_spread"));
    if (*spread) s.start_spread = **spread;
    CB_TRY(bucket, f.duration("bucket"));
    if (*bucket) s.bucket = **bucket;
    if (s.request_every <= Micros{0} || s.bucket <= Micros{0})
      return Error{at + ": request_every and bucket must be above 0"};
    f.use("jitters");
    if (const auto it = j.find("jitters"); it != j.end()) {
      if (!it->is_array() || it->empty()) return Error{f.at("jitters") + ": expected an array of numbers from 0 to 1"};
      s.jitters.clear();
      for (const auto& v : *it) {
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
          return Error{f.at("jitters") + ": expected an array of numbers from 0 to 1"};
        s.jitters.push_back(v.get<double>());
      }
    }
    CB_TRY(seed, f.whole("seed", 0, 1LL << 53));
    if (*seed) s.seed = static_cast<std::uint64_t>(**seed);
    CB_TRY(done, with_breaker(f, s, false));
    if (auto others = f.no_others(); !others) return others.error();
    return SceneSpec{*done};
  }
  return Error{at + ".action: '" + kind + "' is not a scene action"};
}

const BackendPhase& phase_at(const std::vector<BackendPhase>& backend, Micros t) {
  const BackendPhase* p = &backend.front();
  for (const BackendPhase& b : backend)
    if (b.from <= t) p = &b;
  return *p;
}

}  // namespace cb::lab

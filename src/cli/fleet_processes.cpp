// Starts the fleet's processes, waits for them, and counts their trials per cool-down.
#include "fleet_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace cb::cli {
namespace {

using std::chrono::microseconds;

struct Member {
  pid_t pid = -1;
  int start_fd = -1;  // its stdin: the start goes there once every member is ready
  std::string out;
  std::string err;
};

// The member says it is ready on fd 3 (`ready_fd`, shared by all) and reads its start on stdin.
Result<Member> spawn_member(const std::vector<std::string>& args, const std::string& dir, int i, int ready_fd) {
  Member m;
  m.out = dir + "/" + std::to_string(i) + ".json";
  m.err = dir + "/" + std::to_string(i) + ".err";
  int start[2];
  if (::pipe2(start, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  m.start_fd = start[1];
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, start[0], 0);
  posix_spawn_file_actions_adddup2(&files, ready_fd, 3);
  posix_spawn_file_actions_addopen(&files, 1, m.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&files, 2, m.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&m.pid, "/proc/self/exe", &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  ::close(start[0]);
  if (rc != 0) {
    ::close(m.start_fd);
    return Error{std::string("cannot start a fleet member: ") + std::strerror(rc)};
  }
  return m;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Figures {
  std::vector<int> per_cooldown;
  long long trials = 0;
  long long calls = 0;
  long long sync_failures = 0;
  long long local_trials = 0;  // sent on local rules while Redis did not answer
  [[nodiscard]] int most() const {
    return per_cooldown.empty() ? 0 : *std::max_element(per_cooldown.begin(), per_cooldown.end());
  }
};

// What every member is told, in microseconds of the run as it is played (scaled).
struct Timings {
  long long cooldown = 0;
  long long down = 0;
  long long run = 0;
  long long every = 0;
  long long spread = 0;
};

Timings timings_of(const lab::FleetSpec& spec, const BreakerOptions& breaker, const FleetProcessesRun& how) {
  const auto scaled = [&](microseconds d) {
    return static_cast<long long>(static_cast<double>(d.count()) * how.scale);
  };
  Timings t;
  t.cooldown = std::max(1000LL, scaled(breaker.cooldown.base));
  t.down = scaled(spec.down_for);
  t.run = t.down + 2 * t.cooldown;
  t.every = std::max(100LL, scaled(spec.request_every));
  t.spread = scaled(spec.start_spread);
  return t;
}

// Member `k` of the two fleets: the first `spec.instances` share one breaker, the rest have one
// each.
std::vector<std::string> member_args(const lab::FleetSpec& spec, const BreakerOptions& breaker,
                                     const FleetProcessesRun& how, const Timings& t, const std::string& name, int k) {
  const int i = k % spec.instances;
  std::vector<std::string> args{"cb-lab",
                                "fleet-member",
                                "--instance",
                                "checkout-" + std::to_string(i),
                                "--name",
                                name,
                                "--start-from-stdin",
                                "--first-us",
                                std::to_string(t.spread * i / spec.instances),
                                "--down-us",
                                std::to_string(t.down),
                                "--run-us",
                                std::to_string(t.run),
                                "--every-us",
                                std::to_string(t.every),
                                "--cooldown-us",
                                std::to_string(t.cooldown),
                                "--permits",
                                std::to_string(breaker.half_open.permitted_calls),
                                "--seed",
                                std::to_string(spec.seed * 1000 + static_cast<std::uint64_t>(i))};
  if (k < spec.instances) {
    args.insert(args.end(), {"--shared", how.shared});
  } else {
    args.insert(args.end(), {"--independent", "--jitter", "0.5"});
  }
  if (!how.live.empty()) args.insert(args.end(), {"--live", how.live});
  return args;
}

void kill_members(const std::vector<Member>& members) {
  for (const Member& started : members) {
    ::close(started.start_fd);
    ::kill(started.pid, SIGKILL);
    ::waitpid(started.pid, nullptr, 0);
  }
}

// Every member ready (or gone: its end of the pipe closes with it), then one start for all, the
// same instant in each: that instant.
std::chrono::steady_clock::time_point start_together(const std::vector<Member>& members, int ready_fd) {
  std::size_t heard = 0;
  const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds{60};
  while (heard < members.size() && std::chrono::steady_clock::now() < ready_by) {
    pollfd p{ready_fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    char bytes[64];
    const ssize_t n = ::read(ready_fd, bytes, sizeof bytes);
    if (n <= 0) break;
    heard += static_cast<std::size_t>(n);
  }
  ::close(ready_fd);
  const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds{100};
  const std::string start_line =
      std::to_string(std::chrono::duration_cast<microseconds>(start.time_since_epoch()).count()) + "\n";
  // A member that died meanwhile has closed its stdin: the write fails, and must not raise
  // SIGPIPE here (it would end cb-lab itself).
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &before);
  for (const Member& m : members) {
    (void)!::write(m.start_fd, start_line.data(), start_line.size());
    ::close(m.start_fd);
  }
  ::sigaction(SIGPIPE, &before, nullptr);
  return start;
}

// What a member said once it ended (stopped at `deadline` if it had not): a line for each trial,
// then one with the counts. An error says why it failed, from its standard error.
Result<nlohmann::json> member_result(const Member& m, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (::waitpid(m.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(m.pid, SIGKILL);
      ::waitpid(m.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  nlohmann::json j{{"trials", nlohmann::json::array()}};
  std::istringstream lines(slurp(m.out));
  bool summary = false;
  for (std::string line; std::getline(lines, line);) {
    auto one = nlohmann::json::parse(line, nullptr, false);
    if (one.is_discarded() || !one.is_object()) continue;
    if (one.contains("trial")) {
      j["trials"].push_back(one["trial"]);
    } else {
      j.update(one);
      summary = true;
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && summary) return j;
  std::string why = slurp(m.err);
  if (!why.empty() && why.back() == '\n') why.pop_back();
  return Error{why.empty() ? "a member ended without its line" : why};
}

// Two fleets of `spec.instances` processes at once, on the same outage: the first shares one
// breaker, the second has one each. Each process prints one JSON line, read when all have ended.
Result<std::array<std::vector<nlohmann::json>, 2>> run_members(const lab::FleetSpec& spec,
                                                               const BreakerOptions& breaker,
                                                               const FleetProcessesRun& how) {
  const Timings timings = timings_of(spec, breaker, how);
  std::string dir = (std::filesystem::temp_directory_path() / "cb-fleet-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return Error{"cannot make a directory for the fleet's output"};
  struct RemoveDir {
    std::string path;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove{dir};
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  const long long made_us =
      std::chrono::duration_cast<microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const std::string name = "scene-fleet-" + std::to_string(::getpid()) + "-" + std::to_string(made_us);
  std::vector<Member> members;
  for (int k = 0; k < 2 * spec.instances; ++k) {
    auto m = spawn_member(member_args(spec, breaker, how, timings, name, k), dir, k, ready[1]);
    if (!m) {
      ::close(ready[0]);
      ::close(ready[1]);
      kill_members(members);
      return m.error();
    }
    members.push_back(*m);
  }
  ::close(ready[1]);
  const auto start = start_together(members, ready[0]);
  // Each ends on its own after the run; one that does not within 30 s more is stopped.
  const auto deadline = start + microseconds{timings.run} + std::chrono::seconds{30};
  std::array<std::vector<nlohmann::json>, 2> out;
  std::string failures;
  std::size_t failed = 0;
  for (std::size_t k = 0; k < members.size(); ++k) {
    auto j = member_result(members[k], deadline);
    if (!j) {
      if (failures.empty()) failures = j.error().message;
      ++failed;
      continue;
    }
    out[k < static_cast<std::size_t>(spec.instances) ? 0 : 1].push_back(std::move(j).value());
  }
  // One line: the first member's reason and how many failed (twenty of the same would bury it).
  if (failed > 0)
    return Error{std::to_string(failed) + " of " + std::to_string(members.size()) +
                 " fleet members failed; the first: " + failures};
  return out;
}

Figures shared_figures(const std::vector<nlohmann::json>& members, double down_ms) {
  // A trial carries the fleet's generation: one HALF_OPEN, so one cool-down's trials.
  std::map<std::uint64_t, int> per_generation;
  Figures f;
  for (const auto& m : members) {
    f.calls += m.value("calls", 0LL);
    f.sync_failures += m.value("sync_failures", 0LL);
    for (const auto& t : m["trials"]) {
      if (t["t_ms"].get<double>() >= down_ms) continue;
      // A trial on local rules (Redis did not answer) carries its own breaker's generation,
      // which says nothing of the fleet's: counted apart.
      if (t.value("local", false)) {
        ++f.local_trials;
        continue;
      }
      ++f.trials;
      ++per_generation[t["generation"].get<std::uint64_t>()];
    }
  }
  for (const auto& [gen, n] : per_generation) f.per_cooldown.push_back(n);
  return f;
}

Figures independent_figures(const std::vector<nlohmann::json>& members, double down_ms, double cooldown_ms) {
  // No fleet-wide generation: trials in each cool-down-long stretch of the outage, leaving
  // out the first (the trips) and the last (partial).
  Figures f;
  const auto buckets = static_cast<std::size_t>(down_ms / cooldown_ms);
  std::vector<int> per(buckets, 0);
  for (const auto& m : members) {
    f.calls += m.value("calls", 0LL);
    for (const auto& t : m["trials"]) {
      const double at = t["t_ms"].get<double>();
      if (at >= down_ms) continue;
      ++f.trials;
      const auto k = static_cast<std::size_t>(at / cooldown_ms);
      if (k < per.size()) ++per[k];
    }
  }
  if (per.size() > 2) f.per_cooldown.assign(per.begin() + 1, per.end() - 1);
  return f;
}

std::string joined(const std::vector<int>& v) {
  std::string s;
  for (int n : v) s += (s.empty() ? "" : " ") + std::to_string(n);
  return s;
}

nlohmann::json to_json(const Figures& f) {
  return {{"per_cooldown", f.per_cooldown},
          {"max_per_cooldown", f.most()},
          {"cooldowns", f.per_cooldown.size()},
          {"trials", f.trials},
          {"calls", f.calls}};
}

}  // namespace

Result<lab::SceneOutput> run_fleet_processes(const lab::FleetSpec& spec, const BreakerOptions& breaker,
                                             const FleetProcessesRun& how) {
  const double down_ms = static_cast<double>(spec.down_for.count()) * how.scale / 1000.0;
  const double cooldown_ms = std::max(1.0, static_cast<double>(breaker.cooldown.base.count()) * how.scale / 1000.0);
  auto runs = run_members(spec, breaker, how);
  if (!runs) return runs.error();
  const Figures s = shared_figures((*runs)[0], down_ms);
  const Figures o = independent_figures((*runs)[1], down_ms, cooldown_ms);
  lab::SceneOutput out;
  const std::string n = std::to_string(spec.instances);
  out.lines.push_back(n + " processes sharing one breaker through " + how.shared +
                      ": trials per cool-down: " + joined(s.per_cooldown) + "; at most " + std::to_string(s.most()) +
                      " (permits " + std::to_string(breaker.half_open.permitted_calls) + ")" +
                      (s.local_trials > 0 ? "; " + std::to_string(s.local_trials) +
                                                " more on local rules while Redis did not answer (" +
                                                std::to_string(s.sync_failures) + " round trips failed)"
                                          : ""));
  out.lines.push_back(n + " processes with a breaker each (jitter 0.50): trials per cool-down: " +
                      joined(o.per_cooldown) + "; at most " + std::to_string(o.most()));
  char scale[64];
  std::snprintf(scale, sizeof scale, "%.3g", how.scale);
  out.lines.push_back(std::string("(real processes, time scaled: 1 scene second = ") + scale + " s; " +
                      (how.live.empty() ? "the outage simulated in each process" : "calls to " + how.live) +
                      "; the rule each judges: half of at least 3 calls in 10 s)");
  nlohmann::json shared_json = to_json(s);
  shared_json["sync_failures"] = s.sync_failures;
  shared_json["local_trials"] = s.local_trials;
  out.data = {{"processes", spec.instances},
              {"scale", how.scale},
              {"live", !how.live.empty()},
              {"shared", shared_json},
              {"independent", to_json(o)}};
  return out;
}

}  // namespace cb::cli

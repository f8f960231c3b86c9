#pragma once
// A scenario is data (scenarios/*.json): the breakers it uses and, step by step, what to do.
// The lab is one; the scenes use the same format. Changing a count, a path or a
// wait is an edit of the file, not of C++.
//
//   {"name": "lab", "title": "...", "server": "http://127.0.0.1:8110", "call_timeout": "2s",
//    "breakers": {"main": {"profile": "lab", "wait_in_open": "3s"}},
//    "steps": [{"title": "...", "do": [{"action": "call", "path": "/fast", "times": 3}, ...]}]}
//
// Actions (fields other than "action" in brackets, defaults after '='):
//   reset_server                 empty the server's record, so the run's evidence is its own
//   count [as]                   GET /count (not through a breaker), kept as value `as`
//   call path [times=1] [breaker=main] [until=STATE, max=20] [measure]
//                                calls through the breaker; `until`: repeat until it is in
//                                STATE; `measure`: keep "blocked" (refused) and "max_ms"
//                                (slowest call, ms)
//   wait [for=cooldown | duration] [breaker=main]
//                                what remains of the breaker's cool-down, or a fixed time
//   new_breaker [breaker]        a fresh breaker, as configured, in place of that one
//   write_state file [breaker=main]
//   write_fastfail file          before, after, blocked, max_ms from the values
//   write_transitions file [breaker=main]
//   charges | pool | traffic | fleet   the scenes (scenes.h)

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cb/breaker/options.h"
#include "cb/breaker/state.h"
#include "cb/classify/classifier.h"
#include "cb/grade/lab_spec.h"
#include "cb/lab/scenes.h"
#include "cb/result.h"

namespace cb::lab {

struct BreakerSpec {
  BreakerOptions options;                          // validated
  std::optional<classify::Classifier> classifier;  // none: the HTTP default (4xx ignored)
};

struct Action {
  enum class Kind { ResetServer, Count, Call, Wait, NewBreaker, WriteState, WriteFastfail, WriteTransitions, Scene };
  Kind kind = Kind::Call;
  std::string path;
  int times = 1;
  std::string breaker = "main";
  std::optional<State> until;
  int max = 20;
  bool measure = false;
  std::string as = "count";
  bool wait_for_cooldown = false;
  std::chrono::microseconds duration{0};
  std::string file;
  std::shared_ptr<const SceneSpec> scene;  // Kind::Scene: charges, pool, traffic or fleet (scenes.h)
};

struct Step {
  std::string id;  // the lab's steps have one ("fast", "trip", ...); a scene's may not
  std::string title;
  std::vector<Action> actions;
};

struct Scenario {
  std::string name;
  std::string title;
  std::string server;
  std::chrono::milliseconds call_timeout{2000};
  std::map<std::string, BreakerSpec> breakers;
  std::vector<Step> steps;
  // The lab's scenario is also the grader's spec of it (lab_spec.h); a scene's is not.
  std::shared_ptr<const grade::LabSpec> lab_spec;
};

// Errors name the file and the field: "lab.json: steps[3].do[1].times: expected a whole number
// from 1 to 1000".
[[nodiscard]] Result<Scenario> load_scenario(const std::string& path);
[[nodiscard]] Result<Scenario> parse_scenario(const std::string& json_text, const std::string& name_for_errors);

// Where the scenarios are: $CB_SCENARIOS, else the source tree's scenarios/ (built in).
[[nodiscard]] std::string scenarios_dir();

// The breakers steps 1..`through_step` have used (called through, created, or written), in
// name order: the ones that exist at that point of the lab. Step 7's "fresh" breaker does not
// exist after step 3.
[[nodiscard]] std::vector<std::string> breakers_in_use(const Scenario& s, int through_step);

}  // namespace cb::lab

#pragma once
// What `cb-lab step N` continues from: after each step, the breakers' snapshots, their
// transitions and the values measured so far, saved beside the outputs in DIR/.cb-lab/session.json.
// Times are on the AnchoredClock's timeline, which is wall-clock time, so they mean the same in
// the next process.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cb/breaker/metrics.h"
#include "cb/breaker/transition.h"
#include "cb/result.h"

namespace cb::lab {

struct StepState {
  std::map<std::string, Snapshot> breakers;
  std::map<std::string, std::vector<Transition>> transitions;
  std::map<std::string, double> values;
  // Lab time when the step ended (see AnchoredClock): the next step resumes the clock there.
  // Transitions are kept in wall-clock time, as transitions.log stamps them.
  std::optional<TimePoint> ended_at;
};

struct Session {
  std::string scenario;            // the scenario's path
  std::string settings;            // the lab-settings.json its numbers came from, if not the scenario's
  std::string server;              // the server the steps ran against
  std::optional<int> server_pid;   // a flaky server cb-lab started in the background, if it did
  std::map<int, StepState> after;  // after[N]: the state once step N had run
};

// DIR/.cb-lab/session.json says which server and scenario, and how many steps have run; step N's
// state is DIR/.cb-lab/steps/N.json, its transitions as what it added to step N-1's.
[[nodiscard]] std::string session_path(const std::string& dir);
[[nodiscard]] std::string step_path(const std::string& dir, int n);
// A missing session is an empty one; a damaged one is an error naming the file and the field.
[[nodiscard]] Result<Session> load_session(const std::string& dir);
// Writes the session's index and its steps' files (only step `only`'s, when given: after each
// step of a run, each step's file is written once). The steps must be 1..N.
[[nodiscard]] Result<void> save_session(const std::string& dir, const Session& s,
                                        std::optional<int> only = std::nullopt);

}  // namespace cb::lab

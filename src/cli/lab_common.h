#pragma once
// What `cb-lab run`, `step` and `status` share: finding the scenario and the output directory,
// reaching (or starting) the server, and asking the grader about a step.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cb/flaky/server.h"
#include "cb/grade/grade.h"
#include "cb/lab/http_call.h"
#include "cb/lab/runner.h"
#include "cb/lab/server_control.h"
#include "cb/lab/scenario.h"
#include "exit_code.h"

namespace cb::cli {

struct LabArgs {
  std::string dir = "./cb";
  std::string server;        // empty: CB_SERVER, else a server of the command's own
  std::string scenario;      // empty: the session's, else scenarios/lab.json
  std::string call_timeout;  // empty: the scenario's
  std::string settings;      // a lab-settings.json: the lab on its numbers (a student's own)
};

// A one-line error for the program to print, and the exit code it means.
struct Failure {
  std::string message;
  ExitCode code = ExitCode::Usage;
};

[[nodiscard]] std::string default_scenario_path();
// Creates DIR if needed, and makes sure files can be written in it.
[[nodiscard]] Result<void> prepare_dir(const std::string& dir);
[[nodiscard]] Result<std::chrono::milliseconds> call_timeout(const LabArgs& a, const lab::Scenario& s);

// One run at a time in a directory: two `cb-lab run`s into one DIR once interleaved their
// calls on one server and one failed with "state is CLOSED, expected OPEN". An flock on
// DIR/.cb-lab/lock, held while this lives and dropped by the kernel if the process dies, so a
// killed run never leaves the directory locked.
class DirLock {
 public:
  DirLock() = default;
  DirLock(DirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();
  // Errors: another cb-lab holds DIR (naming its pid and command), or the lock cannot be made.
  [[nodiscard]] static Result<DirLock> take(const std::string& dir, const std::string& command);

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The files `scenario` writes, removed from DIR before a whole run: an interrupted run must
// leave only its own files, not the last run's transitions.log beside its own state.json (the
// mix once graded 4/8).
[[nodiscard]] Result<void> remove_outputs(const std::string& dir, const lab::Scenario& scenario);

// The server the person named: --server, else CB_SERVER (as `cb-grade --run` sets it); nullopt
// when neither is given. Errors: not a URL (naming where it came from).
[[nodiscard]] Result<std::optional<lab::ServerUrl>> named_server(const LabArgs& a);

// The grader's verdict on the record now at `server` (or on the files alone if it has none).
// `probe` is what the server answered before the run (step 1 fails on it when it is not a flaky
// server); `epoch` is the record's epoch after the run's reset, so a reset by anyone else since
// shows as evidence that failed.
//
// `facts`: what the program running the lab already knows, handed over rather than read back:
// its own server (its record read in this process, not over HTTP), the files as it wrote them,
// and the last record entry of each step so far (the steps are not guessed from the record).
struct LabFacts {
  flaky::FlakyServer* own_server = nullptr;
  const std::map<std::string, lab::WrittenFile>* files = nullptr;
  std::vector<std::uint64_t> step_last_seq;
};
[[nodiscard]] grade::Report grade_now(const std::string& dir, const lab::ServerUrl& server, const lab::Probe& probe,
                                      std::set<int> steps, std::optional<std::uint64_t> epoch = std::nullopt,
                                      std::shared_ptr<const grade::LabSpec> spec = nullptr,
                                      const LabFacts* facts = nullptr);
// The record of the server the lab runs against: read in this process when it is our own.
[[nodiscard]] Result<grade::Record> record_now(const lab::ServerUrl& server, flaky::FlakyServer* own);

// Step n's verdict from `report`, or "not graded" for a step the grader does not know.
[[nodiscard]] grade::StepReport step_verdict(const grade::Report& report, int n);

// --student ID --course-key FILE, given together: the student's variant of `base`
// (grade/variant.h); neither: nullptr (the handout's numbers). Errors name the flag.
[[nodiscard]] Result<std::shared_ptr<const grade::LabSpec>> student_spec(const std::string& student,
                                                                         const std::string& course_key,
                                                                         const grade::LabSpec& base);
// --settings FILE: `base` on the numbers of a lab-settings.json (a student's kit holds theirs).
[[nodiscard]] Result<std::shared_ptr<const grade::LabSpec>> settings_spec(const std::string& path,
                                                                          const grade::LabSpec& base);
// The lab's scenario with the numbers of `spec` (a variant of its own lab spec), graded on them.
[[nodiscard]] Result<lab::Scenario> scenario_with(std::shared_ptr<const grade::LabSpec> spec, const std::string& name);
// `scenario` on the numbers of the lab-settings.json at `settings_path` (unchanged when empty).
[[nodiscard]] Result<lab::Scenario> scenario_on(lab::Scenario scenario, const std::string& scenario_path,
                                                const std::string& settings_path);
// A kit's folder holds its student's numbers: run there with no --settings, the lab runs on
// ./lab-settings.json (absolute), as cb-grade does; elsewhere "".
[[nodiscard]] std::string kit_settings_here();

// SIGINT sets the flag (and a second one exits at once); the runner stops between calls.
const std::atomic<bool>& install_interrupt_flag();

}  // namespace cb::cli

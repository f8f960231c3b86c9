#pragma once

namespace cb::cli {

// What cb-lab's exit status means, for scripts and CI.
enum class ExitCode : int {
  Ok = 0,
  Failed = 1,         // the program ran, and what it checked did not pass
  Usage = 2,          // bad flags or unreadable/malformed input: nothing was run
  NotGraded = 2,      // the run's evidence failed (the server died or was reset): not the breaker's fault
  Interrupted = 130,  // Ctrl-C (128 + SIGINT), as a shell reports it
};

[[nodiscard]] constexpr int to_int(ExitCode c) noexcept { return static_cast<int>(c); }

}  // namespace cb::cli

#pragma once
// The lab as the grader knows it, in one place: its numbers, its step titles, its files, its
// endpoints, and every check it makes, as data. Every message the grader writes is formatted
// from these, and a test holds them against scenarios/lab.json, so the grader and the lab the
// students run cannot drift apart.

#include <array>
#include <string_view>
#include <vector>

namespace cb::grade::lab {

// The breaker's settings.
inline constexpr int kWindow = 10;       // calls in the count window
inline constexpr int kMinimumCalls = 5;  // no judgement before the window holds this many
inline constexpr int kFailureRatePercent = 50;
inline constexpr double kWaitMs = 3000.0;  // the cool-down in OPEN
inline constexpr int kTrials = 3;          // calls permitted in HALF_OPEN, judged together

// The script: what each step sends.
inline constexpr int kFast = 3;                // step 2
inline constexpr int kBurst = 5;               // step 3 sends this many /always500 ...
inline constexpr int kTripAt = 3;              // ... and the breaker opens on this one
inline constexpr int kBlocked = 10;            // step 4's calls while OPEN
inline constexpr double kMaxRefusalMs = 50.0;  // a refusal must be faster than this
inline constexpr int kBad = 10;                // step 7's /bad

inline constexpr int kSteps = 8;

inline constexpr std::string_view kStateFile = "state.json";
inline constexpr std::string_view kFastFailFile = "fastfail.txt";
inline constexpr std::string_view kIgnoreFile = "ignore4xx.json";
inline constexpr std::string_view kTransitionsFile = "transitions.log";
inline constexpr std::array<std::string_view, 4> kFiles{kStateFile, kFastFailFile, kIgnoreFile, kTransitionsFile};

inline constexpr std::string_view kFastPath = "/fast";
inline constexpr std::string_view kFailPath = "/always500";
inline constexpr std::string_view kBadPath = "/bad";
inline constexpr std::string_view kCountPath = "/count";
inline constexpr std::string_view kAdminPrefix = "/admin/";

// The lab's step titles, 1-8 ("" for any other number).
[[nodiscard]] std::string_view step_title(int step) noexcept;

// When a check applies: to a finished run (the default), right after its step (--step N, a
// student checking as they go), or both.
enum class When { Finished, JustAfter, Always };

// One check, check50-style: a stable id (it appears in every report format, so tools and
// instructors can key on it), the step it belongs to, a title, whether it is judged on the
// server's record, and the checks it needs. A check whose prerequisite failed or was skipped
// is skipped with that reason, the same way everywhere.
struct CheckSpec {
  std::string_view id;
  int step;
  When when;
  std::string_view title;
  bool needs_server;
  std::vector<std::string_view> needs;  // ids of checks in the same step
};

// Every check, in the order the reports list them.
[[nodiscard]] const std::vector<CheckSpec>& checks();
// nullptr for an unknown id.
[[nodiscard]] const CheckSpec* find_check(std::string_view id) noexcept;
// Whether any check of `step` reads a lab file (step 1's checks need only the server).
[[nodiscard]] bool reads_files(int step);

}  // namespace cb::grade::lab

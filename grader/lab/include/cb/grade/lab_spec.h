#pragma once
// The lab as data: one file (scenarios/lab.json, compiled into cb-grade) holds the breaker's
// numbers, the steps and what they send, and the four files. The runner runs its steps; the
// grader's checks (grader/checks/, each in its step's file) fill their titles and messages with
// its values. What the grader expects (the call that opens the breaker, the trials, the waits) is worked
// out here from the numbers, so a lab with other numbers is graded by the same code.

#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cb/grade/lab_steps.h"
#include "cb/result.h"

namespace cb::grade {

// The breaker's rules, as the lab's "main" breaker writes them out.
struct LabRules {
  int window = 0;           // calls in the count window
  int minimum_calls = 0;    // no judgement before the window holds this many
  double failure_rate = 0;  // percent; opens at failures x 100 >= rate x calls
  double slow_call_rate = 0;
  double slow_call_ms = 0;
  double wait_ms = 0;          // the cool-down in OPEN
  int trials = 0;              // calls permitted in HALF_OPEN, judged together
  double call_timeout_ms = 0;  // the runner's per-call timeout
};

// The rules' arithmetic, the engine's and the handout's: `fast` successes, then failures one by
// one; the window holds the last `window` calls and judges once it holds `minimum_calls`. The
// failure that opens it (0: none of `burst` does), with what the window holds then. `strict`
// compares with > where the rule says >= (the classic mistake).
struct TripPoint {
  int at = 0, failures = 0, calls = 0;
};
[[nodiscard]] TripPoint trip_point(const LabRules& rules, int fast, int burst, bool strict);

// What the script sends, read from the steps' actions.
struct LabScript {
  int fast = 0;        // step "fast": successful calls before the outage
  int burst = 0;       // step "trip": failing calls, of which the breaker lets trip_at through
  int blocked = 0;     // step "refused": calls while OPEN
  int trials_max = 0;  // step "trials": calls made at most to close it
  int bad = 0;         // step "ignore4xx": 4xx calls on a new breaker
  std::string fast_path, fail_path, bad_path;
};

// The four files, by role.
struct LabFiles {
  std::string state, fastfail, ignore, transitions;
  [[nodiscard]] std::array<std::string_view, 4> all() const noexcept { return {state, fastfail, ignore, transitions}; }
  [[nodiscard]] std::vector<std::string> names() const { return {state, fastfail, ignore, transitions}; }
  // "" for an unknown role ("state", "fastfail", "ignore", "transitions").
  [[nodiscard]] std::string_view of(std::string_view role) const noexcept;
};

class LabSpec;
// Makes a variant's spec (variant.h): the same text with other numbers, read as that student's.
class VariantMaker {
 public:
  [[nodiscard]] static Result<LabSpec> make(std::string_view json_text, std::string student, std::string variant);
};

class LabSpec {
 public:
  LabRules rules;
  LabScript script;
  LabFiles files;
  double max_refusal_ms = 0;
  std::vector<std::string> transitions;  // "CLOSED->OPEN", ... in the order the log must hold

  // Worked out from the numbers: the failure of the burst that opens the breaker (>=), what the
  // window holds then, and where a breaker comparing with > would open instead (0: within the
  // burst it would not).
  int trip_at = 0;
  int trip_failures = 0;
  int trip_calls = 0;
  int trip_at_gt = 0;

  // Whose numbers these are: empty for the handout's; else the student whose variant it is
  // (variant.h), and the numbers in words ("window 9, minimum 5, 40%, 2.5 s, 3 trials").
  std::string student;
  std::string variant;
  LabRules handout;  // the rules of the spec the variant was made from (its own, for the handout's)
  // SHA-256 (hex) of the lab text this spec was read from; a variant keeps its base's. Every
  // report carries it: two grades with the same hash were given against the same lab, whatever
  // numbers each student had.
  std::string sha256;
  // "the handout's numbers", "student alice's numbers (window 9, ...)", "the numbers of
  // lab-settings.json (...)" (a student checking their own kit): what reports name.
  [[nodiscard]] std::string numbers_name() const;
  // Where they came from, for the report's first lines: "the course key", "lab-settings.json in
  // the folder graded", "--settings FILE"; empty for the handout's own.
  std::string numbers_from;
  // What a report opens with: the name, the handout's numbers in words too, and where from.
  [[nodiscard]] std::string numbers_said() const;
  // The text it was read from, for a variant to be made of it.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  [[nodiscard]] int steps() const noexcept { return static_cast<int>(step_titles_.size()); }
  // Step `n`'s title, 1-based ("" for any other number).
  [[nodiscard]] std::string_view step_title(int n) const noexcept;
  // Step `n`'s id ("fast", "trip", ...), "" for any other number.
  [[nodiscard]] std::string_view step_id(int n) const noexcept;

  // `text` (a check's title or message) with its placeholders filled: the lab's values ({window},
  // {trip_at_nth}, {state_file}, ...) and `vars` ({got}, {line}, ...); an unknown {name} is left
  // as it is.
  using Vars = std::initializer_list<std::pair<std::string_view, std::string>>;
  [[nodiscard]] std::string fill(std::string_view text, Vars vars = {}) const;
  // The lab's values by name, as the templates see them.
  [[nodiscard]] const std::map<std::string, std::string, std::less<>>& values() const noexcept { return values_; }

 private:
  friend Result<LabSpec> parse_spec(std::string_view, const std::string&, std::string, std::string);
  std::string source_;
  std::vector<std::string> step_titles_;
  std::vector<std::string> step_ids_;
  std::map<std::string, std::string, std::less<>> values_;
};

// Reads a spec as `student`'s, `variant` naming its numbers (both empty: the handout's).
[[nodiscard]] Result<LabSpec> parse_spec(std::string_view json_text, const std::string& name_for_errors,
                                         std::string student, std::string variant);

// Errors name the file and the field: "lab.json: breakers.main.window_size: missing (the lab
// spec writes every number out)".
[[nodiscard]] Result<LabSpec> parse_lab_spec(std::string_view json_text, const std::string& name_for_errors);
[[nodiscard]] Result<std::shared_ptr<const LabSpec>> load_lab_spec(const std::string& path);
// The spec compiled into the program (scenarios/lab.json at build time).
[[nodiscard]] const LabSpec& lab_spec();
[[nodiscard]] std::string_view embedded_lab_spec_text() noexcept;

// "1st", "2nd", "3rd", "4th", ...
[[nodiscard]] std::string nth(std::size_t n);

}  // namespace cb::grade

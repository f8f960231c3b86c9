#pragma once
// Whose a failure is. A verdict says something about the student only when the student's breaker
// or program is the one that failed: the grader's own failures (it stalled, the machine did not
// run a program, a box could not be made, a limit outside the box struck) are never a verdict.
// Decisions (grade again, hand a queued job back, what a row says) read this value, never a
// message's text.

#include <cstdint>
#include <string>
#include <vector>

namespace cb::grade {

enum class Fault : std::uint8_t {
  None,     // nothing failed
  Student,  // the breaker broke a rule: a step's check or a conformance rule, with its cause
  Program,  // the program or the folder handed in failed as such: it did not build, crashed,
            // ran into a limit of its box, gave no answer, or cannot be graded as handed in
  Grader,   // the grader or the machine failed: graded again, or "not graded" and why
};
[[nodiscard]] const char* to_string(Fault f) noexcept;  // "", "student", "program", "grader"
// The value of to_string's text; nullopt-like Fault::None for anything else.
[[nodiscard]] Fault fault_from(const std::string& text) noexcept;

// How often a submission is graded when the grader fails it, in all, before its row says "not
// graded" and why (a queue's deliveries multiply it: each delivery tries this often).
inline constexpr int kGradingTries = 3;

// What a submission's row or report says when every try was the grader's failure: the last why,
// and how many tries ("not graded: the grader stalled ... (tried 3 times)").
[[nodiscard]] std::string not_graded_after(const std::vector<std::string>& tries);

// A grading that could not give a verdict, and whose failure that was.
struct GradingFailure {
  Fault fault = Fault::Grader;
  std::string message;  // one line, for a person
};

}  // namespace cb::grade

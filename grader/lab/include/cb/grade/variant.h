#pragma once
// A lab of each student's own numbers. A course key (a secret only the instructor holds) and a
// student's id give, through HMAC-SHA256, one set of numbers out of every set in the ranges that
// keeps each of the lab's traps showing (docs/TEACHING.md says why these ranges). Nobody
// without the key can work out another student's numbers, and a run on someone else's numbers,
// or on the handout's, is told apart from a wrong breaker (s1.numbers).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cb/grade/lab_spec.h"
#include "cb/result.h"

namespace cb::grade {

// The numbers a variant sets; the script (what each step sends) stays the lab's.
struct LabNumbers {
  int window = 0;
  int minimum_calls = 0;
  int failure_rate = 0;  // whole percent
  int wait_ms = 0;
  int trials = 0;
  bool operator==(const LabNumbers&) const = default;
  // "window 9, minimum 5, 40%, 2.5 s, 3 trials"
  [[nodiscard]] std::string text() const;
};

[[nodiscard]] LabNumbers numbers_of(const LabRules& rules);
[[nodiscard]] inline LabNumbers numbers_of(const LabSpec& spec) { return numbers_of(spec.rules); }
// `base` with the numbers a variant sets (its slow-call rule and timeout kept).
[[nodiscard]] LabRules rules_with(const LabRules& base, const LabNumbers& n);

// Whether `n`, with `spec`'s script, keeps every trap of the lab: > and >= open the breaker at
// different calls of step 3, both within it; the window still holds every call at the trip; one
// trial and `trials` close it at different moments; the wait is long enough to tell a breaker
// that waits from one that does not, under load, and short enough for a quick lab. The reason
// it does not, or empty.
[[nodiscard]] std::string missing_trap(const LabSpec& spec, const LabNumbers& n);

// Every set of numbers in the ranges that keeps every trap, in one fixed order (the variants'
// list: an index into it is a variant).
[[nodiscard]] std::vector<LabNumbers> variant_numbers(const LabSpec& base);

// A course key file: its bytes, less a trailing newline; at least 16 bytes.
[[nodiscard]] Result<std::string> read_course_key(const std::string& path);
// A student id as variants are keyed: trimmed, lower case; 1-200 printable characters.
[[nodiscard]] Result<std::string> student_id(std::string_view raw);

// The student's variant: `base` with the numbers the key and id choose.
[[nodiscard]] Result<std::shared_ptr<const LabSpec>> variant_spec(const LabSpec& base, std::string_view student,
                                                                  std::string_view course_key);
// `base` with other numbers (the lab's own script, titles and checks, filled with them).
[[nodiscard]] Result<LabSpec> with_numbers(const LabSpec& base, const LabNumbers& n, std::string student);

// lab-settings.json, which the starter kits read their numbers from (cb-lab init writes it).
[[nodiscard]] std::string kit_settings_json(const LabSpec& spec);
// The numbers a lab-settings.json holds, for a student to check their own kit on them without
// the course key (which only decides whose numbers they are). Errors name the key.
[[nodiscard]] Result<LabNumbers> numbers_of_settings(std::string_view json_text, const std::string& name);
// `base` on the numbers of the lab-settings.json at `path` (read bounded): cb-grade --settings and
// cb-lab run/step --settings. Errors name the file.
[[nodiscard]] Result<LabSpec> spec_of_settings_file(const LabSpec& base, const std::string& path);
// The handout's table of settings, in Markdown, with `spec`'s numbers.
[[nodiscard]] std::string settings_table(const LabSpec& spec);
// The whole handout with `spec`'s numbers in every step: docs/HANDOUT.md for the handout's own,
// a student's HANDOUT.md in the kit made for them.
[[nodiscard]] std::string handout_text(const LabSpec& spec);
// scenarios/handout.md as built in, its numbers left as {names}.
[[nodiscard]] std::string_view embedded_handout_text() noexcept;

}  // namespace cb::grade

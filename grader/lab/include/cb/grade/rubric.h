#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cb/grade/lab_spec.h"
#include "cb/grade/prebuilt.h"
#include "cb/result.h"

namespace cb::grade {

// How an assignment is graded (docs/TEACHING.md, "The rubric"). Every part is optional:
//   {"points":     {"1": 5, "2": 10, ..., "conformance": 20},   parts left out keep one point
//    "visibility": {"default": "visible", "conformance": "after_due_date", "8": "hidden"},
//    "stdout_visibility": "hidden",
//    "seed": 12345, "traces": 200,                               the conformance traces, fixed
//    "conformance_timeout": 120,                                 seconds for one submission's part
//    "id_field": "email",                                        which field names a student (below)
//    "cap_other_numbers": 0, "cap_no_replay": 2,                 integrity caps on the lab's steps (below)
//    "refuse_prebuilt": "all"}                                   no executable handed in (below)
// Visibilities are Gradescope's: visible, hidden, after_due_date, after_published.
struct Rubric {
  std::array<double, kGradedSteps + 1> points{};         // [1..kGradedSteps]
  double conformance = 1;                                // --conformance, all or nothing
  std::array<std::string, kGradedSteps + 1> visibility;  // [1..kGradedSteps]
  std::string conformance_visibility = "visible";
  std::string stdout_visibility = "visible";
  // The conformance part's seed and number of traces for every submission of the assignment:
  // a resubmission meets the same traces. Unset: --seed / --traces (or a random seed).
  std::optional<std::uint64_t> seed;
  std::optional<int> traces;
  // The wall-clock time one submission's conformance part may take (--conformance-timeout).
  std::optional<std::chrono::milliseconds> conformance_timeout;
  // What a submission may not hand in ready-made: by default a copy of the project's own programs;
  // "all": any executable; "none": nothing looked for (prebuilt.h).
  Prebuilt prebuilt = Prebuilt::HarnessRefused;
  // Which field names a student, so a course key gives each the same numbers everywhere: "email"
  // (the default), "sid" (Gradescope's student id), "folder" (a batch's folder name), or another
  // column of the roster. cb-lab variant --roster, the batch's roster and Gradescope's metadata
  // all read this one field.
  std::string id_field = "email";
  // Integrity caps, off unless set: the most the lab's eight steps together may earn when the run
  // was on another student's numbers (s1.numbers failed: a copied folder), and when there is
  // no replay.sh to drive with the conformance traces (a script that replays the handout's
  // requests with no breaker at all passes the steps). The report says why it was capped.
  std::optional<double> cap_other_numbers;
  std::optional<double> cap_no_replay;
  // The SHA-256 of the rubric's text ("" for equal()): what a resumed batch compares.
  std::string sha256;
  [[nodiscard]] static Rubric equal();
  [[nodiscard]] static Result<Rubric> parse(std::string_view json);
  // The points of every step, and of the conformance part when it is graded.
  [[nodiscard]] double max_score(bool with_conformance) const;
};

// A field that can name a student: letters, digits and _, at most 40.
[[nodiscard]] bool is_id_field(std::string_view field);

}  // namespace cb::grade

#pragma once
// What the lab's check bodies share: the inputs they judge (the spec, the record's analysis and
// the four files, parsed), and the small helpers that word their messages (checks_common.cpp).
// The checks are in their steps' files (check.h); step_builder.cpp runs them in order.

#include <optional>
#include <string>

#include "cb/grade/artifacts.h"
#include "cb/grade/record.h"
#include "cb/grade/grade.h"
#include "cb/grade/lab_spec.h"
#include "placement.h"
#include "cb/grade/check.h"
#include "step_builder.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {

struct Inputs {
  const LabSpec& spec;
  const Prerequisites& pre;
  const std::optional<Record>& record;
  std::optional<LabRun> run;
  std::optional<ServerProbe> probe;
  Parsed<StateFile> state;
  Parsed<StateFile> ignore;
  Parsed<FastFail> fastfail;
  Parsed<std::vector<TransitionLine>> transitions;
  // From the record and the log together (placement.h), once: steps 3 and 4 read the trip, step 6
  // and the HTML page the close.
  std::optional<Placement> trip;
  std::optional<Placement> close;
  // The first line whose stamp cannot place it (none, or coarser than a millisecond), said as
  // the log's contract failure; empty when every line can be placed.
  std::string stamp_problem;
};

// transitions.log's stamps are required, to the millisecond or finer: they are what proves when
// the breaker opened and closed. The first line that breaks that, in words; empty when none does.
[[nodiscard]] std::string stamp_problem(const std::vector<TransitionLine>& log);

// The record shows no OPEN period: every call of step 4 reached the server too. (A breaker that
// opened and let every call through looks the same to the record; its log says it opened.)
[[nodiscard]] bool never_opened(const LabRun& run, const LabSpec& spec);
// Neither the record nor transitions.log shows the breaker ever left CLOSED. Then what stands on
// its having opened (a moment it opened, trials that close it again) did not happen, and is not
// judged (steps 3 and 4 are charged).
[[nodiscard]] bool never_left_closed(const Inputs& in);
// The server's paths, as the messages name them.
inline const std::string kCountPath(flaky::path::kCount);
inline const std::string kFailingPath(flaky::path::kAlways500);
inline const std::string kNeverOpened =
    "not judged: every " + kFailingPath + " of step 4 reached the server, so nothing shows the breaker was ever OPEN";

// A file contract's check (every "contract" of the catalogue): the file parsed, or why not.
void contract_check(CheckVerdict& v, const Inputs& in, std::string_view role);
// state.json right after step `step` (--step N): its "state".
void state_just_after(CheckVerdict& v, const Inputs& in, int step, const std::string& want);

inline std::string str(std::int64_t n) { return std::to_string(n); }

// "1.234 s"
[[nodiscard]] std::string seconds_text(double ms);
// "found \"closed\"; states are upper case: \"CLOSED\"", ...
// `why_other` is added when the state is another one altogether (not a spelling).
void expect_state(CheckVerdict& v, const StateFile& f, const std::string& want, const std::string& why_other = {});

// The run reports, and behaves by, another set of the lab's numbers than `in.spec`'s: the
// handout's, or another variant's (variant.h). What it shows, in words; empty when it follows its
// own, or matches no other set (then it is the breaker that is wrong, and the steps say where).
[[nodiscard]] std::string other_numbers(const Inputs& in);

// "1 trial", "3 trials".
[[nodiscard]] std::string trials_text(std::size_t n);
// "milliseconds", "tenths of a second": how finely a stamp is written.
[[nodiscard]] std::string precision_text(std::int64_t resolution_us);

// The last step of the script the record shows requests of (1 when none but the server's).
[[nodiscard]] int last_step_seen(const LabRun& run);

}  // namespace cb::grade

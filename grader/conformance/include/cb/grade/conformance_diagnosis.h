#pragma once
// Why a breaker answered a trace otherwise than the rules. Where its answers alone cannot tell
// the cause apart, the program is asked again: does it read its settings at all, and is a 4xx
// the reason it opened late? Otherwise the rule that decided the call names it (explain()).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/conformance_traces.h"

namespace cb::grade::conformance {

// The settings a program does not read: changed one at a time to other values, its answers
// stay the same where the rules' change.
struct SettingsProbe {
  std::vector<std::string> unread;  // protocol names, in the settings line's order
  // Its window lets old calls go: it opens on a trace made so that only a sliding window opens
  // (with the rate well over the threshold, so that > for >= cannot hide it).
  bool slides = true;
  // It lets a call through once the wait is long over on the trace's clock: a call 100 s after
  // it opened, with a wait of 1 s. A breaker that refuses it reads another clock (the wall's) or
  // never leaves OPEN, and whether it reads wait_in_open_ms cannot be told.
  bool leaves_open = true;
  int runs = 0;  // of the program, to find out
};

// Probes with traces `first`, `first + 1`, ... of the seed, up to four, until each setting has
// changed the rules' answers on one of them; a setting that never did is taken as read.
[[nodiscard]] SettingsProbe probe_settings(const Program& program, std::uint64_t seed, int first = 1);

// What `program` got wrong at `d` of `trace` (`replies` its answers there), in order:
// - no answer: `no_answer`;
// - its answers are the rules' under the trace's settings with the unread ones (`probe`) put
//   back to the lab's: `settings_ignored`, naming them;
// - without the trace's 4xx calls it answers as the rules do: `4xx_not_counted`, and whether it
//   took a 4xx for a success or a failure (it answers the same with the 4xx made one);
// - a result the rules drop as late, counted: without those results it answers as the rules do;
// - the threshold or the wait's end compared with > for >=: with the threshold a point lower, or
//   the call a millisecond later, it answers as the rules do;
// - a wait that never ends by the trace's clock (probe.leaves_open is false);
// - else what the rules do at that call, as a symptom, with no cause claimed (explain()).
// A cause is named only when an experiment on the program showed it, and the text says which;
// an experiment that gets no whole answer shows nothing.
// `runs` counts the program's runs it made.
[[nodiscard]] Explanation diagnose(const Trace& trace, const Replies& replies, const Divergence& d,
                                   const Program& program, const SettingsProbe& probe, int* runs = nullptr);

// `settings_ignored` when `replies`, up to and with call `upto`, are the rules' under the trace's
// settings with (some of) the unread ones put back to the lab's; else nullopt. diagnose() asks
// it of the whole trace; a departure whose answers up to it are so is one the unread settings
// explain, and the report puts it under that root cause once one trace has shown it whole.
[[nodiscard]] std::optional<Explanation> unread_settings(const Trace& trace, const Replies& replies, std::size_t upto,
                                                         const SettingsProbe& probe);

}  // namespace cb::grade::conformance

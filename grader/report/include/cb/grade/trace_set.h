#pragma once
// Which traces a breaker program is asked, and how to ask them again. --conformance gives it once;
// it goes whole from the run to the evidence kept, to the part judged and to the report, so a
// regrade judges the answers on the same traces and the report's line to repeat the run is the
// run that was made.

#include <cstdint>
#include <string>

namespace cb::grade {

// The traces' generator: 1, random traces only; 2, a core aimed at the rules random traces miss
// on some seeds (late results, the threshold's edge) first. Answers kept without it are 1's.
inline constexpr int kTraceGeneration = 2;

struct TraceSet {
  std::string command;  // as the report shows it
  int count = 200;      // traces 0..count-1 of the seed
  std::uint64_t seed = 0;
  // The flags besides the command and the seed that the same answers need again (" --traces 60
  // --program-env 'CXX=clang++'"), shell-quoted.
  std::string repeat_flags;
  // Which generator made them (conformance::trace_for): the answers a grading keeps are to the
  // traces of its own, and a regrade of them asks for those, whatever the grader's today.
  int generation = kTraceGeneration;
};

}  // namespace cb::grade

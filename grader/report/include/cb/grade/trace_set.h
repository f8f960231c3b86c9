#pragma once
// Which traces a breaker program is asked, and how to ask them again. --conformance gives it once;
// it goes whole from the run to the evidence kept, to the part judged and to the report, so a
// regrade judges the answers on the same traces and the report's line to repeat the run is the
// run that was made.

#include <cstdint>
#include <string>

namespace cb::grade {

struct TraceSet {
  std::string command;  // as the report shows it
  int count = 200;      // traces 0..count-1 of the seed
  std::uint64_t seed = 0;
  // The flags besides the command and the seed that the same answers need again (" --traces 60
  // --program-env 'CXX=clang++'"), shell-quoted.
  std::string repeat_flags;
};

}  // namespace cb::grade

#pragma once
// cb-grade --conformance: a breaker program driven with generated traces, its first wrong
// answer shrunk to a smallest trace and named by rule, as one graded part of the report.

#include <cstdint>
#include <functional>
#include <string>

#include "cb/grade/conformance_traces.h"
#include "cb/grade/report.h"

namespace cb::grade {

struct ConformanceOptions {
  std::string command;  // as the report shows it
  int traces = 200;
  std::uint64_t seed = 0;
  conformance::ShrinkBudget shrink;
  double points = 1;  // all or nothing: one wrong answer is a wrong breaker
  std::string visibility = "visible";
  // Called after each trace is judged, in order (never two at once).
  std::function<void(std::size_t done, std::size_t total)> progress;
  int jobs = 1;  // traces run at once (each its own process); the verdict does not depend on it
};

// Runs traces 0..traces-1 of the seed through `program` and stops at the first it answers
// otherwise than the rules; that one is shrunk and tabled. With jobs > 1 the traces run in
// rounds of that many at once and are judged in order, so the trace reported is the same.
[[nodiscard]] ConformancePart check_conformance(const ConformanceOptions& options, const conformance::Program& program);

// A seed nobody chose: from the kernel's random source, small enough to read out and retype.
[[nodiscard]] std::uint64_t random_seed();

}  // namespace cb::grade

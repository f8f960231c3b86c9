#include "placement.h"

#include <algorithm>

namespace cb::grade {
const TransitionLine* find_transition(const std::vector<TransitionLine>& log, std::string_view from,
                                      std::string_view to) {
  for (const TransitionLine& l : log)
    if (l.from == from && l.to == to) return &l;
  return nullptr;
}

const TransitionLine* last_transition(const std::vector<TransitionLine>& log, std::string_view from,
                                      std::string_view to) {
  const TransitionLine* found = nullptr;
  for (const TransitionLine& l : log)
    if (l.from == from && l.to == to) found = &l;
  return found;
}

namespace {

// How many of `requests` (in order) the stamp's interval leaves answered before its start, and
// before its end. nullopt when one has no wall-clock time.
std::optional<Placement> bounds(const std::vector<const RecordEntry*>& requests, const TransitionLine& l) {
  Placement p;
  const std::int64_t start = *l.at_us;
  const std::int64_t end = start + l.resolution_us;
  for (const RecordEntry* e : requests) {
    const auto answered = answered_wall_us(*e);
    if (!answered) return std::nullopt;
    if (*answered < start) ++p.low;
    if (*answered < end) ++p.high;
  }
  return p;
}

}  // namespace

std::vector<const RecordEntry*> successful_trials(const LabRun& run) {
  std::vector<const RecordEntry*> ok;
  std::copy_if(run.trials.begin(), run.trials.end(), std::back_inserter(ok),
               [](const RecordEntry* e) { return e->status && *e->status >= 200 && *e->status < 400; });
  return ok;
}

std::optional<Placement> place_trip(const LabRun& run, const std::vector<TransitionLine>& log) {
  if (run.burst.empty()) return std::nullopt;
  // The first: a breaker that opened more than once is step 8's to judge; the trip of step 3 is
  // the first.
  const TransitionLine* open = find_transition(log, "CLOSED", "OPEN");
  if (open == nullptr || !open->at_us) return std::nullopt;
  const auto first = run.burst.front()->wall_us;
  const auto last = answered_wall_us(*run.burst.back());
  if (!first || !last) return std::nullopt;
  if (*open->at_us + open->resolution_us < *first || *open->at_us > *last + 1'000'000) return std::nullopt;
  auto p = bounds(run.burst, *open);
  if (!p) return std::nullopt;
  // After every /always500 the server saw, if the stamp allows it: then none reached it while
  // OPEN. Else the latest the stamp allows, which leaves the fewest there.
  p->reading = p->high == run.burst.size() ? run.burst.size() : p->high;
  return p;
}

std::optional<Placement> place_close(const std::vector<const RecordEntry*>& ok, const std::vector<TransitionLine>& log,
                                     std::size_t wanted) {
  const TransitionLine* closed = last_transition(log, "HALF_OPEN", "CLOSED");
  if (closed == nullptr || !closed->at_us) return std::nullopt;
  auto p = bounds(ok, *closed);
  if (!p) return std::nullopt;
  // A close judges a trial: at least one came before it.
  p->low = std::max<std::size_t>(p->low, 1);
  p->high = std::max(p->high, p->low);
  p->reading = p->low <= wanted && wanted <= p->high ? wanted : p->low;
  return p;
}

}  // namespace cb::grade

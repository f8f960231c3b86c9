#include "cb/grade/timeline.h"

#include <algorithm>
#include <set>

#include "cb/grade/artifacts.h"
#include "cb/grade/record.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {

Timeline make_timeline(const Record* record, const LabRun* run, const std::vector<TransitionLine>* transitions,
                       const LabSpec& spec, const std::vector<std::uint64_t>& step_last_seq) {
  Timeline t;
  if (transitions != nullptr)
    for (const TransitionLine& l : *transitions)
      t.transitions.push_back({l.line, l.from, l.to, l.at_us, l.resolution_us});
  if (record == nullptr) return t;
  if (!step_last_seq.empty()) {
    for (const RecordEntry& e : record->entries) {
      if (e.path.rfind(flaky::path::kAdmin, 0) == 0 || !e.wall_us) continue;
      int step = 1;
      while (static_cast<std::size_t>(step) <= step_last_seq.size() &&
             e.seq > step_last_seq[static_cast<std::size_t>(step) - 1])
        ++step;
      t.requests.push_back({e.seq, *e.wall_us, e.duration_ms.value_or(0), e.path, e.status, step});
    }
    return t;
  }
  // The lab's phases, as the record analysis found them: step 3's burst, the first trial (5),
  // the other trials (6); /fast before the burst is step 2, what comes between the burst and
  // the first trial is step 4 (the /count pair and anything that leaked through OPEN), /bad is 7.
  std::set<const RecordEntry*> burst;
  std::set<const RecordEntry*> trials;
  const RecordEntry* first_trial = nullptr;
  if (run != nullptr) {
    burst.insert(run->burst.begin(), run->burst.end());
    trials.insert(run->trials.begin(), run->trials.end());
    if (!run->trials.empty()) first_trial = run->trials.front();
  }
  int step = grade::step(StepRole::Server);
  bool after_burst = false;
  for (const RecordEntry& e : record->entries) {
    if (e.path.rfind(flaky::path::kAdmin, 0) == 0 || !e.wall_us) continue;
    if (burst.count(&e) != 0) {
      step = grade::step(StepRole::Trip);
      after_burst = true;
    } else if (&e == first_trial) {
      step = grade::step(StepRole::Cooldown);
    } else if (trials.count(&e) != 0) {
      step = grade::step(StepRole::Trials);
    } else if (e.path == spec.script.bad_path) {
      step = grade::step(StepRole::Ignore4xx);
    } else if (e.counted && e.path == spec.script.fast_path && !after_burst) {
      step = grade::step(StepRole::Fast);
    } else if (after_burst && step == grade::step(StepRole::Trip)) {
      step = grade::step(StepRole::Refused);
    }
    t.requests.push_back({e.seq, *e.wall_us, e.duration_ms.value_or(0), e.path, e.status, step});
  }
  return t;
}

}  // namespace cb::grade

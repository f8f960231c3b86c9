#include "cb/grade/conformance_deadline.h"

namespace cb::grade::conformance {

Deadline Deadline::live(TimeSource now, std::chrono::steady_clock::time_point start, std::chrono::milliseconds after) {
  Deadline d;
  d.now_ = std::move(now);
  d.never_ = false;
  d.at_ = start + after;
  return d;
}

Deadline Deadline::replay(int cut) {
  Deadline d;
  d.never_ = cut < 0;
  d.cut_ = cut;
  return d;
}

bool Deadline::passed() {
  ++asked_;
  if (never_) return false;
  if (!now_) return asked_ >= cut_;
  if (cut_ < 0 && now_() >= at_) cut_ = asked_;
  return cut_ >= 0;
}

}  // namespace cb::grade::conformance

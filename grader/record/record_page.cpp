#include "cb/flaky/record.h"
#include "cb/grade/record.h"
#include "cb/grade/files.h"

namespace cb::grade {

Record record_of(const flaky::Page& page) {
  Record r;
  r.epoch = page.epoch;
  r.count = page.count;
  r.gap = page.gap;
  r.entries.reserve(page.entries.size());
  for (const flaky::Entry& e : page.entries) {
    RecordEntry out;
    out.seq = e.seq;
    out.t_ms = static_cast<double>(e.t_us) / 1000.0;
    out.wall_us = e.wall_us;
    out.method = valid_utf8(e.method_view());
    out.path = valid_utf8(e.path_view());
    if (e.status != 0) out.status = e.status;
    out.outcome = std::string(flaky::to_string(e.outcome));
    out.counted = e.counted;
    if (e.count_answer >= 0) out.count = e.count_answer;
    if (e.duration_us >= 0) out.duration_ms = static_cast<double>(e.duration_us) / 1000.0;
    r.entries.push_back(std::move(out));
  }
  return r;
}

}  // namespace cb::grade

#include "cb/grade/evidence.h"

namespace cb::grade {

Evidence files_and_record(SubmissionDir files, std::optional<Record> record, std::string no_record_reason) {
  Evidence e;
  e.files = std::move(files);
  e.record = std::move(record);
  e.no_record_reason = std::move(no_record_reason);
  return e;
}

}  // namespace cb::grade

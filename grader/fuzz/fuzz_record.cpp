#include "cb/grade/record.h"
#include "fuzz_parsers.h"

// The record comes from a server the grader does not control; whatever parses is also analysed
// and written back out, the paths a grade takes through it.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto record = cb::grade::parse_record(as_text(data, size));
  if (record) {
    (void)cb::grade::analyse(*record);
    (void)cb::grade::to_json(*record);
  }
  return 0;
}

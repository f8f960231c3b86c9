#include "cb/grade/artifacts.h"
#include "cb/utc_time.h"
#include "fuzz_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = as_text(data, size);
  (void)cb::grade::parse_transitions(text);
  (void)cb::parse_utc(text);
  return 0;
}

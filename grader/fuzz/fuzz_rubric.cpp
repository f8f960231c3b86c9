#include "cb/grade/rubric.h"
#include "fuzz_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)cb::grade::Rubric::parse(as_text(data, size));
  return 0;
}

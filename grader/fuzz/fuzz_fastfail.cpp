#include "cb/grade/artifacts.h"
#include "fuzz_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)cb::grade::parse_fastfail(as_text(data, size));
  return 0;
}

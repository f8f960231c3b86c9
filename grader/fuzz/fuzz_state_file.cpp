#include "cb/grade/artifacts.h"
#include "cb/grade/files.h"
#include "fuzz_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = as_text(data, size);
  (void)cb::grade::invalid_utf8_at(text);
  (void)cb::grade::valid_utf8(text);
  (void)cb::grade::parse_state_file(text);
  return 0;
}

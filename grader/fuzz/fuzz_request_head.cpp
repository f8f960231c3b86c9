// The flaky server's request-head parser, on bytes any client can send. Beyond not crashing: a
// head it accepts lies within the bytes, and the parse of a prefix never claims more than it had.
#include <cstdlib>

#include "fuzz_parsers.h"
#include "http_message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = as_text(data, size);
  const cb::flaky::HeadLimits limits{4096, 1024};
  const cb::flaky::Parsed p = cb::flaky::parse_request_head(bytes, limits);
  if (p.kind == cb::flaky::Parsed::Kind::Done) {
    if (p.consumed == 0 || p.consumed > size) std::abort();
    if (p.request.target.empty() || p.request.target.front() != '/') std::abort();
    (void)p.request.param("ms");
    (void)cb::flaky::serialize(cb::flaky::Response{}, p.request.method == "HEAD", !p.request.keep_alive);
  }
  if (p.kind == cb::flaky::Parsed::Kind::Bad && p.status != 400 && p.status != 414 && p.status != 431) std::abort();
  return 0;
}

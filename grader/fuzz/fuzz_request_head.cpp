// The flaky server's request-head parser, on bytes any client can send. Beyond not crashing: a
// head it accepts lies within the bytes, every refusal has one of the statuses the server sends,
// and a head parsed in two pieces (the scan resumed where the first call stopped) comes out as
// the whole did. Seeded with grader/fuzz/corpus/request_head: the differential test's shapes.
#include <cstdlib>

#include "fuzz_parsers.h"
#include "http_message.h"

namespace {

bool same(const cb::flaky::Parsed& a, const cb::flaky::Parsed& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == cb::flaky::Parsed::Kind::Bad) return a.status == b.status;
  if (a.kind == cb::flaky::Parsed::Kind::NeedMore) return true;
  return a.consumed == b.consumed && a.request.method == b.request.method && a.request.path == b.request.path &&
         a.request.query == b.request.query && a.request.headers == b.request.headers &&
         a.request.keep_alive == b.request.keep_alive && a.request.has_body == b.request.has_body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = as_text(data, size);
  const cb::flaky::HeadLimits limits{4096, 1024, 100};
  const cb::flaky::Parsed p = cb::flaky::parse_request_head(bytes, limits);
  if (p.kind == cb::flaky::Parsed::Kind::Done) {
    if (p.consumed == 0 || p.consumed > size) std::abort();
    if (p.request.path.empty() || (p.request.path.front() != '/' && p.request.path != "*")) std::abort();
    (void)p.request.param("ms");
    (void)cb::flaky::serialize(
        cb::flaky::Response{}, p.request.method == "HEAD",
        p.request.keep_alive ? cb::flaky::ConnectionHeader::None : cb::flaky::ConnectionHeader::Close);
  }
  if (p.kind == cb::flaky::Parsed::Kind::Bad && p.status != 400 && p.status != 414 && p.status != 431 &&
      p.status != 501 && p.status != 505)
    std::abort();
  // The same bytes in two pieces, the cut taken from the first byte. A refusal of the first
  // piece (a limit passed) may name another cause than the whole would, but the whole is refused
  // too; otherwise the two pieces come out exactly as the whole.
  if (size > 1) {
    const std::size_t cut = 1 + data[0] % (size - 1);
    cb::flaky::HeadScan scan;
    const cb::flaky::Parsed first = cb::flaky::parse_request_head(bytes.substr(0, cut), limits, scan);
    if (first.kind == cb::flaky::Parsed::Kind::Bad) {
      if (p.kind != cb::flaky::Parsed::Kind::Bad) std::abort();
    } else {
      const cb::flaky::Parsed whole =
          first.kind == cb::flaky::Parsed::Kind::NeedMore ? cb::flaky::parse_request_head(bytes, limits, scan) : first;
      if (!same(whole, p)) std::abort();
    }
  }
  return 0;
}

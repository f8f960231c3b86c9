#pragma once
// The server's record: what really reached the flaky server, read from its /admin/record. The
// grader believes this over any file a student wrote.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/grade/lab_spec.h"
#include "cb/result.h"

namespace cb::flaky {
struct Page;
}

namespace cb::grade {

struct RecordEntry {
  std::uint64_t seq = 0;
  double t_ms = 0;                      // arrival, since the server started
  std::optional<std::int64_t> wall_us;  // arrival, Unix epoch
  std::string method;
  std::string path;
  std::optional<int> status;  // none if no status line was sent
  std::string outcome;
  bool counted = false;
  std::optional<std::int64_t> count;  // /count: the value answered
  std::optional<double> duration_ms;
};

struct Record {
  std::uint64_t epoch = 0;
  std::uint64_t count = 0;
  bool gap = false;  // entries were dropped before they could be read
  std::vector<RecordEntry> entries;
};

// /admin/record's JSON. Anything not of that shape is an error naming the field.
[[nodiscard]] Result<Record> parse_record(std::string_view json);

// The record as JSON in /admin/record's own shape, so that parse_record reads it back: for
// keeping the evidence a grade was given on (--save-record) and grading on it later (--record).
[[nodiscard]] std::string to_json(const Record& record);

// A page of a server in this process, as /admin/record would have said it (a server the
// program started itself: no request, no JSON between them). A path that is not UTF-8 is kept
// with '?' for its bad bytes, as the JSON would have replaced them.
[[nodiscard]] Record record_of(const flaky::Page& page);

// GET {server}/admin/record, all pages; `admin_token` for a locked server (--run's). Errors: not
// reachable, or not a flaky server.
[[nodiscard]] Result<Record> fetch_record(const std::string& server_url,
                                          std::chrono::milliseconds timeout = std::chrono::seconds{5},
                                          const std::string& admin_token = {});

// The lab run the record shows, in the lab's own terms (docs/CONTRACTS.md): what reached the
// server, in order, sorted into the lab's phases.
struct LabRun {
  std::vector<const RecordEntry*> lab;          // counted requests, in order
  std::vector<const RecordEntry*> count_calls;  // /count requests, in order
  std::vector<const RecordEntry*> admin;        // refused /admin/* requests (a locked server records them)
  std::size_t fast_before_first_500 = 0;        // /fast answered 200 before the first /always500
  std::size_t other_before_first_500 = 0;       // anything else before it
  std::size_t always500 = 0;                    // /always500 requests received, in all
  // Step 3's /always500: from the first one to the first /count after it (fastfail's "before")
  // or the first other request. Calls leaking through OPEN in step 4 come after that /count.
  std::vector<const RecordEntry*> burst;
  std::size_t first_burst_500 = 0;          // burst.size()
  std::optional<std::size_t> trip;          // index in `lab` of the burst's last /always500
  std::optional<std::size_t> last_500;      // index in `lab` of the last /always500
  std::optional<double> gap_after_open_ms;  // arrival of the next request after it, minus the end of the trip's
  std::vector<const RecordEntry*> trials;   // after the last /always500, before the first /bad
  std::size_t bad = 0;                      // /bad requests received
  std::size_t bad_answered_400 = 0;
  // Lab runs in the record: a run starts again when a request goes back to an earlier phase of
  // the script (a /fast after the /bad calls, an /always500 after the trials). 0 when no lab
  // request arrived at all.
  std::size_t runs = 0;
  std::optional<std::uint64_t> second_run_seq;  // the seq where the second run began
  // On a server someone kept running: lab requests before the run began (before the /count of
  // its step 1, after a pause of a second or more), left out of all of the above.
  std::size_t before_run = 0;
};

// When `e` was answered, on the server's wall clock (arrival plus duration).
[[nodiscard]] std::optional<std::int64_t> answered_wall_us(const RecordEntry& e);

// The record's own defects, as one line, or empty: entries lost (the ring dropped some, or
// sequence numbers jump). A record with a defect cannot prove what is missing from it.
[[nodiscard]] std::string record_defect(const Record& record);

// The record read as the lab's script (`spec`'s paths): which request belongs to which step.
// `kept`: the record of a server that was running before the program (not the grader's fresh
// one), whose first requests may be someone else's.
[[nodiscard]] LabRun analyse(const Record& record, const LabSpec& spec = lab_spec(), bool kept = false);

}  // namespace cb::grade

#pragma once
// The server's own record of every request: the evidence the grader believes instead of a
// student's files. A fixed ring, allocated once, so memory stays flat however long it runs.

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cb::flaky {

// What became of a request.
enum class Outcome : std::uint8_t {
  Pending,     // still being answered (a slow or hanging request)
  Answered,    // a status line was sent
  Reset,       // the connection was reset on purpose (/reset)
  Garbage,     // bytes that are not HTTP were sent on purpose (/garbage)
  ClientGone,  // the client gave up first (a timeout, from its side)
  HangLimit,   // the server's bound on a hang ran out and it closed the connection
  Cut,         // the server was stopping
};
[[nodiscard]] std::string_view to_string(Outcome o) noexcept;

struct Entry {
  std::uint64_t seq = 0;           // 1, 2, 3, ... since the last reset
  std::int64_t t_us = 0;           // arrival, microseconds since the server started (monotonic)
  std::int64_t wall_us = 0;        // arrival, microseconds since the Unix epoch
  std::int64_t duration_us = -1;   // arrival to outcome; -1 while pending
  std::int64_t count_answer = -1;  // for /count: the value it answered
  std::uint16_t status = 0;        // 0 when no status line was sent
  Outcome outcome = Outcome::Pending;
  bool counted = false;  // a lab request (everything but /count)
  bool path_truncated = false;
  std::array<char, 8> method{};
  std::uint8_t path_length = 0;
  std::array<char, 87> path{};  // the decoded path; longer ones are cut (path_truncated)

  [[nodiscard]] std::string_view method_view() const {
    return {method.data(), std::char_traits<char>::length(method.data())};
  }
  [[nodiscard]] std::string_view path_view() const { return {path.data(), path_length}; }
};

// How a request is kept: a lab request is counted; /count is recorded with its answer but not
// counted; a refused admin request (a locked server) is recorded, not counted, so the grader can
// tell that a program tried to reset or read the record it is graded on.
enum class Kind : std::uint8_t { Lab, Count, RefusedAdmin };

struct Arrival {
  std::uint64_t seq;
  std::uint64_t epoch;
  std::int64_t count_answer;  // -1 unless this was /count
  std::int64_t t_us;          // its time of arrival, as recorded
};

struct Page {
  std::uint64_t epoch = 0;      // bumped by every reset, so a reader can tell its cursor is stale
  std::uint64_t count = 0;      // lab requests since the reset
  std::uint64_t next_seq = 0;   // the seq the next request will get
  std::uint64_t first_seq = 0;  // the oldest seq still held (next_seq when empty)
  std::uint64_t dropped = 0;    // entries pushed out of the ring since the reset
  bool gap = false;             // entries after `since` were dropped before this read
  // Where to read on: `since` for the next page (the last seq in this one), and whether there is
  // more after it now. (next_seq is not a cursor: reading on from it skips what `limit` held back.)
  std::uint64_t cursor = 0;
  bool more = false;
  std::size_t capacity = 0;
  std::vector<Entry> entries;  // seq > since, oldest first, at most `limit`
};

class RequestRecord {
 public:
  explicit RequestRecord(std::size_t capacity);

  // Numbers, stamps and stores a request as it arrives, and counts it if it is a lab request, in
  // one critical section, so /count and the record always agree on the order. `mono_us` is read
  // inside it too: stamped before, two loops' requests could be numbered in one order and timed
  // in the other (t_ms went back in seq order 104 times in 160k requests with 4 threads).
  Arrival arrive(std::string_view method, std::string_view path, Kind kind,
                 const std::function<std::int64_t()>& mono_us, std::int64_t wall_us);
  // Fills in what became of it (a no-op if the ring has moved past it, or a reset came between).
  void complete(const Arrival& a, Outcome outcome, int status, std::int64_t end_us);

  [[nodiscard]] std::uint64_t count() const;
  [[nodiscard]] Page read(std::uint64_t since, std::size_t limit) const;
  // Empties the record and the count, and starts a new epoch; returns it.
  std::uint64_t reset();

 private:
  [[nodiscard]] std::uint64_t first_seq_locked() const noexcept;

  mutable std::mutex mu_;
  std::vector<Entry> ring_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t count_ = 0;
  std::uint64_t epoch_ = 1;
};

// The record as JSON text (never throws on odd bytes in a path: they become U+FFFD).
[[nodiscard]] std::string to_json(const Page& page);

}  // namespace cb::flaky

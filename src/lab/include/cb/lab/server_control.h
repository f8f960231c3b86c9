#pragma once
// Finding the lab's server, or starting the bundled one: in this process for `cb-lab run`, in
// the background for `cb-lab step` (so that it and its record outlive one step).

#include <chrono>
#include <memory>
#include <string>

#include "cb/flaky/server.h"
#include "cb/lab/http_call.h"

namespace cb::lab {

struct Probe {
  enum class Kind { Flaky, NotFlaky, NothingListens, NoAnswer };
  Kind kind = Kind::NoAnswer;
  std::string detail;
};

// GET /admin/health: a flaky server answers {"status": "ok", ...}. The default timeout is for a
// loaded machine: under a sanitizer with both cores busy, a healthy server has taken over 1 s
// to answer, and a probe that gives up early calls it "not a flaky server" and fails step 1.
[[nodiscard]] Probe probe(const ServerUrl& server, std::chrono::milliseconds timeout = std::chrono::seconds{3});

// Probes until a flaky server answers or `total` passes: a server just started may be bound but
// not yet serving (its workers start on their own thread; under a sanitizer, slowly).
[[nodiscard]] Probe wait_until_ready(const ServerUrl& server, std::chrono::milliseconds total = std::chrono::seconds{10});

// Starts the flaky server in this process at `server` (loopback only).
[[nodiscard]] Result<std::unique_ptr<flaky::FlakyServer>> start_here(const ServerUrl& server);

// Starts it in a detached background process that keeps running after this one exits; returns
// its pid once it answers. Call before this process has started any thread. Its log (the
// server's own access log) goes to `log_path`.
[[nodiscard]] Result<int> start_in_background(const ServerUrl& server, const std::string& log_path);

}  // namespace cb::lab

#pragma once
// Which flaky server a command uses, decided here and nowhere else, and starting the bundled
// one: in this process for `cb-lab run` and `scene --live`, in the background for `cb-lab step`
// (so that it and its record outlive one step).
//
// The rule: a server someone else started holds their record, and a lab run resets it. So a
// command uses a server it did not start only when told to (--server URL, or CB_SERVER as
// `cb-grade --run` sets it). Otherwise it starts its own: at the scenario's address
// (127.0.0.1:8110) when that is free, else on a free port, and says which.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cb/flaky/options.h"
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
[[nodiscard]] Probe wait_until_ready(const ServerUrl& server,
                                     std::chrono::milliseconds total = std::chrono::seconds{10});

struct ServerWish {
  std::optional<ServerUrl> named;  // --server or CB_SERVER: that server, whoever started it
  ServerUrl preferred;             // where a server of our own goes when the address is free
  bool background = false;         // ours must outlive this process (cb-lab step)
  std::string log_path;            // background: where its access log goes
  flaky::ServerOptions options;    // for a server of our own; host and port come from the choice
};

struct ServerInUse {
  ServerUrl url;
  Probe probe;                              // what it answered once chosen
  std::unique_ptr<flaky::FlakyServer> own;  // started in this process (stops with it)
  std::optional<int> background_pid;        // started in the background (the user stops it)
  std::string how;                          // for the header: "the bundled server, started for this run"
};

// Errors: a named server where nothing listens and none can be started (not on this machine,
// or the port cannot be bound); a server of our own that cannot start anywhere.
[[nodiscard]] Result<ServerInUse> use_server(const ServerWish& wish);

// Starts the flaky server in this process.
[[nodiscard]] Result<std::unique_ptr<flaky::FlakyServer>> start_here(const flaky::ServerOptions& options);

struct BackgroundServer {
  int pid = 0;
  int port = 0;  // the port it listens on (the one asked for, or the free one it was given)
};

// Starts it in a detached background process that keeps running after this one exits; returns
// once it answers. Call before this process has started any thread. Its log (the server's own
// access log) goes to `log_path`.
[[nodiscard]] Result<BackgroundServer> start_in_background(const flaky::ServerOptions& options,
                                                           const std::string& log_path);

}  // namespace cb::lab

// flaky-server: the lab's unreliable downstream, and its witness.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <iostream>

#include "cb/cli_usage.h"
#include "cb/decimal_time.h"
#include "cb/flaky/server.h"
#include "cb/flaky/until_stopped.h"
#include "cb/flaky/endpoints.h"

namespace {

enum class ExitCode : int { Ok = 0, Failed = 1, Usage = 2 };

int fail(const std::string& message) {
  std::cerr << "flaky-server: " << message << '\n';
  return static_cast<int>(ExitCode::Usage);
}

}  // namespace

int main(int argc, char** argv) {
  cb::flaky::ServerOptions o;
  std::string toggle = "4s";
  std::string hang = "60s";
  std::string slow = "3500ms";
  std::string floor = "1ms";
  CLI::App app{"flaky-server: the circuit-breaker lab's unreliable downstream, with a record of every request",
               "flaky-server"};
  app.add_option("--host", o.host, "Address to listen on (loopback unless --allow-remote)")->capture_default_str();
  app.add_option("--port", o.port, "Port (0: any free port; the 'listening on' line says which)")
      ->capture_default_str();
  app.add_flag("--allow-remote", o.allow_remote, "Allow a --host that is not loopback");
  app.add_option("--toggle-period", toggle,
                 std::string(cb::flaky::path::kToggle) + " switches between healthy and 500 this often")
      ->capture_default_str();
  app.add_option("--slow-default", slow, std::string(cb::flaky::path::kSlow) + " without ?ms= answers after this long")
      ->capture_default_str();
  app.add_option("--hang-limit", hang,
                 std::string(cb::flaky::path::kHang) + " closes a connection nobody gave up on after this long")
      ->capture_default_str();
  app.add_option("--answer-floor", floor,
                 "A lab request is answered no sooner than this after it arrives, so a transition stamped to the "
                 "millisecond is placed between two answers (0ms for load tests)")
      ->capture_default_str();
  app.add_option("--record-size", o.record_capacity, "Requests the record keeps (older ones are dropped)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Event loops, one thread each (a connection never holds a thread)")
      ->capture_default_str();
  app.add_option("--max-connections", o.max_connections, "Open connections at most; one more is answered 503")
      ->capture_default_str();
  app.add_flag("--log", o.access_log, "Access log on stderr, one line per request");
  app.set_version_flag("--version", std::string("flaky-server ") + CB_FLAKY_VERSION);
  {
    namespace path = cb::flaky::path;
    const auto s = [](std::string_view p) { return std::string(p); };
    app.footer("Endpoints: " + s(path::kFast) + " " + s(path::kAlways500) + " " + s(path::kBad) + " " +
               s(path::kCount) + "  " + s(path::kSlow) + "?ms=N " + s(path::kHang) + " " + s(path::kToggle) + " " +
               s(path::kStatus) + "NNN " + s(path::kReset) + " " + s(path::kGarbage) + "\nAdmin (not counted): GET " +
               s(path::kAdminRecord) + "?since=S&limit=L, POST " + s(path::kAdminReset) + ", GET " +
               s(path::kAdminHealth));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << cb::usage_error(app, e, "flaky-server", {argv + 1, argv + argc}) << '\n';
    return static_cast<int>(ExitCode::Usage);
  }
  for (auto [flag, text, field] :
       {std::tuple{"--toggle-period", &toggle, &o.toggle_period}, std::tuple{"--hang-limit", &hang, &o.hang_limit},
        std::tuple{"--slow-default", &slow, &o.slow_default}, std::tuple{"--answer-floor", &floor, &o.answer_floor}}) {
    // The unit is required (docs/FLAKY_SERVER.md): "5" could be seconds or milliseconds.
    if (!text->empty() && std::isdigit(static_cast<unsigned char>(text->back())) != 0)
      return fail(std::string(flag) + ": '" + *text + "' has no unit: give us, ms, s, m or h");
    auto d = cb::parse_duration(*text);
    if (!d) return fail(std::string(flag) + ": " + d.error().message);
    *field = *d;
  }

  ::signal(SIGPIPE, SIG_IGN);
  // Before the "listening on" line: whoever reads it may stop us at once, and must get exit 0.
  auto stop = cb::flaky::StopSignals::install();
  if (!stop) return fail(stop.error().message);

  auto server = cb::flaky::FlakyServer::start(o);
  if (!server) return fail(server.error().message);
  std::printf("listening on %s\n", (*server)->url().c_str());
  std::fflush(stdout);

  if (auto waited = stop->wait(); !waited) return fail(waited.error().message);
  (*server)->stop();
  return static_cast<int>(ExitCode::Ok);
}

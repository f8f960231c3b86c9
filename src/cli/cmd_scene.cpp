// cb-lab scene NAME: the teaching scenes (scenarios/NAME.json).
#include "cmd_scene.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cb/decimal_time.h"
#include "cb/flaky/options.h"
#include "cb/lab/scenario.h"
#include "cb/lab/server_control.h"
#include "cb/atomic_file.h"
#include "lab_common.h"
#include "fleet_processes.h"
#ifdef CB_WITH_FLEET
#include "cb/fleet/fleet_options.h"
#endif
#include "scene_page.h"

namespace cb::cli {
namespace {

using lab::Micros;

// A scene's length in its own time, to choose a live scale.
Micros span(const lab::SceneSpec& spec) {
  return std::visit(
      [](const auto& s) -> Micros {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, lab::ChargesSpec>) return s.send_at.back() + s.timeout;
        if constexpr (std::is_same_v<T, lab::PoolSpec>) return s.duration + s.timeout * s.attempts;
        return Micros{0};  // traffic runs in real time; the fleet is simulated only
      },
      spec);
}

}  // namespace

CLI::App* setup_scene(CLI::App& app, SceneOptions& options) {
  auto* cmd = app.add_subcommand("scene", "Teaching scenes: payments, pool, toggle, fleet");
  cmd->add_option("NAME", options.name, "payments, pool, toggle or fleet (or a scene file)")->required();
  cmd->add_flag("--live", options.live, "Against the real flaky server, time scaled down (payments, pool, toggle)");
  cmd->add_flag("--json", options.json, "Print the scene's numbers as JSON");
  cmd->add_option("--scale", options.scale, "--live: real seconds per scene second (default: about 13 s in all)")
      ->check(CLI::Range(0.001, 10.0));
  cmd->add_option("--duration", options.duration, "toggle: how long to send traffic (default: the scene's, 20s)");
  cmd->add_option("--server", options.server,
                  "--live: use this flaky server (default: CB_SERVER, else one of cb-lab's own)");
  cmd->add_option("--seed", options.seed, "fleet: the random source's seed (the jitter)");
  cmd->add_option("--html", options.html, "Also draw the scene as one self-contained page of pictures here");
  cmd->add_option("--shared", options.shared,
                  "fleet: also run the instances as real processes sharing one breaker through this Redis "
                  "(redis://HOST:PORT or unix:///PATH), beside as many with a breaker each");
  return cmd;
}

ExitCode scene_command(const SceneOptions& o) {
  auto fail = [&](const std::string& m) {
    std::cerr << "cb-lab scene: " << m << '\n';
    return ExitCode::Usage;
  };
  const std::string path = o.name.find('/') != std::string::npos || o.name.find(".json") != std::string::npos
                               ? o.name
                               : lab::scenarios_dir() + "/" + o.name + ".json";
  auto scenario = lab::load_scenario(path);
  if (!scenario) return fail(scenario.error().message);
  if (!o.shared.empty()) {
    bool has_fleet = false;
    for (const auto& step : scenario->steps)
      for (const auto& a : step.actions)
        has_fleet = has_fleet || (a.scene && std::holds_alternative<lab::FleetSpec>(*a.scene));
    if (!has_fleet) return fail("--shared: only a fleet scene runs processes, and " + path + " has none");
#ifdef CB_WITH_FLEET
    if (auto reached = fleet::check_redis(o.shared, std::chrono::seconds{2}); !reached)
      return fail("--shared: " + reached.error().message);
#else
    return fail("--shared: this cb-lab was built without the fleet (install libhiredis-dev and build again)");
#endif
  }
  lab::SceneRun how;
  how.live = o.live;
  how.processes = !o.shared.empty();
  how.seed = o.seed;
  if (!o.duration.empty()) {
    auto d = parse_duration(o.duration);
    if (!d || d->count() <= 0 || *d > std::chrono::hours(24))
      return fail("--duration: '" + o.duration + "' is not a duration from 1us to 24h");
    how.duration = *d;
  }
  // Live: a real server; one of our own with the scene's toggle period, unless one is named.
  std::unique_ptr<flaky::FlakyServer> own;
  if (o.live) {
    LabArgs named_args;
    named_args.server = o.server;
    auto named = named_server(named_args);
    if (!named) return fail(named.error().message);
    auto preferred = lab::parse_url(scenario->server);
    if (!preferred) return fail(path + ": server: " + preferred.error().message);
    lab::ServerWish wish;
    wish.named = *named;
    wish.preferred = *preferred;
    // A pool scene's hanging calls hold connections, not threads, so only the toggle period is
    // the scene's to set.
    for (const auto& step : scenario->steps)
      for (const auto& a : step.actions)
        if (a.scene)
          if (const auto* t = std::get_if<lab::TrafficSpec>(a.scene.get()))
            wish.options.toggle_period = t->toggle_period;
    auto server = lab::use_server(wish);
    if (!server) return fail(server.error().message);
    if (server->probe.kind != lab::Probe::Kind::Flaky)
      return fail("the server at " + server->url.text() + " is not answering as a flaky server (" +
                  server->probe.detail + ")");
    own = std::move(server->own);
    how.server = server->url.text();
    Micros total{0};
    for (const auto& step : scenario->steps)
      for (const auto& a : step.actions)
        if (a.scene) total += span(*a.scene);
    how.scale = o.scale > 0         ? o.scale
                : total.count() > 0 ? std::min(1.0, 13e6 / static_cast<double>(total.count()))
                                    : 1.0;
  }
  if (!o.json) {
    std::cout << scenario->title << (o.live ? " -- live against " + how.server : " -- simulated") << "\n";
    if (o.live) std::cout << "(time scaled: 1 scene second = " << how.scale << " s)\n";
  }
  nlohmann::json steps = nlohmann::json::array();
  for (std::size_t n = 0; n < scenario->steps.size(); ++n) {
    const lab::Step& step = scenario->steps[n];
    if (!o.json) std::cout << "\n" << step.title << "\n";
    nlohmann::json actions = nlohmann::json::array();
    for (const lab::Action& a : step.actions) {
      if (!a.scene)
        return fail(path + ": steps[" + std::to_string(n) +
                    "]: a scene holds scene actions (charges, pool, traffic, fleet)");
      std::optional<BreakerOptions> breaker;
      if (a.breaker != "none") breaker = scenario->breakers.at(a.breaker).options;
      Result<lab::SceneOutput> out = std::visit(
          [&](const auto& spec) -> Result<lab::SceneOutput> {
            using T = std::decay_t<decltype(spec)>;
            if constexpr (std::is_same_v<T, lab::ChargesSpec>) return lab::run_charges(spec, breaker, how);
            if constexpr (std::is_same_v<T, lab::PoolSpec>) return lab::run_pool(spec, breaker, how);
            if constexpr (std::is_same_v<T, lab::TrafficSpec>) return lab::run_traffic(spec, *breaker, how);
            if constexpr (std::is_same_v<T, lab::FleetSpec>) return lab::run_fleet(spec, *breaker, how);
          },
          *a.scene);
      if (!out) return fail(out.error().message);
      if (const auto* fleet = std::get_if<lab::FleetSpec>(a.scene.get()); fleet != nullptr && !o.shared.empty()) {
        FleetProcessesRun run;
        run.shared = o.shared;
        if (o.scale > 0) run.scale = o.scale;
        if (o.live) run.live = how.server;
        auto processes = run_fleet_processes(*fleet, *breaker, run);
        if (!processes) return fail(processes.error().message);
        out->lines.insert(out->lines.end(), processes->lines.begin(), processes->lines.end());
        out->data["processes_run"] = processes->data;
      }
      if (!o.json)
        for (const auto& line : out->lines) std::cout << "  " << line << "\n";
      actions.push_back(out->data);
    }
    steps.push_back({{"title", step.title}, {"results", actions}});
  }
  const nlohmann::json all{{"scene", scenario->name}, {"live", o.live}, {"scale", how.scale}, {"steps", steps}};
  if (o.json) std::cout << all.dump(2) << "\n";
  if (!o.html.empty())
    if (auto w = write_file_atomically(o.html, scene_page(all)); !w) return fail(w.error().message);
  return ExitCode::Ok;
}

}  // namespace cb::cli

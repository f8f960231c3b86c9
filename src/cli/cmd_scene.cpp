// cb-lab scene NAME: the teaching scenes of seeds 002 and 003 (scenarios/NAME.json).
#include "cmd_scene.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cb/decimal_time.h"
#include "cb/flaky/options.h"
#include "cb/lab/scenario.h"
#include "cb/lab/server_control.h"

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
  auto* cmd = app.add_subcommand("scene", "The seeds' teaching scenes: payments, pool, toggle, fleet");
  cmd->add_option("NAME", options.name, "payments, pool, toggle or fleet (or a scene file)")->required();
  cmd->add_flag("--live", options.live, "Against the real flaky server, time scaled down (payments, pool, toggle)");
  cmd->add_flag("--json", options.json, "Print the scene's numbers as JSON");
  cmd->add_option("--scale", options.scale, "--live: real seconds per scene second (default: about 13 s in all)")
      ->check(CLI::Range(0.001, 10.0));
  cmd->add_option("--duration", options.duration, "toggle: how long to send traffic (default: the scene's, 20s)");
  cmd->add_option("--server", options.server, "--live: the flaky server (default: the scene's; started if nothing listens)");
  cmd->add_option("--seed", options.seed, "fleet: the random source's seed (the jitter)");
  return cmd;
}

ExitCode run_scene(const SceneOptions& o) {
  auto fail = [&](const std::string& m) {
    std::cerr << "cb-lab scene: " << m << '\n';
    return ExitCode::Usage;
  };
  const std::string path =
      o.name.find('/') != std::string::npos || o.name.find(".json") != std::string::npos ? o.name : lab::scenarios_dir() + "/" + o.name + ".json";
  auto scenario = lab::load_scenario(path);
  if (!scenario) return fail(scenario.error().message);
  lab::SceneRun how;
  how.live = o.live;
  how.seed = o.seed;
  if (!o.duration.empty()) {
    auto d = parse_duration(o.duration);
    if (!d || d->count() <= 0) return fail("--duration: '" + o.duration + "' is not a positive duration");
    how.duration = *d;
  }
  // Live: a real server; the bundled one when nothing listens, with the scene's toggle period.
  std::unique_ptr<flaky::FlakyServer> own;
  if (o.live) {
    auto url = lab::parse_url(o.server.empty() ? scenario->server : o.server);
    if (!url) return fail("--server: " + url.error().message);
    if (lab::probe(*url).kind == lab::Probe::Kind::NothingListens) {
      if (!flaky::is_loopback(url->host)) return fail("nothing listens at " + url->text());
      flaky::ServerOptions so;
      so.host = url->host;
      so.port = url->port;
      for (const auto& step : scenario->steps)
        for (const auto& a : step.actions) {
          if (!a.scene) continue;
          if (const auto* t = std::get_if<lab::TrafficSpec>(a.scene.get())) so.toggle_period = t->toggle_period;
          // A pool scene holds as many hanging calls as it has workers.
          if (const auto* p = std::get_if<lab::PoolSpec>(a.scene.get()))
            so.threads = std::max(so.threads, std::min(1024, (p->workers > 0 ? p->workers : 400) + 16));
        }
      auto s = flaky::FlakyServer::start(so);
      if (!s) return fail("nothing listens at " + url->text() + ", and the bundled server cannot start there: " + s.error().message);
      own = std::move(s).value();
    }
    if (const lab::Probe ready = lab::wait_until_ready(*url); ready.kind != lab::Probe::Kind::Flaky)
      return fail("the server at " + url->text() + " is not answering as a flaky server (" + ready.detail + ")");
    how.server = url->text();
    Micros total{0};
    for (const auto& step : scenario->steps)
      for (const auto& a : step.actions)
        if (a.scene) total += span(*a.scene);
    how.scale = o.scale > 0 ? o.scale : total.count() > 0 ? std::min(1.0, 13e6 / static_cast<double>(total.count())) : 1.0;
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
      if (!a.scene) return fail(path + ": steps[" + std::to_string(n) + "]: a scene holds scene actions (charges, pool, traffic, fleet)");
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
      if (!o.json)
        for (const auto& line : out->lines) std::cout << "  " << line << "\n";
      actions.push_back(out->data);
    }
    steps.push_back({{"title", step.title}, {"results", actions}});
  }
  if (o.json) std::cout << nlohmann::json{{"scene", scenario->name}, {"live", o.live}, {"scale", how.scale}, {"steps", steps}}.dump(2) << "\n";
  return ExitCode::Ok;
}

}  // namespace cb::cli

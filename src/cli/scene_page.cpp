// cb-lab scene NAME --html FILE: each scene as a picture, drawn from the same data --json prints,
// so what the page shows and what the tests assert are one thing. Colour is never alone: every
// series is named in a legend and on hover, states are written out, patterns tell the fallbacks.
#include "scene_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cb/html_page.h"

namespace cb::cli {
namespace {

using cb::html_escape;
using nlohmann::json;

std::string num(double v, int decimals = 1) { return cb::html_number(v, decimals); }

// A plot area: x from x0 to x1 (pixels) for [0, xmax]; y from y1 (bottom) up to y0 for [0, ymax].
struct Plot {
  double xmax = 1;
  double ymax = 1;
  double x0 = 70;
  double x1 = 1060;
  double y0 = 30;
  double y1 = 200;
  [[nodiscard]] double x(double v) const { return x0 + (x1 - x0) * v / std::max(xmax, 1e-9); }
  [[nodiscard]] double y(double v) const { return y1 - (y1 - y0) * v / std::max(ymax, 1e-9); }
};

// A round step near span/8: 1, 2 or 5 times a power of ten.
double nice_step(double span) {
  const double raw = std::max(span / 8, 1e-9);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string axes(const Plot& p, const std::string& xlabel, const std::string& ylabel, bool y_axis = true) {
  std::string s = "<line class=\"axis\" x1=\"" + num(p.x0) + "\" y1=\"" + num(p.y1) + "\" x2=\"" + num(p.x1) +
                  "\" y2=\"" + num(p.y1) + "\"/>";
  const double xs = nice_step(p.xmax);
  for (double v = 0; v <= p.xmax + 1e-9; v += xs)
    s += "<line class=\"tick\" x1=\"" + num(p.x(v)) + "\" y1=\"" + num(p.y1) + "\" x2=\"" + num(p.x(v)) + "\" y2=\"" +
         num(p.y1 + 4) + "\"/><text x=\"" + num(p.x(v)) + "\" y=\"" + num(p.y1 + 16) + "\" text-anchor=\"middle\">" +
         num(v, xs < 1 ? 1 : 0) + "</text>";
  s += "<text x=\"" + num((p.x0 + p.x1) / 2) + "\" y=\"" + num(p.y1 + 32) + "\" text-anchor=\"middle\">" +
       html_escape(xlabel) + "</text>";
  if (!y_axis) return s;
  s += "<line class=\"axis\" x1=\"" + num(p.x0) + "\" y1=\"" + num(p.y0) + "\" x2=\"" + num(p.x0) + "\" y2=\"" +
       num(p.y1) + "\"/>";
  const double ys = nice_step(p.ymax);
  for (double v = 0; v <= p.ymax + 1e-9; v += ys)
    s += "<line class=\"grid\" x1=\"" + num(p.x0) + "\" y1=\"" + num(p.y(v)) + "\" x2=\"" + num(p.x1) + "\" y2=\"" +
         num(p.y(v)) + "\"/><text x=\"" + num(p.x0 - 6) + "\" y=\"" + num(p.y(v) + 4) + "\" text-anchor=\"end\">" +
         num(v, ys < 1 ? 1 : 0) + "</text>";
  s += "<text x=\"14\" y=\"" + num((p.y0 + p.y1) / 2) + "\" transform=\"rotate(-90 14 " + num((p.y0 + p.y1) / 2) +
       ")\" text-anchor=\"middle\">" + html_escape(ylabel) + "</text>";
  return s;
}

std::string svg(double height, const std::string& title, const std::string& inner) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1100 " + num(height, 0) + "\" role=\"img\"><title>" +
         html_escape(title) +
         "</title><defs><pattern id=\"dots\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
         "<rect width=\"6\" height=\"6\" fill=\"#e0e0e0\"/><circle cx=\"3\" cy=\"3\" r=\"1.2\" fill=\"#555\"/></pattern>"
         "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#f6cfcb\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b71c1c\" "
         "stroke-width=\"1.5\"/></pattern></defs>" +
         inner + "</svg>";
}

std::string legend(std::initializer_list<std::pair<const char*, const char*>> items) {
  std::string out = "<ul class=\"legend\">";
  for (const auto& [style, text] : items)
    out += "<li><span class=\"sw\" style=\"" + std::string(style) + "\"></span>" + text + "</li>";
  return out + "</ul>";
}

// payments: each charge on a timeline, as long as the caller waited for it.
std::string charges(const json& r) {
  const double timeout = r.value("timeout_s", 2.0);
  Plot p;
  p.y0 = 40;
  p.y1 = 110;
  for (const json& c : r["charges"]) p.xmax = std::max(p.xmax, c["sent_s"].get<double>() + timeout);
  p.xmax = std::ceil(p.xmax);
  std::string s = axes(p, "seconds since the first charge", "", false);
  for (const json& c : r["charges"]) {
    const std::string happened = c["happened"].get<std::string>();
    const double sent = c["sent_s"].get<double>();
    const bool waited = happened == "waited out the timeout";
    const bool refused = happened == "refused at once";
    const double x = p.x(sent);
    const std::string cls = waited ? "waited" : refused ? "refused" : happened == "answered" ? "answered" : "other";
    const std::string n = std::to_string(c["charge"].get<int>());
    const std::string tip = "charge " + n + " at " + num(sent, 1) + " s: " + happened +
                            (c["trial"].get<bool>() ? " (a trial)" : "") + "; breaker then " +
                            c["state_after"].get<std::string>() + "; the caller got: " + c["reply"].get<std::string>();
    s += "<g class=\"charge " + cls + "\" data-charge=\"" + n + "\" data-happened=\"" + html_escape(happened) +
         "\" data-sent-s=\"" + num(sent, 3) + "\"><title>" + html_escape(tip) + "</title>";
    if (refused)
      s += "<path class=\"cross\" d=\"M" + num(x - 5) + " 62l10 10m0 -10l-10 10\"/>";
    else
      s += "<rect x=\"" + num(x) + "\" y=\"60\" width=\"" + num(std::max(3.0, waited ? p.x(sent + timeout) - x : 3.0)) +
           "\" height=\"14\"/>";
    s += "<text x=\"" + num(x) + "\" y=\"54\" text-anchor=\"middle\">" + n + (c["trial"].get<bool>() ? "t" : "") +
         "</text>";
    const std::string state = c["state_after"].get<std::string>();
    // Staggered, so the states of charges a second apart do not run into each other.
    const int row = c["charge"].get<int>() % 2;
    if (state != "-")
      s += "<text class=\"small\" x=\"" + num(x) + "\" y=\"" + num(88 + 11 * row) + "\" text-anchor=\"middle\">" +
           html_escape(state) + "</text>";
    s += "</g>";
  }
  return svg(160, "charges over time", s);
}

// pool: busy workers over time, with the first timeout and the moment the pool was full.
std::string pool(const json& r) {
  Plot p;
  double peak = 0;
  for (const json& smp : r["samples"]) {
    p.xmax = std::max(p.xmax, smp["t_s"].get<double>());
    peak = std::max(peak, smp["in_use"].get<double>());
  }
  p.ymax = std::max(peak * 1.1, 10.0);
  std::string s = axes(p, "seconds", "workers busy");
  std::string line;
  for (const json& smp : r["samples"])
    line +=
        (line.empty() ? "M" : "L") + num(p.x(smp["t_s"].get<double>())) + " " + num(p.y(smp["in_use"].get<double>()));
  s += "<path class=\"series\" d=\"" + line + "\"/>";
  for (const json& smp : r["samples"]) {
    const double t = smp["t_s"].get<double>();
    const int busy = smp["in_use"].get<int>();
    s += "<circle class=\"sample\" data-t-s=\"" + num(t, 3) + "\" data-in-use=\"" + std::to_string(busy) + "\" cx=\"" +
         num(p.x(t)) + "\" cy=\"" + num(p.y(busy)) + "\" r=\"3\"><title>" + num(t, 2) + " s: " + std::to_string(busy) +
         " workers busy</title></circle>";
  }
  auto marker = [&](const char* key, const char* what) {
    if (!r.contains(key) || r[key].is_null()) return;
    const double t = r[key].get<double>();
    if (t > p.xmax) return;
    s += "<g class=\"marker\" data-" + std::string(key) + "=\"" + num(t, 3) + "\"><line x1=\"" + num(p.x(t)) +
         "\" y1=\"" + num(p.y0) + "\" x2=\"" + num(p.x(t)) + "\" y2=\"" + num(p.y1) + "\"/><text x=\"" +
         num(p.x(t) + 4) + "\" y=\"" + num(p.y0 + 10) + "\">" + what + " (" + num(t, 2) + " s)</text></g>";
  };
  marker("first_timeout_s", "first timeout");
  marker("exhausted_s", "pool full");
  return svg(240, "workers busy over time", s);
}

// toggle: per second, the server's health and the breaker's state, then answered and default
// calls stacked.
std::string traffic(const json& r) {
  Plot p;
  p.y0 = 70;
  p.y1 = 210;
  double most = 1;
  for (const json& s : r["per_second"]) {
    p.xmax = std::max(p.xmax, s["second"].get<double>() + 1);
    most = std::max(most, s["answered"].get<double>() + s["fallback"].get<double>());
  }
  p.ymax = most * 1.1;
  std::string s = axes(p, "second", "calls");
  s +=
      "<text class=\"rowlabel\" x=\"8\" y=\"24\">server</text><text class=\"rowlabel\" x=\"8\" y=\"50\">breaker</text>";
  for (const json& sec : r["per_second"]) {
    const double t = sec["second"].get<double>();
    const double x = p.x(t);
    const double w = p.x(t + 1) - x - 2;
    const int answered = sec["answered"].get<int>();
    const int fallback = sec["fallback"].get<int>();
    const std::string state = sec["state"].get<std::string>();
    const std::string server = sec.value("server", "");
    s += "<g class=\"second\" data-second=\"" + num(t, 0) + "\" data-answered=\"" + std::to_string(answered) +
         "\" data-fallback=\"" + std::to_string(fallback) + "\" data-state=\"" + html_escape(state) +
         "\" data-server=\"" + html_escape(server) + "\"><title>second " + num(t, 0) + ": server " +
         html_escape(server) + ", breaker " + html_escape(state) + "; " + std::to_string(answered) + " answered, " +
         std::to_string(fallback) + " got the default action</title>";
    s += "<rect class=\"health " + html_escape(server) + "\" x=\"" + num(x) + "\" y=\"12\" width=\"" + num(w) +
         "\" height=\"16\"/>";
    s += "<rect class=\"state " + html_escape(state) + "\" x=\"" + num(x) + "\" y=\"38\" width=\"" + num(w) +
         "\" height=\"16\"/>";
    if (w > 24) {
      s += "<text class=\"small\" x=\"" + num(x + 2) + "\" y=\"24\">" + (server == "healthy" ? "up" : "down") +
           "</text>";
      s += "<text class=\"small\" x=\"" + num(x + 2) + "\" y=\"50\">" +
           (state == "HALF_OPEN" ? "HALF" : html_escape(state)) + "</text>";
    }
    s += "<rect class=\"answered\" x=\"" + num(x) + "\" y=\"" + num(p.y(answered)) + "\" width=\"" + num(w) +
         "\" height=\"" + num(p.y1 - p.y(answered)) + "\"/>";
    s += "<rect class=\"fallback\" x=\"" + num(x) + "\" y=\"" + num(p.y(answered + fallback)) + "\" width=\"" + num(w) +
         "\" height=\"" + num(p.y(answered) - p.y(answered + fallback)) + "\"/></g>";
  }
  return svg(250, "calls per second against the toggling server", s);
}

// fleet: trials reaching payments in each second of the outage, one chart per jitter on one
// scale. Per second, not per 30 s bucket: without jitter the buckets are a flat 20 and hide that
// all twenty trials land in the same second; the seconds show the herd and how jitter spreads it.
std::string fleet(const json& r, const json& run) {
  Plot p;
  const json& counts = run["per_second"];
  p.xmax = static_cast<double>(counts.size());
  double most = 1;
  for (const json& other : r["runs"])  // the same scale for every jitter, so they compare
    for (const json& c : other["per_second"]) most = std::max(most, c.get<double>());
  p.ymax = most * 1.1;
  std::string s = axes(p, "seconds into the outage", "trials in that second");
  const double w = std::max(1.0, p.x(1) - p.x(0));
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int n = counts[i].get<int>();
    if (n == 0) continue;  // most seconds have none; drawing them would be 600 empty elements
    const auto at = static_cast<double>(i);
    s += "<rect class=\"trials\" data-second=\"" + std::to_string(i) + "\" data-trials=\"" + std::to_string(n) +
         "\" x=\"" + num(p.x(at)) + "\" y=\"" + num(p.y(n)) + "\" width=\"" + num(w) + "\" height=\"" +
         num(p.y1 - p.y(n)) + "\"><title>second " + std::to_string(i) + ": " + std::to_string(n) +
         (n == 1 ? " trial" : " trials") + "</title></rect>";
  }
  return svg(240, "trials reaching payments per second", s);
}

// fleet --shared: trials in each cool-down, fleet-wide, for the processes that share one breaker
// and for those with one each, on one scale.
std::string per_cooldown(const json& figures, double most, const std::string& title) {
  Plot p;
  const json& counts = figures["per_cooldown"];
  p.xmax = std::max(1.0, static_cast<double>(counts.size()));
  p.ymax = most * 1.1;
  std::string s = axes(p, "cool-downs into the outage", "trials in that cool-down");
  const double w = std::max(1.0, p.x(1) - p.x(0) - 2);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const int n = counts[i].get<int>();
    const auto at = static_cast<double>(i);
    s += "<rect class=\"trials\" data-cooldown=\"" + std::to_string(i) + "\" data-trials=\"" + std::to_string(n) +
         "\" x=\"" + num(p.x(at) + 1) + "\" y=\"" + num(p.y(n)) + "\" width=\"" + num(w) + "\" height=\"" +
         num(p.y1 - p.y(n)) + "\"><title>cool-down " + std::to_string(i + 1) + ": " + std::to_string(n) +
         (n == 1 ? " trial" : " trials") + "</title></rect>";
  }
  return svg(240, title, s);
}

std::string fleet_processes(const json& run) {
  double most = 1;
  for (const char* which : {"shared", "independent"})
    for (const json& c : run[which]["per_cooldown"]) most = std::max(most, c.get<double>());
  const std::string n = std::to_string(run["processes"].get<int>());
  return "<h3>" + n + " real processes sharing one breaker through Redis: at most " +
         std::to_string(run["shared"]["max_per_cooldown"].get<int>()) + " trials in a cool-down</h3>" +
         per_cooldown(run["shared"], most, "trials per cool-down, shared breaker") + "<h3>" + n +
         " real processes with a breaker each (jitter 0.5): at most " +
         std::to_string(run["independent"]["max_per_cooldown"].get<int>()) + " in a cool-down</h3>" +
         per_cooldown(run["independent"], most, "trials per cool-down, a breaker each");
}

std::string scene_css() {
  return R"(.axis{stroke:#333}.tick{stroke:#333}.grid{stroke:#e3e3e3}.small{font-size:10px}.rowlabel{font-size:11px;fill:#333}
.charge.answered rect{fill:#2e7d32}.charge.waited rect{fill:url(#hatch);stroke:#b71c1c}.charge .cross{stroke:#b71c1c;stroke-width:2}
.charge.other rect{fill:#000}.series{fill:none;stroke:#1565c0;stroke-width:2}.sample{fill:#1565c0}
.marker line{stroke:#b71c1c;stroke-dasharray:4 3}.marker text{fill:#b71c1c}
.health.healthy{fill:#a5d6a7}.health.failing{fill:url(#hatch)}.state.CLOSED{fill:#d9f0d9}.state.OPEN{fill:url(#hatch)}
.state.HALF_OPEN{fill:#fdebbd}.answered{fill:#2e7d32}.fallback{fill:url(#dots)}.trials{fill:#6a1b9a})";
}

}  // namespace

std::string scene_page(const json& scene) {
  const std::string name = scene.value("scene", "scene");
  std::string body = "<h1>cb-lab scene " + html_escape(name) + "</h1><p class=\"meta\">" +
                     (scene.value("live", false) ? "Live against the flaky server, time scaled."
                                                 : "Simulated on the engine, exactly.") +
                     " Hover a mark for its numbers.</p>";
  int n = 0;
  for (const json& step : scene["steps"]) {
    body += "<section class=\"scene-step\" data-step=\"" + std::to_string(++n) + "\"><h2>" +
            html_escape(step["title"].get<std::string>()) + "</h2>";
    for (const json& r : step["results"]) {
      if (r.contains("charges")) {
        body += charges(r) +
                legend({{"background:#2e7d32", "answered"},
                        {"background:repeating-linear-gradient(45deg,#b71c1c 0 2px,#f6cfcb 2px 6px)",
                         "waited out the timeout"},
                        {"border-color:#b71c1c;background:#fff", "× refused at once"}}) +
                "<p>Numbers are the charges (t: a trial); under each, the breaker's state after it. " +
                (r["breaker"].is_null() ? std::string("No breaker: every charge in the outage waits.")
                                        : "Refused: " + std::to_string(r["refused"].size()) +
                                              ", waited: " + std::to_string(r["waited"].size()) + ".") +
                "</p>";
      } else if (r.contains("samples")) {
        body += pool(r) + "<p>" + std::to_string(r["requests"].get<int>()) + " requests; peak " +
                std::to_string(r["peak"].get<int>()) + " workers busy; " + std::to_string(r["turned_away"].get<int>()) +
                " turned away for want of a worker; " + std::to_string(r["refused_by_breaker"].get<int>()) +
                " refused by the breaker.</p>";
      } else if (r.contains("per_second")) {
        body += traffic(r) +
                legend({{"background:#a5d6a7", "server healthy (up)"},
                        {"background:#2e7d32", "answered"},
                        {"background:repeating-linear-gradient(45deg,#b71c1c 0 2px,#f6cfcb 2px 6px)",
                         "server failing (down) / OPEN"},
                        {"background:#d9f0d9", "CLOSED"},
                        {"background:#fdebbd", "HALF_OPEN"},
                        {"background:radial-gradient(#555 1px,#e0e0e0 1.5px) 0 0/6px 6px", "default action (dotted)"}});
        body +=
            "<table class=\"retry\"><tr><th></th><th>calls to the server</th><th>answered</th><th>most calls at once from one request</th></tr>"
            "<tr><th>this client (retries outside the breaker)</th><td>" +
            std::to_string(r["simulated_plain_backend_calls"].get<long long>()) + "</td><td>" +
            std::to_string(r["simulated_plain_answered"].get<long long>()) + "</td><td>" +
            std::to_string(r["simulated_plain_largest_burst"].get<int>()) +
            "</td></tr><tr><th>with the recursive retry inside</th><td>" +
            std::to_string(r["simulated_recursive_backend_calls"].get<long long>()) + "</td><td>" +
            std::to_string(r["simulated_recursive_answered"].get<long long>()) + "</td><td>" +
            std::to_string(r["simulated_recursive_largest_burst"].get<int>()) + "</td></tr></table>";
      } else if (r.contains("runs")) {
        for (const json& run : r["runs"])
          body += "<h3>jitter " + num(run["jitter"].get<double>(), 2) + ": " +
                  std::to_string(run["trials"].get<int>()) + " trials, at most " +
                  std::to_string(run["max_in_one_second"].get<int>()) + " in one second</h3>" + fleet(r, run);
        if (r.contains("processes_run")) body += fleet_processes(r["processes_run"]);
      }
    }
    body += "</section>";
  }
  return cb::html_page("cb-lab scene " + name, body, scene_css());
}

}  // namespace cb::cli

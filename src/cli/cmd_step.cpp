// cb-lab step N: one step, continuing from where the earlier steps left the breakers.
#include "cmd_step.h"

#include <signal.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "cb/atomic_file.h"
#include "cb/flaky/options.h"
#include "cb/lab/runner.h"
#include "cb/lab/server_control.h"
#include "cb/lab/session.h"
#include "cmd_run.h"
#include "lab_console.h"
#include "cb/flaky/endpoints.h"

namespace cb::cli {

CLI::App* setup_step(CLI::App& app, StepOptions& options) {
  auto* cmd = app.add_subcommand("step", "Only step N, continuing from the state the earlier steps left");
  cmd->add_option("N", options.step, "The step, 1-" + std::to_string(grade::kGradedSteps))
      ->required()
      ->check(CLI::Range(1, 1000));
  add_lab_flags(*cmd, options.lab);
  cmd->footer(
      "The breakers' state after each step is kept in DIR/.cb-lab/session.json (times as wall-clock\n"
      "times), so a step can run in a new process, or be run again. Step 1 starts a flaky server in\n"
      "the background (on " +
      flaky::default_address() +
      " when free, else a free port), and it keeps running for\n"
      "the next steps, which use it; a server someone else started is used only when named.");
  return cmd;
}

ExitCode step_command(const StepOptions& o) {
  auto fail = [&](const std::string& m, ExitCode c = ExitCode::Usage) {
    std::cerr << "cb-lab step " << o.step << ": " << m << '\n';
    return c;
  };
  // Locked before the session is read: another step or run in DIR would write it meanwhile.
  if (auto made = make_directories(o.lab.dir); !made) return fail("the output directory: " + made.error().message);
  auto lock = DirLock::take(o.lab.dir, "step " + std::to_string(o.step));
  if (!lock) return fail(lock.error().message);
  auto session = lab::load_session(o.lab.dir);
  if (!session) return fail(session.error().message);
  // The scenario a session began with stays its scenario, unless one is named.
  const std::string scenario_path = !o.lab.scenario.empty()      ? o.lab.scenario
                                    : !session->scenario.empty() ? session->scenario
                                                                 : default_scenario_path();
  auto scenario = lab::load_scenario(scenario_path);
  if (!scenario) return fail(scenario.error().message);
  // The numbers step 1 ran on are the session's: a later step goes on with them. Step 1 in a
  // kit's folder runs on the kit's numbers, as cb-grade grades there.
  const std::string settings_path = !o.lab.settings.empty() ? std::filesystem::absolute(o.lab.settings).string()
                                    : o.step == 1 && o.lab.scenario.empty() ? kit_settings_here()
                                                                            : session->settings;
  scenario = scenario_on(std::move(scenario).value(), scenario_path, settings_path);
  if (!scenario) return fail(scenario.error().message);
  const int n = o.step;
  if (n > static_cast<int>(scenario->steps.size()))
    return fail("the scenario has " + std::to_string(scenario->steps.size()) + " steps");
  for (int k = 1; k < n; ++k) {
    if (session->after.count(k) == 0)
      return fail("step " + std::to_string(n) + " continues from step " + std::to_string(k) +
                  ", which has not run in " + o.lab.dir + ": run `cb-lab step " + std::to_string(k) + "` first");
  }
  auto named = named_server(o.lab);
  if (!named) return fail(named.error().message);
  auto preferred = lab::parse_url(scenario->server);
  if (!preferred) return fail(scenario_path + ": server: " + preferred.error().message);
  auto timeout = call_timeout(o.lab, *scenario);
  if (!timeout) return fail(timeout.error().message);
  if (auto d = prepare_dir(o.lab.dir); !d) return fail(d.error().message);

  LabConsole console(false);
  lab::ServerWish wish;
  wish.named = *named;
  wish.preferred = *preferred;
  wish.background = true;  // the server and its record must outlive this step for the next ones
  wish.log_path = o.lab.dir + "/.cb-lab/server.log";
  const auto session_server =
      session->server.empty() ? Result<lab::ServerUrl>(Error{""}) : lab::parse_url(session->server);
  if (n > 1) {
    // The record of steps 1..n-1 is on the server they ran against; another server (or a new
    // one there) would grade this step on a record without them.
    if (!wish.named && session_server) wish.named = *session_server;
    if (wish.named && lab::probe(*wish.named).kind == lab::Probe::Kind::NothingListens)
      return fail("the server the earlier steps used, " + wish.named->text() +
                  ", is gone, and with it their record: run `cb-lab step 1` again (or `cb-lab run`)");
  } else if (!wish.named && session->server_pid && session_server && ::kill(*session->server_pid, 0) == 0 &&
             lab::probe(*session_server).kind == lab::Probe::Kind::Flaky) {
    // Step 1 again: the server cb-lab started for this directory is still ours to reset.
    wish.named = *session_server;
  } else if (!wish.named) {
    session->server_pid.reset();
  }
  (void)::mkdir((o.lab.dir + "/.cb-lab").c_str(), 0755);
  auto server = lab::use_server(wish);
  if (!server) return fail(server.error().message);
  const lab::ServerUrl& url = server->url;
  const lab::Probe found = server->probe;
  if (server->background_pid) {
    session->server_pid = *server->background_pid;
    console.note("cb-lab: started a flaky server at " + url.text() + " in the background (pid " +
                 std::to_string(*server->background_pid) +
                 "); it keeps running for the next steps. Stop it with: kill " +
                 std::to_string(*server->background_pid));
  }
  if (found.kind != lab::Probe::Kind::Flaky)
    console.note("cb-lab: the server at " + url.text() + " is not answering as a flaky server (" + found.detail + ")");

  const std::atomic<bool>& interrupted = install_interrupt_flag();
  lab::Runner runner(*scenario, o.lab.dir, url, *timeout, console, interrupted);
  // A step done again after later ones: the server's record and the files hold those later
  // steps, so judged as they stand it would be told "state.json is from a later step". Steps 1
  // to N-1 run again first (step 1 resets the record): step N is judged on one run, as in order.
  const int last_run = session->after.empty() ? 0 : session->after.rbegin()->first;
  const bool from_start = n > 1 && last_run >= n;
  if (from_start) {
    console.note("cb-lab: step " + std::to_string(n) + " again, after step " + std::to_string(last_run) +
                 ": the record and the files hold the later steps, so steps 1-" + std::to_string(n - 1) +
                 " run again first, from a reset record");
    session->after.clear();
    for (int k = 1; k < n; ++k) {
      console.step(k, scenario->steps[static_cast<std::size_t>(k - 1)].title);
      if (auto r = runner.run_step(k); !r) {
        if (interrupted.load()) return fail("interrupted; the files written so far are whole", ExitCode::Interrupted);
        return fail("step " + std::to_string(k) + ": " + r.error().message);
      }
      session->after[k] = runner.capture();
    }
  } else if (n > 1) {
    if (auto r = runner.restore(session->after.at(n - 1), n - 1); !r)
      return fail(lab::step_path(o.lab.dir, n - 1) + ": " + r.error().message);
  } else {
    session->after.clear();
  }
  session->scenario = scenario_path;
  session->settings = settings_path;
  session->server = url.text();
  if (!settings_path.empty()) console.note("cb-lab: on " + scenario->lab_spec->numbers_said());
  console.step(n, scenario->steps[static_cast<std::size_t>(n - 1)].title);
  if (auto r = runner.run_step(n); !r) {
    if (interrupted.load()) return fail("interrupted; the files written so far are whole", ExitCode::Interrupted);
    return fail(r.error().message);
  }
  // Later steps were built on the state this step replaces: they must run again.
  for (auto it = session->after.begin(); it != session->after.end();)
    it = it->first > n ? session->after.erase(it) : ++it;
  session->after[n] = runner.capture();
  if (auto saved = lab::save_session(o.lab.dir, *session, from_start ? std::nullopt : std::optional<int>(n)); !saved)
    return fail(saved.error().message);
  const grade::Report report = grade_now(o.lab.dir, url, found, {n}, std::nullopt, scenario->lab_spec);
  const grade::StepReport verdict = step_verdict(report, n);
  console.verdict(verdict);
  if (verdict.status == grade::Status::Error) return ExitCode::NotGraded;
  return verdict.status == grade::Status::Fail ? ExitCode::Failed : ExitCode::Ok;
}

}  // namespace cb::cli

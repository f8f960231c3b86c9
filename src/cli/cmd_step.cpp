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

namespace {

// The scenario step N runs on, and where it and its numbers came from.
struct StepScenario {
  std::string path;
  std::string settings;  // the lab-settings.json of its numbers ("" for the scenario's own)
  lab::Scenario scenario;
};

Result<StepScenario> scenario_for(const StepOptions& o, const lab::Session& session) {
  StepScenario s;
  // The scenario a session began with stays its scenario, unless one is named.
  s.path = !o.lab.scenario.empty()     ? o.lab.scenario
           : !session.scenario.empty() ? session.scenario
                                       : default_scenario_path();
  auto scenario = lab::load_scenario(s.path);
  if (!scenario) return scenario.error();
  // The numbers step 1 ran on are the session's: a later step goes on with them. Step 1 in a
  // kit's folder runs on the kit's numbers, as cb-grade grades there.
  s.settings = !o.lab.settings.empty()                 ? std::filesystem::absolute(o.lab.settings).string()
               : o.step == 1 && o.lab.scenario.empty() ? kit_settings_here()
                                                       : session.settings;
  scenario = scenario_on(std::move(scenario).value(), s.path, s.settings);
  if (!scenario) return scenario.error();
  if (o.step > static_cast<int>(scenario->steps.size()))
    return Error{"the scenario has " + std::to_string(scenario->steps.size()) + " steps"};
  for (int k = 1; k < o.step; ++k) {
    if (session.after.count(k) == 0)
      return Error{"step " + std::to_string(o.step) + " continues from step " + std::to_string(k) +
                   ", which has not run in " + o.lab.dir + ": run `cb-lab step " + std::to_string(k) + "` first"};
  }
  s.scenario = std::move(scenario).value();
  return s;
}

// Which server step N runs against: the one the earlier steps' record is on, or for step 1 the
// one cb-lab started for this directory (still ours to reset), or a new one.
Result<lab::ServerWish> server_for(const StepOptions& o, lab::Session& session, const StepScenario& s) {
  auto named = named_server(o.lab);
  if (!named) return named.error();
  auto preferred = lab::parse_url(s.scenario.server);
  if (!preferred) return Error{s.path + ": server: " + preferred.error().message};
  lab::ServerWish wish;
  wish.named = *named;
  wish.preferred = *preferred;
  wish.background = true;  // the server and its record must outlive this step for the next ones
  wish.log_path = o.lab.dir + "/.cb-lab/server.log";
  const auto session_server =
      session.server.empty() ? Result<lab::ServerUrl>(Error{""}) : lab::parse_url(session.server);
  if (o.step > 1) {
    // The record of steps 1..n-1 is on the server they ran against; another server (or a new
    // one there) would grade this step on a record without them.
    if (!wish.named && session_server) wish.named = *session_server;
    if (wish.named && lab::probe(*wish.named).kind == lab::Probe::Kind::NothingListens)
      return Error{"the server the earlier steps used, " + wish.named->text() +
                   ", is gone, and with it their record: run `cb-lab step 1` again (or `cb-lab run`)"};
  } else if (!wish.named && session.server_pid && session_server && ::kill(*session.server_pid, 0) == 0 &&
             lab::probe(*session_server).kind == lab::Probe::Kind::Flaky) {
    wish.named = *session_server;
  } else if (!wish.named) {
    session.server_pid.reset();
  }
  return wish;
}

// The breakers as the earlier steps left them. A step done again after later ones: the server's
// record and the files hold those later steps, so judged as they stand it would be told
// "state.json is from a later step". Steps 1 to N-1 run again first (step 1 resets the record):
// step N is judged on one run, as in order. True when they ran again.
Result<bool> bring_up_to(const StepOptions& o, lab::Session& session, const StepScenario& s, lab::Runner& runner,
                         LabConsole& console) {
  const int n = o.step;
  const int last_run = session.after.empty() ? 0 : session.after.rbegin()->first;
  if (n > 1 && last_run >= n) {
    console.note("cb-lab: step " + std::to_string(n) + " again, after step " + std::to_string(last_run) +
                 ": the record and the files hold the later steps, so steps 1-" + std::to_string(n - 1) +
                 " run again first, from a reset record");
    session.after.clear();
    for (int k = 1; k < n; ++k) {
      console.step(k, s.scenario.steps[static_cast<std::size_t>(k - 1)].title);
      if (auto r = runner.run_step(k); !r) return Error{"step " + std::to_string(k) + ": " + r.error().message};
      session.after[k] = runner.capture();
    }
    return true;
  }
  if (n > 1) {
    if (auto r = runner.restore(session.after.at(n - 1), n - 1); !r)
      return Error{lab::step_path(o.lab.dir, n - 1) + ": " + r.error().message};
  } else {
    session.after.clear();
  }
  return false;
}

}  // namespace

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
  auto s = scenario_for(o, *session);
  if (!s) return fail(s.error().message);
  const lab::Scenario& scenario = s->scenario;
  auto timeout = call_timeout(o.lab, scenario);
  if (!timeout) return fail(timeout.error().message);
  if (auto d = prepare_dir(o.lab.dir); !d) return fail(d.error().message);
  auto wish = server_for(o, *session, *s);
  if (!wish) return fail(wish.error().message);
  LabConsole console(false);
  (void)::mkdir((o.lab.dir + "/.cb-lab").c_str(), 0755);
  auto server = lab::use_server(*wish);
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
  lab::Runner runner(scenario, o.lab.dir, url, *timeout, console, interrupted);
  const int n = o.step;
  auto from_start = bring_up_to(o, *session, *s, runner, console);
  if (!from_start) {
    if (interrupted.load()) return fail("interrupted; the files written so far are whole", ExitCode::Interrupted);
    return fail(from_start.error().message);
  }
  session->scenario = s->path;
  session->settings = s->settings;
  session->server = url.text();
  if (!s->settings.empty()) console.note("cb-lab: on " + scenario.lab_spec->numbers_said());
  console.step(n, scenario.steps[static_cast<std::size_t>(n - 1)].title);
  if (auto r = runner.run_step(n); !r) {
    if (interrupted.load()) return fail("interrupted; the files written so far are whole", ExitCode::Interrupted);
    return fail(r.error().message);
  }
  // Later steps were built on the state this step replaces: they must run again.
  for (auto it = session->after.begin(); it != session->after.end();)
    it = it->first > n ? session->after.erase(it) : ++it;
  session->after[n] = runner.capture();
  if (auto saved = lab::save_session(o.lab.dir, *session, *from_start ? std::nullopt : std::optional<int>(n)); !saved)
    return fail(saved.error().message);
  const grade::Report report = grade_now(o.lab.dir, url, found, {n}, std::nullopt, scenario.lab_spec);
  const grade::StepReport verdict = step_verdict(report, n);
  console.verdict(verdict);
  if (verdict.status == grade::Status::Error) return ExitCode::NotGraded;
  return verdict.status == grade::Status::Fail ? ExitCode::Failed : ExitCode::Ok;
}

}  // namespace cb::cli

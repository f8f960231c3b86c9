// cb-lab run: the whole lab in one command, graded as it goes.
#include "cmd_run.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cb/atomic_file.h"
#include "cb/flaky/options.h"
#include "cb/grade/format.h"
#include "cb/grade/lab_spec.h"
#include "cb/lab/runner.h"
#include "cb/lab/server_control.h"
#include "cb/lab/session.h"
#include "lab_console.h"
#include "cb/flaky/endpoints.h"

namespace cb::cli {

void add_lab_flags(CLI::App& cmd, LabArgs& args) {
  cmd.add_option("--dir", args.dir, "Where the lab's files go")->capture_default_str();
  cmd.add_option("--server", args.server,
                 "Use this flaky server, and reset its record (default: CB_SERVER, else a server of cb-lab's own)");
  cmd.add_option("--scenario", args.scenario, "The steps to run (default: scenarios/lab.json)");
  cmd.add_option("--call-timeout", args.call_timeout, "Per-call timeout, e.g. 2s (default: the scenario's)");
  cmd.add_option("--settings", args.settings,
                 "Run (and grade) the lab on the numbers of this lab-settings.json: a student's own, from their kit");
}

CLI::App* setup_run(CLI::App& app, RunOptions& options) {
  auto* cmd = app.add_subcommand("run", "The whole lab, steps 1-" + std::to_string(grade::kGradedSteps) +
                                            ", against the flaky server, graded as it goes");
  add_lab_flags(*cmd, options.lab);
  cmd->add_flag("--json", options.json, "Print a machine-readable summary instead");
  cmd->add_option("--student", options.student,
                  "With --course-key: run the lab on this student's own numbers, and grade it on them");
  cmd->add_option("--course-key", options.course_key, "The course's secret, for --student");
  cmd->add_option("--html", options.html,
                  "Also write the run as one self-contained page: the breaker's states, every request, every refusal, "
                  "on one time axis, above the checklist");
  cmd->footer("Starts a flaky server of its own for the run (on " + flaky::default_address() +
              " when free, else on a free\n"
              "port) and stops it afterwards; a server someone else started is used only when named.\n"
              "Exit 0 only if every step passed; 1 if one failed; 2 if the lab could not run or was not\n"
              "graded; 130 if interrupted (the files written so far are whole).");
  return cmd;
}

ExitCode run_command(const RunOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  auto fail = [](const std::string& m, ExitCode c = ExitCode::Usage) {
    std::cerr << "cb-lab run: " << m << '\n';
    return c;
  };
  const std::string scenario_path = o.lab.scenario.empty() ? default_scenario_path() : o.lab.scenario;
  auto scenario = lab::load_scenario(scenario_path);
  if (!scenario) return fail(scenario.error().message);
  if (!o.lab.settings.empty() && (!o.student.empty() || !o.course_key.empty()))
    return fail("--settings: the course key decides a student's numbers; give one or the other");
  // In a kit's folder, with no numbers named, the kit's own, as cb-grade grades there.
  const std::string settings = !o.lab.settings.empty() ? o.lab.settings
                               : o.student.empty() && o.course_key.empty() && o.lab.scenario.empty()
                                   ? kit_settings_here()
                                   : std::string();
  if (!o.student.empty() || !o.course_key.empty() || !settings.empty()) {
    if (!scenario->lab_spec)
      return fail(scenario_path + " is not the lab (it has no checks): there are no numbers to vary");
    auto variant = settings.empty() ? student_spec(o.student, o.course_key, *scenario->lab_spec)
                                    : settings_spec(settings, *scenario->lab_spec);
    if (!variant) return fail(variant.error().message);
    scenario = scenario_with(*variant, scenario_path);
    if (!scenario) return fail(scenario.error().message);
  }
  auto named = named_server(o.lab);
  if (!named) return fail(named.error().message);
  auto preferred = lab::parse_url(scenario->server);
  if (!preferred) return fail(scenario_path + ": server: " + preferred.error().message);
  auto timeout = call_timeout(o.lab, *scenario);
  if (!timeout) return fail(timeout.error().message);
  if (auto d = prepare_dir(o.lab.dir); !d) return fail(d.error().message);
  auto lock = DirLock::take(o.lab.dir, "run");
  if (!lock) return fail(lock.error().message);
  if (auto removed = remove_outputs(o.lab.dir, *scenario); !removed) return fail(removed.error().message);

  LabConsole console(o.json);
  // Step 1's question first: which flaky server, and is it one? (Ours, unless one is named.)
  lab::ServerWish wish;
  wish.named = *named;
  wish.preferred = *preferred;
  auto server = lab::use_server(wish);
  if (!server) return fail(server.error().message);
  const lab::ServerUrl& url = server->url;
  const lab::Probe found = server->probe;
  if (found.kind != lab::Probe::Kind::Flaky) {
    console.note("cb-lab: the server at " + url.text() + " is not answering as a flaky server (" + found.detail +
                 "); the lab goes on, and the grade has no record to check");
  }
  const std::string where = url.text() + " (" + server->how + ")";
  const std::atomic<bool>& interrupted = install_interrupt_flag();
  const std::string numbers = scenario->lab_spec ? "\n  on " + scenario->lab_spec->numbers_said() : "";
  console.header("cb-lab: " + scenario->title + "\n  " + std::to_string(scenario->steps.size()) + " steps, files in " +
                 o.lab.dir + "\n  server " + where + numbers);

  lab::Runner runner(*scenario, o.lab.dir, url, *timeout, console, interrupted);
  lab::Session session;
  session.scenario = scenario_path;
  session.server = url.text();
  nlohmann::json steps_json = nlohmann::json::array();
  // What the grader is handed after each step, rather than reading it back: the server's record
  // in this process when it is ours, the files as written, and where each step ended.
  LabFacts facts;
  facts.own_server = server->own.get();
  facts.files = &runner.written();
  for (int n = 1; n <= static_cast<int>(scenario->steps.size()); ++n) {
    console.step(n, scenario->steps[static_cast<std::size_t>(n - 1)].title);
    if (auto r = runner.run_step(n); !r) {
      if (interrupted.load()) {
        (void)lab::save_session(o.lab.dir, session);
        return fail("interrupted during step " + std::to_string(n) + "; the files written so far are whole",
                    ExitCode::Interrupted);
      }
      return fail("step " + std::to_string(n) + ": " + r.error().message);
    }
    session.after[n] = runner.capture();
    if (auto saved = lab::save_session(o.lab.dir, session, n); !saved) return fail(saved.error().message);
    // The grader's own check of this step, on the server's record as it is now.
    if (facts.own_server != nullptr) facts.step_last_seq.push_back(facts.own_server->record().read(0, 0).next_seq - 1);
    // A step past the lab's is not graded: asking costs a read of the whole record each time,
    // which made a scenario of N steps cost N squared.
    const int known = scenario->lab_spec ? scenario->lab_spec->steps() : grade::lab_spec().steps();
    const grade::StepReport verdict =
        n > known ? step_verdict(grade::Report{}, n)
                  : step_verdict(grade_now(o.lab.dir, url, found, {n}, runner.epoch(), scenario->lab_spec, &facts), n);
    console.verdict(verdict);
    steps_json.push_back({{"step", n},
                          {"title", scenario->steps[static_cast<std::size_t>(n - 1)].title},
                          {"status", grade::to_string(verdict.status)},
                          {"did", runner.lines()}});
  }
  grade::Report final_report = grade_now(o.lab.dir, url, found, {}, runner.epoch(), scenario->lab_spec, &facts);
  if (!o.html.empty()) {
    final_report.timeline.refused_us = runner.refused_at();
    if (auto w = write_file_atomically(o.html, grade::render(final_report, grade::Format::Html, false)); !w)
      return fail(w.error().message);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  console.checklist(final_report, seconds);
  if (o.json) {
    nlohmann::json out{{"passed", final_report.passed},
                       {"score", final_report.score},
                       {"max_score", final_report.max_score},
                       {"seconds", seconds},
                       {"dir", o.lab.dir},
                       {"server", url.text()},
                       {"steps", steps_json},
                       {"report", grade::to_json(final_report)}};
    std::cout << out.dump(2) << '\n';
  }
  if (final_report.status == grade::Status::Error) return ExitCode::NotGraded;
  return final_report.passed ? ExitCode::Ok : ExitCode::Failed;
}

}  // namespace cb::cli

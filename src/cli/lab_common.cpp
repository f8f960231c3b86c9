#include "lab_common.h"

#include <signal.h>
#include <unistd.h>


#include "cb/atomic_file.h"
#include "cb/decimal_time.h"

namespace cb::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) {
  if (g_interrupted.exchange(true)) ::_exit(130);  // a second Ctrl-C: the person means it
}

}  // namespace

std::string default_scenario_path() { return lab::scenarios_dir() + "/lab.json"; }

Result<lab::Scenario> load_lab_scenario(const std::string& path) {
  return lab::load_scenario(path.empty() ? default_scenario_path() : path);
}

Result<void> prepare_dir(const std::string& dir) {
  if (auto made = make_directories(dir); !made) return Error{"the output directory: " + made.error().message};
  // Proven by writing, not by access(2): root passes access() on a read-only mount.
  const std::string probe = dir + "/.cb-lab-write-test";
  if (auto w = write_file_atomically(probe, "ok\n"); !w) return Error{dir + ": cannot write the lab's files here: " + w.error().message};
  ::unlink(probe.c_str());
  return {};
}

Result<std::chrono::milliseconds> call_timeout(const LabArgs& a, const lab::Scenario& s) {
  if (a.call_timeout.empty()) return s.call_timeout;
  auto d = parse_duration(a.call_timeout);
  if (!d || d->count() < 1000) return Error{"--call-timeout: '" + a.call_timeout + "' is not a duration of at least 1ms"};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

grade::Report grade_now(const std::string& dir, const lab::ServerUrl& server, bool server_is_flaky, std::set<int> steps) {
  std::optional<grade::Record> record;
  std::string why;
  if (server_is_flaky) {
    auto fetched = grade::fetch_record(server.text(), std::chrono::seconds{5});
    if (fetched) {
      record = std::move(fetched).value();
    } else {
      why = fetched.error().message;
    }
  } else {
    why = "the server at " + server.text() + " is not a flaky server, so there is no record to check";
  }
  grade::GradeOptions o;
  o.steps = std::move(steps);
  auto d = grade::SubmissionDir::open(dir);
  if (!d) {
    grade::Report r;
    r.evidence_note = d.error().message;
    return r;
  }
  grade::Report report = grade::grade(*d, record, why, o);
  if (record) report.server = server.text();
  return report;
}

grade::StepReport step_verdict(const grade::Report& report, int n, bool server_is_flaky, const std::string& probe_detail) {
  grade::StepReport verdict = report.steps.front();
  if (n == 1 && !server_is_flaky) {
    verdict.status = grade::Status::Fail;
    verdict.checks.push_back({"the flaky server answers", grade::Status::Fail, probe_detail, nullptr, nullptr, true, false});
  }
  return verdict;
}

const std::atomic<bool>& install_interrupt_flag() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  return g_interrupted;
}

}  // namespace cb::cli

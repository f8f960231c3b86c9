#include "lab_common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <cstdlib>

#include "cb/atomic_file.h"
#include "cb/decimal_time.h"
#include "cb/grade/judge.h"
#include "cb/grade/variant.h"
#include "cb/lab/session.h"

namespace cb::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) {
  if (g_interrupted.exchange(true)) ::_exit(130);  // a second Ctrl-C: the person means it
}

}  // namespace

std::string default_scenario_path() { return lab::scenarios_dir() + "/lab.json"; }

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<DirLock> DirLock::take(const std::string& dir, const std::string& command) {
  const std::string hidden = dir + "/.cb-lab";
  if (::mkdir(hidden.c_str(), 0755) != 0 && errno != EEXIST)
    return Error{hidden + ": cannot create: " + std::strerror(errno)};
  const std::string path = hidden + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Error{path + ": cannot open: " + std::strerror(errno)};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char held[128] = {};
    const ssize_t n = ::pread(fd, held, sizeof held - 1, 0);
    ::close(fd);
    if (e != EWOULDBLOCK) return Error{path + ": cannot lock: " + std::strerror(e)};
    std::string who = n > 0 ? std::string(held, static_cast<std::size_t>(n)) : "another cb-lab";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    return Error{dir + " is in use by " + who + "; wait for it to finish, or give another --dir"};
  }
  // Who holds it, for the message of the next one that tries.
  const std::string me = "cb-lab " + command + " (pid " + std::to_string(::getpid()) + ")\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    // The lock holds without the words; only the next one's message is poorer.
  }
  return DirLock(fd);
}

Result<void> remove_outputs(const std::string& dir, const lab::Scenario& scenario) {
  std::set<std::string> paths{lab::session_path(dir)};
  for (const lab::Step& step : scenario.steps)
    for (const lab::Action& a : step.actions)
      if (!a.file.empty()) paths.insert(dir + "/" + a.file);
  for (int n = 1; n <= static_cast<int>(scenario.steps.size()); ++n) paths.insert(lab::step_path(dir, n));
  for (const std::string& path : paths) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      return Error{path + ": cannot remove the last run's file: " + std::strerror(errno)};
  }
  return {};
}

Result<void> prepare_dir(const std::string& dir) {
  if (auto made = make_directories(dir); !made) return Error{"the output directory: " + made.error().message};
  // Proven by writing, not by access(2): root passes access() on a read-only mount.
  const std::string probe = dir + "/.cb-lab-write-test";
  if (auto w = write_file_atomically(probe, "ok\n"); !w)
    return Error{dir + ": cannot write the lab's files here: " + w.error().message};
  ::unlink(probe.c_str());
  return {};
}

Result<std::chrono::milliseconds> call_timeout(const LabArgs& a, const lab::Scenario& s) {
  if (a.call_timeout.empty()) return s.call_timeout;
  auto d = parse_duration(a.call_timeout);
  if (!d || d->count() < 1000 || *d > std::chrono::hours(24))
    return Error{"--call-timeout: '" + a.call_timeout + "' is not a duration from 1ms to 24h"};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

Result<std::optional<lab::ServerUrl>> named_server(const LabArgs& a) {
  std::string text = a.server;
  std::string from = "--server";
  if (text.empty()) {
    const char* env = std::getenv("CB_SERVER");
    if (env == nullptr || *env == '\0') return std::optional<lab::ServerUrl>{};
    text = env;
    from = "CB_SERVER";
  }
  auto url = lab::parse_url(text);
  if (!url) return Error{from + ": " + url.error().message};
  return std::optional<lab::ServerUrl>{*url};
}

Result<grade::Record> record_now(const lab::ServerUrl& server, flaky::FlakyServer* own) {
  if (own != nullptr) return grade::record_of(own->record().read(0, SIZE_MAX));
  return grade::fetch_record(server.text(), std::chrono::seconds{5});
}

grade::Report grade_now(const std::string& dir, const lab::ServerUrl& server, const lab::Probe& probe,
                        std::set<int> steps, std::optional<std::uint64_t> epoch,
                        std::shared_ptr<const grade::LabSpec> spec, const LabFacts* facts) {
  grade::GradeOptions o;
  o.spec = std::move(spec);
  o.steps = std::move(steps);
  grade::Evidence e;
  if (facts != nullptr) e.step_last_seq = facts->step_last_seq;
  e.expected_epoch = epoch;
  const bool flaky = probe.kind == lab::Probe::Kind::Flaky;
  e.probe = grade::ServerProbe{
      flaky, flaky ? std::string() : "the server at " + server.text() + " is not a flaky server: " + probe.detail};
  if (flaky) {
    auto fetched = record_now(server, facts != nullptr ? facts->own_server : nullptr);
    if (fetched) {
      e.record = std::move(fetched).value();
      e.server = server.text();
    } else {
      // It answered before the run and does not now: whatever failed since is not the
      // breaker's doing, and the report must say so rather than blame it.
      e.no_record_reason = fetched.error().message;
      e.evidence_failure =
          "the flaky server at " + server.text() + " stopped answering during the run (" + e.no_record_reason + ")";
    }
  } else {
    e.no_record_reason = "the server at " + server.text() + " is not a flaky server, so there is no record to check";
  }
  if (facts != nullptr && facts->files != nullptr) {
    std::map<std::string, grade::InMemoryFile> files;
    for (const auto& [name, f] : *facts->files) files.emplace(name, grade::InMemoryFile{f.bytes, f.wall_us});
    e.files = grade::SubmissionDir::in_memory(dir, std::move(files));
    return grade::judge(e, o);
  }
  auto d = grade::SubmissionDir::open(dir);
  if (!d) {
    grade::Report r;
    r.evidence_note = d.error().message;
    r.status = grade::Status::Error;
    return r;
  }
  e.files = std::move(*d);
  return grade::judge(e, o);
}

grade::StepReport step_verdict(const grade::Report& report, int n) {
  for (grade::StepReport s : report.steps) {
    if (s.step != n) continue;
    // The step's line is all cb-lab shows of the report: why the evidence failed is said there.
    if (!report.evidence.problem.empty())
      for (grade::Check& c : s.checks)
        if (c.status == grade::Status::Error) c.message = "not judged: " + report.evidence.problem;
    return s;
  }
  // A scenario may have more steps than the lab the grader knows.
  grade::StepReport none;
  none.step = n;
  none.status = grade::Status::Skip;
  none.checks.push_back({"",
                         "not graded",
                         grade::Status::Skip,
                         "the grader knows the lab's " + std::to_string(grade::kGradedSteps) +
                             " steps; this scenario's step " + std::to_string(n) + " is not one of them",
                         nullptr,
                         nullptr,
                         false,
                         {}});
  return none;
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

Result<std::shared_ptr<const grade::LabSpec>> student_spec(const std::string& student, const std::string& course_key,
                                                           const grade::LabSpec& base) {
  if (student.empty() && course_key.empty()) return std::shared_ptr<const grade::LabSpec>();
  if (student.empty()) return Error{"--course-key: goes with --student ID (whose numbers to derive)"};
  if (course_key.empty())
    return Error{
        "--student: goes with --course-key FILE (the course's secret, which your instructor holds: they make a kit with your numbers for you)"};
  auto key = grade::read_course_key(course_key);
  if (!key) return Error{"--course-key: " + key.error().message};
  auto spec = grade::variant_spec(base, student, *key);
  if (!spec) return Error{"--student: " + spec.error().message};
  return spec;
}

Result<std::shared_ptr<const grade::LabSpec>> settings_spec(const std::string& path, const grade::LabSpec& base) {
  auto spec = grade::spec_of_settings_file(base, path);
  if (!spec) return Error{"--settings: " + spec.error().message};
  spec->numbers_from = path;
  return std::make_shared<const grade::LabSpec>(std::move(*spec));
}

Result<lab::Scenario> scenario_with(std::shared_ptr<const grade::LabSpec> spec, const std::string& name) {
  auto out = lab::parse_scenario(spec->source(), name);
  if (!out) return out.error();
  out->lab_spec = std::move(spec);
  return out;
}

Result<lab::Scenario> scenario_on(lab::Scenario scenario, const std::string& scenario_path,
                                  const std::string& settings_path) {
  if (settings_path.empty()) return scenario;
  if (!scenario.lab_spec)
    return Error{scenario_path + " is not the lab (it has no checks): there are no numbers to vary"};
  auto spec = settings_spec(settings_path, *scenario.lab_spec);
  if (!spec) return spec.error();
  return scenario_with(*spec, scenario_path);
}

std::string kit_settings_here() {
  std::error_code ec;
  const auto here = std::filesystem::absolute("lab-settings.json", ec);
  return !ec && std::filesystem::is_regular_file(here, ec) ? here.string() : std::string();
}

}  // namespace cb::cli

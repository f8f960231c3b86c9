#include "queue_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <mutex>
#include <thread>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/decimal_time.h"
#include "cb/grade/jobs.h"
#include "cb/grade/queue.h"
#include "cb/sandbox/interrupt.h"
#include "cb/utc_time.h"
#include "class_command.h"
#include "cli_flags.h"

namespace cb::grade {
namespace {

// Which queue, and what is done once the action's flags are read (`then`) besides naming the mode.
void add_queue_flags(CLI::App* c, QueueFlags& o, Mode mode, Command& command, std::function<void()> then = {}) {
  c->add_option("--redis", o.redis, "The queue's Redis: redis://HOST:PORT or unix:///PATH")->required();
  c->add_option(
      "--queue", o.queue_name,
      mode == Mode::QueuePush ? "The queue's name (the class folder's name unless told)" : "The queue's name");
  c->parse_complete_callback([mode, &command, then = std::move(then)] {
    command.mode = mode;
    if (then) then();
  });
}

Result<std::chrono::milliseconds> millis(const std::string& flag, const std::string& text) {
  auto d = parse_duration(text);
  if (!d || d->count() < 1000) return Error{flag + ": expected a duration of 1ms or more (500ms, 10s), got " + text};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

QueueAddress address(const QueueFlags& o) { return {o.redis, o.queue_name}; }

void say(const std::string& line) { std::cerr << "cb-grade: " << line << '\n'; }

// A manifest: a folder's name a line; blank lines and # comments aside. Errors name the line.
Result<std::vector<std::string>> read_manifest(const std::string& path) {
  auto text = read_bounded_file(path, 16 << 20, "manifest");
  if (!text) return text.error();
  std::vector<std::string> names;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text->size();) {
    const std::size_t end = std::min(text->find('\n', at), text->size());
    std::string line = text->substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    if (line.find('/') != std::string::npos || line == "." || line == "..")
      return Error{path + ": line " + std::to_string(line_no) + ": expected a folder's name, got " + line};
    names.push_back(line);
  }
  if (names.empty()) return Error{path + ": names no folder"};
  return names;
}

}  // namespace

int run_queue_push(const QueuePushArgs& o, const Asked& asked) {
  auto b = batch_options(o, asked);
  if (!b) return could_not_run("queue push: " + b.error().message);
  PushOptions p;
  p.queue = address(o);
  if (p.queue.name.empty()) p.queue.name = class_name(o.root);
  p.batch = std::move(*b);
  p.lane = o.lane;
  p.resume = o.repair;
  if (!o.manifest.empty()) {
    auto listed = read_manifest(o.manifest);
    if (!listed) return could_not_run("queue push: " + listed.error().message);
    p.manifest = std::move(*listed);
  }
  auto pushed = push_class(p);
  if (!pushed) return could_not_run("queue push: " + pushed.error().message);
  for (const std::string& r : pushed->refused) say("queue push: not queued: " + r);
  for (const std::string& n : pushed->notes) say("queue push: " + n);
  for (const std::string& n : pushed->older) say("queue push: not queued: " + n);
  for (const std::string& n : pushed->dropped) say("queue push: no longer queued: " + n);
  for (const std::string& n : pushed->absent) say("queue push: on the roster, nothing handed in: " + n);
  std::string line = "queue " + p.queue.name + ": " + std::to_string(pushed->queued) + " queued (" + p.lane + "), " +
                     std::to_string(pushed->same) + " pushed before with the same bytes";
  if (const std::size_t n = pushed->older.size() + pushed->dropped.size(); n > 0)
    line += ", " + std::to_string(n) + " superseded by the same student's later hand-in";
  if (o.repair)
    line += ", " + std::to_string(pushed->requeued) + " whose entry Redis had lost queued again, " +
            std::to_string(pushed->revived) + " dead-lettered given " + std::to_string(kMaxDeliveries) +
            " more deliveries";
  say(line);
  return static_cast<int>(pushed->refused.empty() ? ExitCode::Ok : ExitCode::Failed);
}

namespace {

constexpr const char* kWorkDirPrefix = "cb-grade-queue-";

std::string temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp == '/' ? tmp : "/tmp";
}

// A --work-dir the operator named lies outside the temp folder, where the sweep looks: the worker
// leaves a note there (TMP/cb-grade-queue-PID.work-dir, the folder's path) and a mark inside the
// folder (its pid), so that a later worker on this machine can tell the folder was a dead one's.
constexpr const char* kNoteSuffix = ".work-dir";
constexpr const char* kMark = ".cb-grade-worker";

std::string note_path(pid_t pid) { return temp_folder() + "/" + kWorkDirPrefix + std::to_string(pid) + kNoteSuffix; }

bool is_mine(const std::string& path, mode_t kind) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind && st.st_uid == ::geteuid();
}

// A dead worker's named folder: removed only when it still holds that worker's mark (a path
// reused since for something else is left alone).
void sweep_named(const std::string& note, long pid) {
  std::error_code ec;
  const auto path = read_bounded_file(note, 4096, "note");
  if (path && !path->empty() && path->front() == '/' && is_mine(*path, S_IFDIR) &&
      is_mine(*path + "/" + kMark, S_IFREG)) {
    const auto mark = read_bounded_file(*path + "/" + kMark, 64, "mark");
    if (mark && *mark == std::to_string(pid)) std::filesystem::remove_all(*path, ec);
  }
  std::filesystem::remove(note, ec);
}

// The folders of workers that were killed (kill -9 leaves its submissions unpacked): in the temp
// folder, named for a pid no process has any more, this user's, and the --work-dir folders their
// notes name. Removed, never followed.
void sweep_dead_workers() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(temp_folder(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kWorkDirPrefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + std::strlen(kWorkDirPrefix), &end, 10);
    const bool note = std::strcmp(end, kNoteSuffix) == 0;
    if ((*end != '\0' && !note) || pid <= 0 || !is_mine(e.path(), note ? S_IFREG : S_IFDIR)) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    if (note)
      sweep_named(e.path(), pid);
    else
      std::filesystem::remove_all(e.path(), ec);
  }
}

// This worker's named --work-dir, noted and marked for the sweep (above); nothing for the default.
Result<void> note_work_dir(const std::string& dir) {
  if (dir == temp_folder() + "/" + kWorkDirPrefix + std::to_string(::getpid())) return {};
  if (auto made = make_directories(dir); !made) return made.error();
  const std::string absolute = std::filesystem::absolute(dir).lexically_normal().string();
  if (auto marked = write_file_atomically(absolute + "/" + kMark, std::to_string(::getpid())); !marked)
    return marked.error();
  return write_file_atomically(note_path(::getpid()), absolute);
}

}  // namespace

int run_queue_work(const QueueWorkArgs& o, const Asked& asked, sandbox::Sandbox& sandbox) {
  if (o.queue_name.empty()) return could_not_run("queue work: --queue NAME: which queue to take jobs from");
  auto b = batch_options(o, asked);
  if (!b) return could_not_run("queue work: " + b.error().message);
  auto heartbeat = millis("--heartbeat", o.heartbeat);
  auto poll = millis("--poll", o.poll);
  if (!heartbeat || !poll) return could_not_run(!heartbeat ? heartbeat.error().message : poll.error().message);
  WorkOptions w;
  w.queue = address(o);
  w.batch = std::move(*b);
  w.batch.sandbox = &sandbox;
  w.jobs = o.jobs > 0 ? o.jobs : grading_jobs(this_process()).count;
  w.heartbeat = *heartbeat;
  w.poll = *poll;
  w.work_dir = o.work_dir;
  w.worker = o.worker;
  w.until_done = o.until_done;
  // A line a job, on standard output: what the worker did is its output. Each line begins with
  // the time in UTC, so the logs of workers on several machines read as one.
  w.log = [](const std::string& line) {
    static std::mutex mu;
    const auto now =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const std::lock_guard lock(mu);
    std::cout << format_utc(now) << ' ' << line << std::endl;
  };
  // Stopped by a signal, the boxes go first (the sandbox's own), then what was unpacked here.
  sandbox::set_last_words([dir = o.work_dir] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::filesystem::remove(note_path(::getpid()), ec);
  });
  sweep_dead_workers();
  // Best effort: a folder that cannot be noted (no temp folder) is only not swept after a kill.
  if (auto noted = note_work_dir(o.work_dir); !noted)
    say("queue work: --work-dir " + o.work_dir + " is not noted for a later sweep: " + noted.error().message);
  auto worked = work_queue(w);
  sandbox::set_last_words({});
  {
    std::error_code ec;
    std::filesystem::remove(note_path(::getpid()), ec);
  }
  if (!worked) return could_not_run("queue work: " + worked.error().message);
  say("queue work: " + std::to_string(worked->done) + " graded, " + std::to_string(worked->fenced) +
      " finished after another worker had taken them, " + std::to_string(worked->failed) + " handed back");
  return 0;
}

namespace {

// Until every job pushed is done or dead: a line a second, in place on a terminal; in a log, a
// line when it has moved and ten seconds have passed.
Result<QueueStatus> wait_for(const QueueAddress& q, bool show) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  auto said = std::chrono::steady_clock::time_point{};
  std::string last;
  for (;;) {
    auto s = queue_status(q);
    if (!s) return s;
    const auto now = std::chrono::steady_clock::now();
    const bool finished = s->queued + s->running == 0;
    if (show && (tty || (s->line() != last && (now - said >= std::chrono::seconds{10} || finished)))) {
      std::cerr << (tty ? "\r" : "") << s->line() << (tty ? " " : "\n") << std::flush;
      said = now;
      last = s->line();
    }
    if (finished) {
      if (show && tty) std::cerr << '\n';
      return s;
    }
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }
}

}  // namespace

int run_queue_status(const QueueStatusArgs& o) {
  if (o.queue_name.empty()) return could_not_run("queue status: --queue NAME: which queue");
  auto s = o.watch ? wait_for(address(o), true) : queue_status(address(o));
  if (!s) return could_not_run("queue status: " + s.error().message);
  if (o.format == "json") {
    nlohmann::json holding = nlohmann::json::object();
    for (const WorkerHold& h : s->holding)
      holding[h.worker] = {{"jobs", h.jobs}, {"heartbeat_age_ms", h.heartbeat_age_ms}, {"folders", h.folders}};
    std::cout << nlohmann::json{{"queue", s->class_name},
                                {"pushed", s->pushed()},
                                {"queued", s->queued},
                                {"running", s->running},
                                {"done", s->done},
                                {"dead", s->dead},
                                {"superseded", s->superseded},
                                {"refused", s->refused},
                                {"oldest_waiting_ms", s->oldest_waiting_ms},
                                {"done_last_minute", s->done_last_minute},
                                {"holding", holding},
                                {"attempts", s->attempts}}
                     .dump(1)
              << '\n';
  } else if (!o.watch) {
    std::cout << s->text();
  }
  return 0;
}

int run_queue_collect(const QueueCollectArgs& o, const GradeOptions& grade) {
  if (o.queue_name.empty()) return could_not_run("queue collect: --queue NAME: which queue");
  if (o.reports.empty()) return could_not_run("queue collect: --reports DIR: where the class's reports go");
  const auto started = std::chrono::steady_clock::now();
  if (o.wait)
    if (auto s = wait_for(address(o), true); !s) return could_not_run("queue collect: " + s.error().message);
  CollectOptions c;
  c.queue = address(o);
  c.reports = o.reports;
  c.grade = grade;
  c.jobs = o.jobs;
  auto got = collect_queue(c);
  if (!got) return could_not_run("queue collect: " + got.error().message);
  for (const std::string& n : got->notes) say("queue collect: " + n);
  write_batch_page(o.reports, got->class_name, got->rows);
  say("queue collect: " +
      summary(got->rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
  if (!got->missing.empty()) {
    std::string names;
    for (std::size_t i = 0; i < got->missing.size() && i < 20; ++i) names += (i > 0 ? ", " : "") + got->missing[i];
    if (got->missing.size() > 20) names += ", ...";
    say("queue collect: " + std::to_string(got->missing.size()) + " not graded yet: " + names);
  }
  return finish_joined(o, got->rows, got->missing);
}

void add_queue_commands(CLI::App& app, Command& c) {
  CLI::App* q = app.add_subcommand("queue", "Grade a class through a queue on Redis, by workers on many machines");
  q->require_subcommand(1);
  // Before the action too (`queue --queue NAME work ...`), as scripts have it. CLI11 sets this
  // command's variable when its own parse ends, after its action's: the name is passed on then,
  // to an action that gave none.
  q->add_option("--queue", c.queue_before, "The queue's name (push: the class folder's name unless told)");
  q->parse_complete_callback([&c] {
    for (QueueFlags* action : std::initializer_list<QueueFlags*>{&c.push, &c.work, &c.status, &c.collect})
      if (action->queue_name.empty()) action->queue_name = c.queue_before;
  });
  QueuePushArgs& p = c.push;
  CLI::App* push = q->add_subcommand("push", "Send each submission of ROOT to the queue, with how it is to be graded");
  push->add_option("root", p.root, "The class: a folder a submission")->required();
  push->add_option("--lane", p.lane, "interactive (taken first) or bulk")->capture_default_str();
  push->add_option("--manifest", p.manifest, "Only the folders this file names, one a line (# starts a comment)");
  push->add_flag("--resume", p.repair,
                 "Repair the queue: queue again each job whose entry Redis lost, and give each dead-lettered one " +
                     std::to_string(kMaxDeliveries) + " more deliveries");
  add_queue_flags(push, p, Mode::QueuePush, c);
  add_grading_flags(*push, p, c.sandbox, true);
  add_class_flags(*push, p, false);
  QueueWorkArgs& w = c.work;
  CLI::App* work = q->add_subcommand("work", "Take jobs from the queue and grade them, -j at a time, until stopped");
  w.heartbeat = duration_flag_text(WorkOptions{}.heartbeat);
  w.poll = std::to_string(WorkOptions{}.poll.count()) + "ms";
  work->add_option(
          "--heartbeat", w.heartbeat,
          "How often the jobs held are said to be alive; " + std::to_string(kMissedHeartbeats) + " missed: taken back")
      ->capture_default_str();
  work->add_option("--poll", w.poll, "How often an idle worker asks for a job")->capture_default_str();
  work->add_option("--worker", w.worker, "This worker's name (host:pid unless told)");
  work->add_option("--work-dir", w.work_dir, "Where submissions are unpacked (made; removed after)");
  work->add_flag("--until-done", w.until_done, "Stop once no job is queued or running");
  // A worker grades as a class is graded, in a folder of its own.
  add_queue_flags(work, w, Mode::QueueWork, c, [&w] {
    if (w.work_dir.empty()) w.work_dir = temp_folder() + "/" + kWorkDirPrefix + std::to_string(::getpid());
    w.root = w.work_dir;
  });
  add_grading_flags(*work, w, c.sandbox, true);
  add_class_flags(*work, w, false);
  QueueStatusArgs& s = c.status;
  CLI::App* status = q->add_subcommand("status", "How far the queue is: queued, running per worker, done, dead");
  status->add_flag("--watch", s.watch, "A line a second until every job is done");
  status->add_option("--format", s.format, "text, or json (the counts, each worker's jobs and heartbeat)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  add_queue_flags(status, s, Mode::QueueStatus, c);
  QueueCollectArgs& k = c.collect;
  CLI::App* collect = q->add_subcommand("collect", "Write the reports and gradebook of what the workers graded");
  collect->add_flag("--wait", k.wait, "Wait until every job is done or dead first");
  add_queue_flags(collect, k, Mode::QueueCollect, c);
  collect->add_option("--reports", k.reports,
                      "Write each submission's reports (text, JSON, HTML) and the class page in DIR/NAME/");
  add_gradebook_flags(*collect, k);
  add_judging_flags(*collect, k);
}

}  // namespace cb::grade

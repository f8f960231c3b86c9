#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <set>
#include <thread>

#include "cb/atomic_file.h"
#include "cb/grade/merge.h"
#include "cb/grade/class_reports.h"
#include "cb/grade/queue.h"
#include "cb/sandbox/interrupt.h"
#include "cb/thread_safety.h"
#include "queue_store.h"

namespace cb::grade {
namespace {

namespace fs = std::filesystem;
using queue::QueueStore;

// The jobs this worker holds, which its heartbeat keeps, and the end of the heartbeat.
class Holding {
 public:
  void add(const std::string& job) CB_EXCLUDES(mu_) {
    const MutexLock lock(mu_);
    jobs_.insert(job);
  }
  void remove(const std::string& job) CB_EXCLUDES(mu_) {
    const MutexLock lock(mu_);
    jobs_.erase(job);
  }
  [[nodiscard]] std::vector<std::string> jobs() CB_EXCLUDES(mu_) {
    const MutexLock lock(mu_);
    return {jobs_.begin(), jobs_.end()};
  }
  void stop() CB_EXCLUDES(mu_) {
    {
      const MutexLock lock(mu_);
      stopped_ = true;
    }
    wake_.notify_all();
  }
  // Waits `d`, or less if stopped; whether it was stopped.
  [[nodiscard]] bool wait(std::chrono::milliseconds d) CB_EXCLUDES(mu_) {
    MutexLock lock(mu_);
    wake_.wait_for(lock, d, [this]() CB_NO_THREAD_SAFETY_ANALYSIS { return stopped_; });
    return stopped_;
  }

 private:
  Mutex mu_;
  std::condition_variable_any wake_;
  std::set<std::string> jobs_ CB_GUARDED_BY(mu_);
  bool stopped_ CB_GUARDED_BY(mu_) = false;
};

// What two completions of one job are compared by: how it ended, its points and each part's
// verdict. Not the time it took, nor the evidence's bytes (a run's timings are in them).
std::string verdict_of(const BatchRow& row) {
  std::string v = to_string(row.status);
  if (!row.report) return v + ": " + row.error;
  const Report& r = *row.report;
  v += " " + nlohmann::json(r.score).dump() + "/" + nlohmann::json(r.max_score).dump();
  for (const StepReport& s : r.steps) v += " " + std::to_string(s.step) + ":" + to_string(s.status);
  if (r.conformance) v += " conformance:" + std::string(to_string(r.conformance->status));
  return v;
}

std::string score_text(const BatchRow& row) {
  if (!row.report) return to_string(row.status);
  return nlohmann::json(row.report->score).dump() + "/" + nlohmann::json(row.report->max_score).dump();
}

struct Worker {
  Worker(const WorkOptions& options, std::string worker, long long reclaim, nlohmann::json grading)
      : o(options), name(std::move(worker)), reclaim_ms(reclaim), stamp(std::move(grading)) {}
  const WorkOptions& o;
  std::string name;
  long long reclaim_ms;
  nlohmann::json stamp;
  Holding holding;
  Mutex mu;
  Worked worked CB_GUARDED_BY(mu);
  std::optional<ClassContext> the_class CB_GUARDED_BY(mu);
  std::string last_said CB_GUARDED_BY(mu);

  void log(const std::string& line) const {
    if (o.log) o.log(line);
  }

  // The whole class's students (with a course key: whose numbers a run on another's were), read
  // once, at the first job.
  ClassContext class_of(QueueStore& store) CB_EXCLUDES(mu) {
    {
      const MutexLock lock(mu);
      if (the_class) return *the_class;
    }
    std::vector<std::string> students;  // the queue's students are the keys of P:sub
    if (!o.batch.course_key.empty())
      if (auto subs = store.command({"HKEYS", store.prefix() + ":sub"}))
        for (const RedisReply& s : subs->elements) students.push_back(s.text);
    BatchOptions everyone = o.batch;
    everyone.roster.clear();
    everyone.roster_only = false;
    ClassContext c = class_context(everyone, students);
    const MutexLock lock(mu);
    the_class = c;
    return c;
  }

  [[nodiscard]] Result<std::string> fields(QueueStore& store, const std::string& job, const char* field) {
    auto v = store.hget("job:" + job, field);
    if (!v) return v.error();
    if (!*v) return Error{"job " + job + " has no " + field};
    return **v;
  }

  // How a job ended here, as the worker's line says it.
  struct Finished {
    std::string line;
    bool kept_as_attempt = false;  // another worker had taken it: its completion is an attempt
  };

  // One job, from its files to its completion. What is the grader's own failure (Fault::Grader,
  // or Redis away) comes back as an Error: the job is handed back to be delivered again. A
  // student's failure, the program's included, is a grade like any other, completed once.
  static BatchRow unpackable(const BatchOptions& b, const std::string& sub, std::string why) {
    BatchRow row;
    row.submission = sub;
    row.status = RowStatus::Error;
    row.fault = Fault::Program;
    row.error = std::move(why);
    row.with_conformance = b.conformance.has_value();
    row.max_score = b.grade.rubric.max_score(row.with_conformance);
    if (auto kept = keep_ungraded(b.reports_dir + "/" + sub, row); !kept)
      row.error += "; keeping it: " + kept.error().message;
    return row;
  }

  Result<Finished> grade_taken(QueueStore& store, const queue::Taken& t, const Result<std::string>& sub,
                               const std::string& area) {
    auto student = fields(store, t.job, "student");
    auto files = fields(store, t.job, "files");
    if (!sub || !student || !files)
      return Error{"reading the job: " + (!sub ? sub : !student ? student : files).error().message};
    auto entries = FolderBytes::parse_listing(*files);
    if (!entries) return entries.error();
    std::error_code ec;
    fs::remove_all(area, ec);
    if (auto made = make_directories(area + "/root"); !made) return made.error();
    if (auto made = make_directories(area + "/reports"); !made) return made.error();
    auto unpacked =
        write_folder(area + "/root/" + *sub, *entries, [&](const std::string& sha) { return store.blob(sha); });
    if (!unpacked && !unpacked.error().listings) return Error{"unpacking the submission: " + unpacked.error().message};
    BatchOptions b = o.batch;
    b.root = area + "/root";
    b.reports_dir = area + "/reports";
    b.resume = false;
    b.shard.reset();
    b.roster = {{*sub, *student}};
    b.roster_only = false;
    // A folder whose own names cannot all be made again (two that are one on this file system)
    // cannot be graded as handed in: its row, completed once, like any failure of its own.
    const BatchRow row =
        unpacked ? grade_in_class(b, *sub, class_of(store))
                 : unpackable(b, *sub, "its folder cannot be made as handed in: " + unpacked.error().message);
    if (const std::string why = b.class_build->failure(); !why.empty())
      say_once("the C++ kit's harness could not be built once (" + why + "): each box builds its own");
    // A submission the grader could not grade (no box, no disk, it stalled at every try) is its
    // failure, not the student's: a crash, a timeout or a folder that cannot be graded is theirs.
    if (row.fault == Fault::Grader) return Error{row.error};
    auto kept = read_folder(b.reports_dir + "/" + *sub, FolderLimits{256ULL << 20, 20'000, 64});
    if (!kept) return Error{"reading back its reports: " + kept.error().message};
    for (const auto& [sha, bytes] : kept->blobs)
      if (auto put = store.put_blob(sha, bytes); !put) return put.error();
    log(*sub + ": graded, " + score_text(row));
    auto done = store.call("complete", {name, t.job, verdict_of(row), kept->listing()});
    if (!done) return done.error();
    fs::remove_all(area, ec);
    if (done->text == "done") return Finished{*sub + ": done"};
    return Finished{*sub + ": finished after another worker had taken it: kept as an attempt", true};
  }

  // A Redis that is away (a restart, a lost connection) costs no job a delivery: each of the
  // worker's calls is asked again every --poll until Redis answers or the worker stops, and a
  // restarted Redis takes no held job back before its owner has had kMissedHeartbeats to beat
  // (cb_queue.lua). Said once when Redis goes, every reclaim_ms after, and when it is back.
  QueueStore store_of() {
    return {*parse_redis_address(o.queue.redis), o.queue.name,
            queue::Patience{o.poll, std::chrono::milliseconds{reclaim_ms},
                            [this](std::chrono::milliseconds d) { return holding.wait(d); },
                            [this](const std::string& line) { say_once(line); }}};
  }

  // The worker's threads each ask Redis, so each sees it go and come back: said once.
  void say_once(const std::string& line) CB_EXCLUDES(mu) {
    {
      const MutexLock lock(mu);
      if (line == last_said) return;
      last_said = line;
    }
    log(line);
  }

  void count(std::size_t Worked::*what) CB_EXCLUDES(mu) {
    const MutexLock lock(mu);
    ++(worked.*what);
  }

  // Whether every job pushed is done, dead or superseded.
  static bool queue_done(QueueStore& store) {
    auto s = store.command({"HMGET", store.prefix() + ":n", "queued", "running"});
    if (!s || s->elements.size() != 2) return false;
    long long left = 0;
    for (const RedisReply& r : s->elements) left += std::atoll(r.text.c_str());
    auto any = store.command({"EXISTS", store.prefix() + ":meta"});
    return left == 0 && any && any->integer == 1;
  }

  void run(int slot) {
    QueueStore store = store_of();
    const std::string area = o.work_dir + "/" + std::to_string(slot);
    for (;;) {
      auto taken = store.take(name, reclaim_ms);
      if (!taken) log("redis: " + taken.error().message + "; asking again");
      if (!taken || !*taken) {
        if (taken && o.until_done && queue_done(store)) return;
        if (holding.wait(o.poll)) return;
        continue;
      }
      const queue::Taken& t = **taken;
      holding.add(t.job);
      const auto sub = fields(store, t.job, "name");
      const std::string shown = (sub ? *sub : "job " + t.job) + " (delivery " + std::to_string(t.delivery) + ")";
      log(shown + ": taken");
      auto graded = grade_taken(store, t, sub, area);
      holding.remove(t.job);
      if (graded) {
        count(graded->kept_as_attempt ? &Worked::fenced : &Worked::done);
        log(graded->line);
        continue;
      }
      count(&Worked::failed);
      log(shown + ": " + graded.error().message + "; handed back");
      if (auto failed = store.call("fail", {name, t.job, graded.error().message, std::to_string(reclaim_ms)}); !failed)
        log("redis: " + failed.error().message);
    }
  }

  void beat() {
    QueueStore store = store_of();
    while (!holding.wait(o.heartbeat)) {
      std::vector<std::string> args{name};
      for (std::string& j : holding.jobs()) args.push_back(std::move(j));
      if (args.size() == 1) continue;
      if (auto lost = store.call("beat", args); !lost)
        log("heartbeat: " + lost.error().message);
      else
        for (const RedisReply& j : lost->elements) {
          const auto folder = fields(store, j.text, "name");
          log((folder ? *folder : "job " + j.text) + ": taken back by the queue (another worker has it now)");
        }
    }
  }
};

std::string default_worker_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid());
}

}  // namespace

Result<Worked> work_queue(const WorkOptions& given) {
  auto address = parse_redis_address(given.queue.redis);
  if (!address) return Error{"--redis: " + address.error().message};
  WorkOptions o = given;
  QueueStore store(*address, o.queue.name);
  auto kept = store.stamp();
  if (!kept) return kept.error();
  const nlohmann::json& theirs = *kept;
  // A class has one seed: a worker told none runs the traces of the seed its push drew.
  if (o.batch.conformance && o.batch.conformance->seed_drawn && theirs.contains("conformance") &&
      theirs["conformance"].is_object() && theirs["conformance"].value("seed", nlohmann::json()).is_number_unsigned())
    o.batch.conformance->traces.seed = theirs["conformance"]["seed"].get<std::uint64_t>();
  Worker w(o, o.worker.empty() ? default_worker_name() : o.worker, kMissedHeartbeats * o.heartbeat.count(),
           queue::grading_stamp(o.batch));
  {
    if (theirs != w.stamp)
      return Error{"queue " + o.queue.name + " is graded otherwise than this worker would (" +
                   differing_keys(theirs, w.stamp) + "): start it with the flags its push was given"};
  }
  if (auto made = make_directories(o.work_dir); !made) return made.error();
  std::thread heart([&w] { w.beat(); });
  std::vector<std::thread> graders;
  for (int i = 0; i < std::max(1, o.jobs); ++i) graders.emplace_back([&w, i] { w.run(i); });
  for (std::thread& t : graders) t.join();
  w.holding.stop();
  heart.join();
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  const MutexLock lock(w.mu);
  return w.worked;
}

}  // namespace cb::grade

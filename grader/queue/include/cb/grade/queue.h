#pragma once
// `cb-grade queue`: a class graded by any number of workers on any number of machines, through
// a work queue on Redis Streams (docs/SCALE.md). `push` sends each submission's files (held by
// their SHA-256) with its student; `work` grades them as --batch grades each (grade_in_class), in
// the same boxes, and sends back what --reports keeps; `collect` writes that into a reports
// folder and gradebook like --batch --reports's; `status` says how far it is.
//
// Delivery is at-least-once: a worker presumed dead may finish after all. The queue's functions
// keep the first completion by a job's owner and record every other as an attempt, compared with
// the first (a different verdict marks the job nondeterministic), so each submission has one row.
// Only the grader's own failures (a box not made, a disk full, a worker lost) deliver a job
// again, kMaxDeliveries times in all; then it is dead-lettered and its row says `error: infrastructure`. A
// student's crash or timeout is a grade and is never retried.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/batch.h"
#include "cb/grade/folder_bytes.h"

namespace cb::grade {

// The queue's two numbers, each written here only: cb_queue.lua is given them with each call,
// and the help and the messages say them from here (docs/SCALE.md is held to them by a test).
inline constexpr int kMaxDeliveries = 3;     // deliveries of a job the grader failed, before the dead letters
inline constexpr int kMissedHeartbeats = 3;  // heartbeats a held job may go unheard before it is taken back

struct QueueAddress {
  std::string redis;  // redis://HOST:PORT or unix:///PATH
  std::string name;   // the queue: the class's folder's name unless told
};

struct PushOptions {
  QueueAddress queue;
  BatchOptions batch;         // root, roster, and how each is to be graded (the queue's stamp)
  std::string lane = "bulk";  // or "interactive": taken first by every worker
  bool resume = false;        // also give a job Redis lost (a restart) its entry again
  // A manifest: only these folders of the root (an LMS's list of who handed in); one the root
  // does not hold is named among the refused. Empty: every folder.
  std::vector<std::string> manifest;
  FolderLimits limits;
};

struct Pushed {
  std::size_t queued = 0;            // new jobs
  std::size_t same = 0;              // pushed before with the same bytes: nothing to do
  std::size_t requeued = 0;          // --resume: jobs Redis had lost the entry of
  std::size_t revived = 0;           // --resume: dead-lettered jobs given 3 more deliveries
  std::vector<std::string> refused;  // "NAME: why" (too large, unreadable): not queued
  std::vector<std::string> notes;    // submissions whose bytes are another's
  // "NAME: handed in before NEWER, ...": a folder whose student handed in again later (handed_in.h)
  std::vector<std::string> older;
  // The same words of a folder queued before and superseded by a later hand-in this push brought.
  std::vector<std::string> dropped;
  std::vector<std::string> absent;  // the roster's students who handed in nothing, by folder: a row each
};

// Errors: Redis unreachable, the root unlistable, a queue stamped otherwise (named).
[[nodiscard]] Result<Pushed> push_class(const PushOptions& options);

struct WorkOptions {
  QueueAddress queue;
  BatchOptions batch;  // how to grade (root and reports_dir are the worker's own, below work_dir)
  int jobs = 1;
  std::chrono::milliseconds heartbeat{10'000};       // a job idle for kMissedHeartbeats of these is taken back
  std::chrono::milliseconds poll{500};               // how often an idle worker asks again
  std::string work_dir;                              // where the submissions are unpacked; made, and emptied after
  std::string worker;                                // its consumer name: host:pid unless told
  bool until_done = false;                           // stop when no job is queued or running
  std::function<void(const std::string& line)> log;  // a line per job, for stderr
};

struct Worked {
  std::size_t done = 0;
  std::size_t fenced = 0;  // finished after another had taken the job: kept as attempts
  std::size_t failed = 0;  // the grader's own failures, handed back
};

// Runs until stopped (a signal) or, with until_done, until the queue is done. Errors: Redis
// unreachable at the start, a queue of another stamp (named).
[[nodiscard]] Result<Worked> work_queue(const WorkOptions& options);

// A worker as the queue last heard from it: the jobs it holds and when it last beat for them (a
// worker killed or stopped shows the age growing until the jobs are taken back, at kMissedHeartbeats).
struct WorkerHold {
  std::string worker;
  std::size_t jobs = 0;
  long long heartbeat_age_ms = 0;
  std::vector<std::string> folders;  // of the jobs it holds, 20 at most
};

struct QueueStatus {
  std::string class_name;
  std::size_t queued = 0, running = 0, done = 0, dead = 0, superseded = 0;
  std::size_t refused = 0;  // never queued: a folder push could not take, a roster's student with none
  long long oldest_waiting_ms = -1;
  std::size_t done_last_minute = 0;
  std::vector<WorkerHold> holding;
  std::size_t attempts = 0;
  [[nodiscard]] std::size_t pushed() const { return queued + running + done + dead; }
  [[nodiscard]] std::string text() const;  // a few lines for a person
  [[nodiscard]] std::string line() const;  // one, for a progress line
};
[[nodiscard]] Result<QueueStatus> queue_status(const QueueAddress& queue);

struct CollectOptions {
  QueueAddress queue;
  std::string reports;  // made if need be
  GradeOptions grade;   // the rubric the queue's stamp names (its SHA-256 is checked)
  int jobs = 0;
};

struct Collected {
  std::string class_name;
  std::vector<BatchRow> rows;        // every submission pushed, by name
  std::vector<std::string> missing;  // not graded yet
  std::vector<std::string> notes;    // nondeterministic jobs, dead letters, shared bytes
};

// Writes REPORTS/NAME/ for every job done (and an ungraded one for a dead one) as --batch
// --reports keeps it, and says each row. Errors: Redis unreachable, another rubric.
[[nodiscard]] Result<Collected> collect_queue(const CollectOptions& options);

}  // namespace cb::grade

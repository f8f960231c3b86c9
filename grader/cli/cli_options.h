#pragma once
// cb-grade's command line, shared by every mode's file: the flags as given, the exit codes, and how
// a result leaves the program.

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cb/atomic_file.h"
#include "cb/decimal_time.h"
#include "cb/dir_handle.h"
#include "cb/grade/gather.h"

namespace cb::grade {

// 0: every selected step passed; 1: a step failed; 2: the grader could not run, or the evidence
// failed (a grader fault, never the student's).
// Incomplete: a class joined (merge, queue collect) with submissions nothing graded yet; a script
// tells it from a student who failed (1), which is no reason to run anything again.
enum class ExitCode : int { Ok = 0, Failed = 1, CouldNotRun = 2, Incomplete = 3 };

inline int could_not_run(const std::string& message) {
  std::cerr << "cb-grade: " << message << '\n';
  return static_cast<int>(ExitCode::CouldNotRun);
}

// Which mode the command line named (its subcommand; none: one submission), never worked out
// from which flags were given.
enum class Mode : std::uint8_t { One, Class, Regrade, Merge, Verify, QueuePush, QueueWork, QueueStatus, QueueCollect };

// A default duration as its flag takes it ("60s"): the defaults are the library's own, written once
// (gather.h), and --help shows them from there.
inline std::string duration_flag_text(std::chrono::milliseconds d) {
  return format_seconds(std::chrono::duration_cast<std::chrono::microseconds>(d)) + "s";
}

// The flags as given, in the groups cli_flags.h declares, and a value of each mode's own made of
// the groups it takes: a mode's function is handed its value and can read no flag it does not
// take. Read and checked once by read_flags() / read_judging() (cli_flags.h).

// Where the result goes (-o, else standard output), and as what: a report's format (one
// submission, queue status) or a gradebook's (the modes that grade or judge a class).
struct OutputFlags {
  std::string format = "text";
  std::string gradebook_format = "csv";
  std::string output;
};

// What judging takes, whether it runs programs or only reads what was kept: the rubric, the lab,
// and how many are judged at once.
struct JudgingFlags {
  std::string rubric;
  std::string spec;
  int jobs = 0;
};

// The grading flags, one group every mode that grades takes (add_grading_flags): how each program
// runs, whose numbers it is graded on, and what is kept.
struct GradingFlags : JudgingFlags, OutputFlags {
  std::string run;
  std::string timeout = duration_flag_text(Submission{}.timeout);
  std::string conformance;
  int traces = TraceSet{}.count;
  std::uint64_t seed = 0;
  std::string trace_timeout = duration_flag_text(ConformanceRun{}.trace_limit);
  std::string conformance_timeout = duration_flag_text(ConformanceRun{}.time_limit);
  std::string refuse_prebuilt;  // empty: the rubric's
  std::string warm_up = duration_flag_text(ConformanceRun{}.warm_up);
  std::string course_key;
  std::string id_field;  // empty: the rubric's
  std::string roster;    // a class's
  std::string reports;
  // One submission's, which read_lab() reads with the rest: the folder (and the lab-settings.json
  // in it), and whose numbers.
  std::string submission = ".";
  std::string student;
  std::string submission_metadata;
  std::string settings;
  bool handout_numbers = false;
};

// cb-grade [flags]: one submission.
struct OneArgs : GradingFlags {
  std::string dir = "./cb";
  std::vector<int> steps;
  std::string server;
  std::string record_file;
  std::string save_record;
  bool any_port = false;
  bool max_score = false;  // print and exit
  bool list = false;       // --list-checks: print and exit
};

// cb-grade class ROOT: a folder a submission. The queue's push and work grade a class too.
struct ClassArgs : GradingFlags {
  std::string root;
  std::string files = ".";  // --batch-files: where the lab's files are in each
  bool resume = false;
  std::string shard;
};

// cb-grade regrade REPORTS.
struct RegradeArgs : JudgingFlags, OutputFlags {
  std::string kept;
};

// cb-grade merge SHARD... --reports DIR.
struct MergeArgs : JudgingFlags, OutputFlags {
  std::vector<std::string> shards;
  std::string reports;
};

// cb-grade verify REPORTS [--gradebook BOOK].
struct VerifyArgs : JudgingFlags {
  std::string reports;
  std::string gradebook;
};

// cb-grade queue ...: which queue.
struct QueueFlags {
  std::string redis;
  std::string queue_name;
};

struct QueuePushArgs : ClassArgs, QueueFlags {
  std::string lane = "bulk";
  std::string manifest;
  bool repair = false;  // push --resume: repairs the queue (not a --reports folder)
};

struct QueueWorkArgs : ClassArgs, QueueFlags {
  std::string heartbeat;  // the defaults are queue.h's (queue_command.cpp)
  std::string poll;
  std::string worker;
  std::string work_dir;
  bool until_done = false;
};

struct QueueStatusArgs : QueueFlags {
  bool watch = false;
  std::string format = "text";
};

struct QueueCollectArgs : JudgingFlags, OutputFlags, QueueFlags {
  std::string reports;
  bool wait = false;
};

// The folder -o's file is written in ("." when it names none).
inline std::string output_folder(const std::string& output) {
  const auto slash = output.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
}

// To -o's file (atomically), or to standard output. A file inside the folder handed in (a
// submission, or a class's folder of them) is reached without following a link on its way: a
// link there is a student's, and the grader may be root.
inline int emit(const OutputFlags& o, const std::string& handed_in, const std::string& text) {
  if (o.output.empty()) {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  const auto slash = o.output.rfind('/');
  const std::string parent = output_folder(o.output);
  if (inside(parent, handed_in)) {
    auto dir = open_in_or_beside(parent, handed_in, false);
    if (!dir) return could_not_run("-o: " + dir.error().message);
    if (auto w = dir->write(o.output.substr(slash + 1), text); !w) return could_not_run(w.error().message);
    return 0;
  }
  if (auto w = write_file_atomically(o.output, text); !w) return could_not_run(w.error().message);
  return 0;
}

}  // namespace cb::grade

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

// Every mode's flags as given: each mode declares its own (modes.cpp) and reads only those.
// A default duration as its flag takes it ("60s"): the defaults are the library's own, written once
// (gather.h), and --help shows them from there.
inline std::string duration_flag_text(std::chrono::milliseconds d) {
  return format_seconds(std::chrono::duration_cast<std::chrono::microseconds>(d)) + "s";
}

struct Options {
  Mode mode = Mode::One;
  std::string dir = "./cb";
  std::vector<int> steps;
  std::string server;
  std::string run;
  std::string timeout = duration_flag_text(Submission{}.timeout);
  std::string format = "text";
  std::string gradebook_format = "csv";
  std::string output;
  std::string rubric;
  std::string batch;
  std::string batch_files = ".";
  std::string reports;
  std::string regrade;
  bool resume = false;
  std::string shard;
  std::vector<std::string> merge;  // cb-grade merge SHARD...: the shards' --reports folders
  std::string verify;              // cb-grade verify REPORTS
  std::string verify_gradebook;    // ... --gradebook BOOK.json: held to the kept grades too
  // cb-grade queue push|work|status|collect (queue_command.h)
  std::string redis;
  std::string queue_name;
  std::string lane = "bulk";
  std::string manifest;   // queue push --manifest FILE
  std::string heartbeat;  // queue work: the defaults are queue.h's (queue_command.cpp)
  std::string poll;
  std::string worker;
  std::string work_dir;
  bool until_done = false;
  bool wait = false;
  bool watch = false;
  std::string record_file;
  std::string save_record;
  int jobs = 0;
  bool any_port = false;
  std::string conformance;
  int traces = TraceSet{}.count;
  std::uint64_t seed = 0;
  std::string trace_timeout = duration_flag_text(ConformanceRun{}.trace_limit);
  std::string conformance_timeout = duration_flag_text(ConformanceRun{}.time_limit);
  std::string refuse_prebuilt;  // empty: the rubric's
  std::string warm_up = duration_flag_text(ConformanceRun{}.warm_up);
  std::string submission = ".";
  std::string spec;
  std::string student;
  std::string course_key;
  std::string roster;
  std::string id_field;  // empty: the rubric's
  std::string submission_metadata;
  std::string settings;
  bool handout_numbers = false;
};

// The folder -o's file is written in ("." when it names none).
inline std::string output_folder(const std::string& output) {
  const auto slash = output.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : output.substr(0, slash);
}

// To -o's file (atomically), or to standard output. A file inside the folder handed in (the
// submission, or a batch's folder of them) is reached without following a link on its way: a
// link there is a student's, and the grader may be root.
inline int emit(const Options& o, const std::string& text) {
  if (o.output.empty()) {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  const std::string& handed_in = o.batch.empty() ? o.submission : o.batch;
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

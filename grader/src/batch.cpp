#include "cb/grade/batch.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "format_common.h"

namespace cb::grade {
namespace {

Result<std::vector<std::string>> subdirectories(const std::string& root) {
  DIR* d = ::opendir(root.c_str());
  if (d == nullptr) return Error{root + ": cannot list: " + std::strerror(errno)};
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name[0] == '.') continue;
    struct stat st {};
    // lstat: a symbolic link among the submissions is not followed out of the root.
    if (::lstat((root + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

BatchRow grade_one(const BatchOptions& o, const std::string& name) {
  BatchRow row{name, std::nullopt, {}};
  const std::string sub = o.root + "/" + name;
  const std::string files = o.files_dir == "." ? sub : sub + "/" + o.files_dir;
  std::optional<Record> record;
  std::string no_record = "graded from the files alone (no --run)";
  std::string server;
  std::string output;
  std::unique_ptr<sandbox::Box> box;
  std::optional<ProgramRun> program;
  std::optional<SandboxInfo> sandbox_used;
  bool record_private = false;
  std::size_t foreign_connections = 0;
  if (o.run_command) {
    auto made = o.sandbox->box(sub, files);
    if (!made) {
      row.error = made.error().message;
      return row;
    }
    box = std::move(made).value();
    RunOptions run;
    run.spec = o.grade.spec.get();
    run.command = *o.run_command;
    run.port = 0;  // outside the full sandbox: a server per submission, side by side
    run.timeout = o.timeout;
    auto ran = run_student(run, *o.sandbox, *box);
    if (!ran) {
      row.error = ran.error().message;
      return row;
    }
    server = ran->server_url;
    output = ran->output_tail;
    program =
        ProgramRun{ran->seconds,
                   ran->exit_code,
                   ran->timed_out,
                   std::chrono::duration<double>(o.timeout).count(),
                   ran->limit_hit == sandbox::LimitHit::None ? "" : std::string(sandbox::to_string(ran->limit_hit)),
                   sandbox::describe(ran->containment.limits, ran->limit_hit)};
    sandbox_used = sandbox_info(ran->containment);
    record_private = ran->record_private;
    foreign_connections = ran->foreign_connections;
    if (ran->record) {
      record = std::move(ran->record).value();
    } else {
      no_record = ran->record.error().message;
    }
  }
  GradeOptions options = o.grade;
  options.server = server;
  if (o.run_command) {
    options.expected_epoch = 1;
    options.record_private = record_private;
    options.foreign_connections = foreign_connections;
    if (!record) options.evidence_failure = "the fresh server's record could not be read: " + no_record;
  }
  // A run is graded on what it wrote in its box; the submission's own folder is left as it was.
  auto dir = box ? SubmissionDir::open(box->out_host(), files) : SubmissionDir::open(files);
  if (!dir) {
    row.error = dir.error().message;
    return row;
  }
  Report report = grade(*dir, record, no_record, options);
  report.run_output = output;
  report.program = program;
  report.sandbox = sandbox_used;
  row.report = std::move(report);
  return row;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Result<std::vector<BatchRow>> grade_batch(const BatchOptions& o) {
  auto names = subdirectories(o.root);
  if (!names) return names.error();
  std::vector<BatchRow> rows(names->size());
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const auto jobs = static_cast<std::size_t>(o.jobs > 0 ? o.jobs : static_cast<int>(cores));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < std::min(jobs, rows.size()); ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < rows.size(); i = next++) rows[i] = grade_one(o, (*names)[i]);
    });
  }
  for (auto& t : workers) t.join();
  return rows;
}

std::string gradebook_csv(const std::vector<BatchRow>& rows) {
  std::string out = "submission,score,max_score,passed";
  for (int s = 1; s <= 8; ++s) out += ",step" + std::to_string(s);
  out += ",error\n";
  for (const BatchRow& r : rows) {
    out += csv_field(r.submission);
    if (!r.report) {
      out += ",0,,false,,,,,,,,," + csv_field(r.error) + "\n";
      continue;
    }
    out +=
        "," + points(r.report->score) + "," + points(r.report->max_score) + "," + (r.report->passed ? "true" : "false");
    for (int s = 1; s <= 8; ++s) {
      std::string cell;
      for (const StepReport& step : r.report->steps)
        if (step.step == s) cell = to_string(step.status);
      out += "," + cell;
    }
    out += ",\n";
  }
  return out;
}

std::string gradebook_json(const std::vector<BatchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BatchRow& r : rows) {
    nlohmann::json row{{"submission", r.submission}};
    if (!r.report) {
      row["error"] = r.error;
      row["score"] = 0;
      row["passed"] = false;
    } else {
      row["score"] = r.report->score;
      row["max_score"] = r.report->max_score;
      row["passed"] = r.report->passed;
      nlohmann::json steps = nlohmann::json::object();
      for (const StepReport& s : r.report->steps) steps[std::to_string(s.step)] = to_string(s.status);
      row["steps"] = steps;
    }
    out.push_back(std::move(row));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cb::grade

#include "cb/grade/batch.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "cb/grade/variant.h"
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
  BatchRow row{name, {}, std::nullopt, {}};
  GradeOptions options = o.grade;
  if (!o.course_key.empty()) {
    const auto named = o.roster.find(name);
    if (named == o.roster.end() && o.roster_only) {
      row.error = "the roster names no student for this folder";
      return row;
    }
    row.student = named == o.roster.end() ? name : named->second;
    auto spec = variant_spec(o.grade.spec ? *o.grade.spec : lab_spec(), row.student, o.course_key);
    if (!spec) {
      row.error = "student " + row.student + ": " + spec.error().message;
      return row;
    }
    options.spec = *spec;
  }
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
    run.spec = options.spec.get();
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

Result<std::map<std::string, std::string>> parse_roster(std::string_view csv, const std::string& name) {
  std::map<std::string, std::string> out;
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < csv.size();) {
    const std::size_t end = std::min(csv.find('\n', at), csv.size());
    std::string line(csv.substr(at, end - at));
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const auto comma = line.find(',');
    const std::string where = name + ": line " + std::to_string(line_no);
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      return Error{where + ": expected folder,student"};
    auto trim = [](const std::string& s) {
      const auto b = s.find_first_not_of(" \t");
      const auto e = s.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    const std::string folder = trim(line.substr(0, comma));
    const std::string student = trim(line.substr(comma + 1));
    if (line_no == 1 && (folder == "folder" || folder == "submission")) continue;
    if (folder.empty() || student.empty()) return Error{where + ": expected folder,student, both named"};
    if (!out.emplace(folder, student).second) return Error{where + ": folder " + folder + " is named twice"};
  }
  return out;
}

std::string gradebook_csv(const std::vector<BatchRow>& rows) {
  const bool variants = std::any_of(rows.begin(), rows.end(), [](const BatchRow& r) { return !r.student.empty(); });
  std::string out =
      variants ? "submission,student,numbers,score,max_score,passed" : "submission,score,max_score,passed";
  for (int s = 1; s <= kGradedSteps; ++s) out += ",step" + std::to_string(s);
  out += ",error\n";
  for (const BatchRow& r : rows) {
    out += csv_field(r.submission);
    if (variants) out += "," + csv_field(r.student) + "," + csv_field(r.report ? r.report->numbers : std::string());
    if (!r.report) {
      out += ",0,,false,,,,,,,,," + csv_field(r.error) + "\n";
      continue;
    }
    out +=
        "," + points(r.report->score) + "," + points(r.report->max_score) + "," + (r.report->passed ? "true" : "false");
    for (int s = 1; s <= kGradedSteps; ++s) {
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
    if (!r.student.empty()) row["student"] = r.student;
    if (r.report) row["numbers"] = r.report->numbers;
    if (!r.report) {
      row["error"] = r.error;
      row["score"] = 0;
      row["passed"] = false;
    } else {
      row["score"] = r.report->score;
      row["max_score"] = r.report->max_score;
      row["passed"] = r.report->passed;
      nlohmann::json steps = nlohmann::json::object();
      nlohmann::json failed = nlohmann::json::array();
      for (const StepReport& s : r.report->steps) {
        steps[std::to_string(s.step)] = to_string(s.status);
        for (const Check& c : s.checks)
          if (c.status == Status::Fail) failed.push_back(c.id);
      }
      row["steps"] = steps;
      row["failed"] = failed;  // the checks that failed, by id
    }
    out.push_back(std::move(row));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cb::grade

#include "cb/grade/class_reports.h"

#include <unistd.h>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/grade/format.h"
#include "cb/grade/run_student.h"
#include "format_common.h"

namespace cb::grade {
namespace {

constexpr const char* kFormat = "cb-grade kept grade 1";
// The largest of these is the record (3 MiB for a full server, see main.cpp) and conformance
// answers (about 60 KiB for 200 traces); the limits only stop a file that is not ours.
constexpr std::size_t kMaxKept = 64 << 20;

nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

std::string string_at(const nlohmann::json& j, const char* key) {
  const auto v = j.find(key);
  return v != j.end() && v->is_string() ? v->get<std::string>() : std::string();
}

nlohmann::json inputs_json(const GradeInputs& in) {
  nlohmann::json j{{"format", kFormat},
                   {"student", or_null(in.student)},
                   {"settings", nlohmann::json::parse(in.numbers, nullptr, false)},
                   {"expected_epoch", in.expected_epoch ? nlohmann::json(*in.expected_epoch) : nlohmann::json(nullptr)},
                   {"record_private", in.record_private},
                   {"foreign_connections", in.foreign_connections},
                   {"server", in.server},
                   {"no_record_reason", in.no_record_reason},
                   {"evidence_failure", in.evidence_failure},
                   {"run_output", in.run_output}};
  if (in.program)
    j["program"] = {{"seconds", in.program->seconds},     {"exit_code", in.program->exit_code},
                    {"timed_out", in.program->timed_out}, {"limit_seconds", in.program->limit_seconds},
                    {"limit_hit", in.program->limit_hit}, {"limit_text", in.program->limit_text}};
  if (in.sandbox)
    j["sandbox"] = {{"containment", in.sandbox->containment},
                    {"trusted", in.sandbox->trusted},
                    {"description", in.sandbox->description},
                    {"details", in.sandbox->details}};
  if (!in.conformance_command.empty())
    j["conformance"] = {
        {"command", in.conformance_command},
        {"traces", in.conformance_traces},
        {"seed", in.conformance_seed},
        {"refused", in.conformance_refused.first.empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json{{"rule", in.conformance_refused.first},
                                                                          {"message", in.conformance_refused.second}}}};
  return j;
}

Result<GradeInputs> inputs_of(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || string_at(j, "format") != kFormat)
    return Error{name + ": format: expected \"" + std::string(kFormat) + "\" (kept by cb-grade --batch --reports)"};
  GradeInputs in;
  try {
    in.student = string_at(j, "student");
    if (j.contains("settings") && j["settings"].is_object()) in.numbers = j["settings"].dump();
    if (j.contains("expected_epoch") && !j["expected_epoch"].is_null())
      in.expected_epoch = j["expected_epoch"].get<std::uint64_t>();
    in.record_private = j.value("record_private", false);
    in.foreign_connections = j.value("foreign_connections", std::size_t{0});
    in.server = string_at(j, "server");
    in.no_record_reason = string_at(j, "no_record_reason");
    in.evidence_failure = string_at(j, "evidence_failure");
    in.run_output = string_at(j, "run_output");
    if (const auto p = j.find("program"); p != j.end() && p->is_object())
      in.program = ProgramRun{p->at("seconds").get<double>(),        p->at("exit_code").get<int>(),
                              p->at("timed_out").get<bool>(),        p->at("limit_seconds").get<double>(),
                              p->at("limit_hit").get<std::string>(), p->at("limit_text").get<std::string>()};
    if (const auto s = j.find("sandbox"); s != j.end() && s->is_object())
      in.sandbox = SandboxInfo{s->at("containment").get<std::string>(), s->at("trusted").get<bool>(),
                               s->at("description").get<std::string>(), s->at("details")};
    if (const auto c = j.find("conformance"); c != j.end() && c->is_object()) {
      in.conformance_command = c->at("command").get<std::string>();
      in.conformance_traces = c->at("traces").get<int>();
      in.conformance_seed = c->at("seed").get<std::uint64_t>();
      if (const auto r = c->find("refused"); r != c->end() && r->is_object())
        in.conformance_refused = {r->at("rule").get<std::string>(), r->at("message").get<std::string>()};
    }
  } catch (const nlohmann::json::exception& e) {
    // at(): "[json.exception.out_of_range.403] key 'seconds' not found"; get(): a type error.
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    return Error{name + ": " + what};
  }
  return in;
}

Result<nlohmann::json> read_json(const std::string& path, const char* what) {
  auto text = read_bounded_file(path, kMaxKept, what);
  if (!text) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Error{path + ": not JSON"};
  return j;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

Result<void> write_reports(const DirHandle& dir, const Report& report) {
  for (const auto& [name, format] : {std::pair{"report.json", Format::Json}, std::pair{"report.txt", Format::Text},
                                     std::pair{"report.html", Format::Html}})
    if (auto w = dir.write(name, render(report, format, false)); !w) return w.error();
  return {};
}

Result<void> write_reports(const std::string& dir, const Report& report) {
  auto held = DirHandle::open(dir);
  if (!held) return held.error();
  return write_reports(*held, report);
}

Result<void> keep_grade(const std::string& dir, const Report& report, const GradeInputs& inputs,
                        const std::optional<Record>& record, const SubmissionDir* files_from,
                        const conformance::AnswerLog* answers, const LabSpec& spec) {
  auto files = DirHandle::open(dir + "/files", true);
  if (!files) return files.error();
  if (files_from != nullptr)
    if (auto copied = copy_lab_files(*files_from, *files, spec); !copied) return copied.error();
  if (record)
    if (auto w = write_file_atomically(dir + "/record.json", to_json(*record)); !w) return w.error();
  if (answers != nullptr && report.conformance) {
    const nlohmann::json c{{"format", "cb-grade conformance 1"},
                           {"command", report.conformance->command},
                           {"seed", report.conformance->seed},
                           {"traces", report.conformance->traces},
                           {"verdict", conformance_json(*report.conformance)},
                           {"answers", answers->to_json()}};
    if (auto w = write_file_atomically(dir + "/conformance.json",
                                       c.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        !w)
      return w.error();
  }
  const std::string grading = inputs_json(inputs).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (auto w = write_file_atomically(dir + "/grading.json", grading); !w) return w.error();
  // The reports last: a folder with a report.json is a whole one.
  return write_reports(dir, report);
}

Result<void> keep_ungraded(const std::string& dir, const BatchRow& row) {
  if (auto made = make_directories(dir); !made) return made.error();
  const nlohmann::json j{{"format", kFormat}, {"status", to_string(row.status)}, {"error", row.error}};
  return write_file_atomically(dir + "/grading.json", j.dump(2) + "\n");
}

Result<KeptGrade> read_kept_grade(const std::string& dir) {
  KeptGrade kept;
  kept.dir = dir;
  auto grading = read_json(dir + "/grading.json", "grading");
  if (!grading) return grading.error();
  if (const std::string status = string_at(*grading, "status"); !status.empty() && status != "graded") {
    if (status != "empty" && status != "error")
      return Error{dir + "/grading.json: status: expected graded, empty or error"};
    kept.status = status == "empty" ? RowStatus::Empty : RowStatus::Error;
    kept.error = string_at(*grading, "error");
    return kept;
  }
  auto inputs = inputs_of(*grading, dir + "/grading.json");
  if (!inputs) return inputs.error();
  kept.inputs = std::move(*inputs);
  auto report = read_json(dir + "/report.json", "report");
  if (!report) return report.error();
  kept.report = std::move(*report);
  if (exists(dir + "/record.json")) {
    auto text = read_bounded_file(dir + "/record.json", kMaxKept, "record");
    if (!text) return text.error();
    auto record = parse_record(*text);
    if (!record) return Error{dir + "/record.json: " + record.error().message};
    kept.record = std::move(*record);
  }
  if (!kept.inputs.conformance_command.empty()) {
    auto c = read_json(dir + "/conformance.json", "conformance");
    if (!c) return c.error();
    if (!c->is_object() || !c->contains("answers"))
      return Error{dir + "/conformance.json: answers: expected the program's answers"};
    auto log = conformance::AnswerLog::from_json((*c)["answers"], dir + "/conformance.json: answers");
    if (!log) return log.error();
    kept.answers.emplace(*log);
  }
  return kept;
}

}  // namespace cb::grade

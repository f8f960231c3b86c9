#include "cb/grade/class_reports.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/grade/format.h"
#include "cb/grade/run_student.h"
#include "cb/grade/format_common.h"
#include "cb/hmac_sha256.h"

namespace cb::grade {
namespace {

constexpr const char* kFormat = "cb-grade kept grade 1";
// The largest of these is the record (3 MiB for a full server, see single_command.cpp) and conformance
// answers (about 60 KiB for 200 traces); the limits only stop a file that is not ours.
constexpr std::size_t kMaxKept = 64 << 20;

nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

std::string string_at(const nlohmann::json& j, const char* key) {
  const auto v = j.find(key);
  return v != j.end() && v->is_string() ? v->get<std::string>() : std::string();
}

nlohmann::json inputs_json(const Evidence& in) {
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
  if (const auto& c = in.conformance)
    j["conformance"] = {{"command", c->traces.command},
                        {"traces", c->traces.count},
                        {"seed", c->traces.seed},
                        {"trace_generation", c->traces.generation},
                        {"refused", c->refused.first.empty() ? nlohmann::json(nullptr)
                                                             : nlohmann::json{{"rule", c->refused.first},
                                                                              {"message", c->refused.second},
                                                                              {"judged", c->judged}}},
                        {"shrink_cut", c->shrink_cut},
                        {"time_limit_ms", c->time_limit.count()},
                        {"jobs", c->jobs},
                        {"cuts", c->cuts ? nlohmann::json{{"part", c->cuts->part},
                                                          {"experiments", c->cuts->experiments},
                                                          {"shrinking", c->cuts->shrinking}}
                                         : nlohmann::json(nullptr)},
                        {"seconds", c->seconds}};
  return j;
}

// `in`: the kept conformance answers, if any, go into its conformance part.
Result<void> inputs_of(const nlohmann::json& j, const std::string& name, Evidence& in,
                       std::optional<conformance::AnswerLog> answers) {
  if (!j.is_object() || string_at(j, "format") != kFormat)
    return Error{name + ": format: expected \"" + std::string(kFormat) + "\" (kept by cb-grade --batch --reports)"};
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
    if (const auto g = j.find("grader_failures"); g != j.end() && g->is_array())
      for (const nlohmann::json& why : *g) in.grader_failures.push_back(why.get<std::string>());
    if (const auto p = j.find("program"); p != j.end() && p->is_object())
      in.program = ProgramRun{p->at("seconds").get<double>(),        p->at("exit_code").get<int>(),
                              p->at("timed_out").get<bool>(),        p->at("limit_seconds").get<double>(),
                              p->at("limit_hit").get<std::string>(), p->at("limit_text").get<std::string>()};
    if (const auto s = j.find("sandbox"); s != j.end() && s->is_object())
      in.sandbox = SandboxInfo{s->at("containment").get<std::string>(), s->at("trusted").get<bool>(),
                               s->at("description").get<std::string>(), s->at("details")};
    if (const auto c = j.find("conformance"); c != j.end() && c->is_object()) {
      if (!answers) return Error{name + ": conformance: its answers (conformance.json) are not kept"};
      ConformanceEvidence& kept = in.conformance.emplace();
      kept.traces.command = c->at("command").get<std::string>();
      kept.traces.count = c->at("traces").get<int>();
      kept.traces.seed = c->at("seed").get<std::uint64_t>();
      kept.traces.generation = std::clamp(c->value("trace_generation", 1), 1, kTraceGeneration);
      kept.answers = *answers;
      kept.shrink_cut = c->value("shrink_cut", false);
      kept.time_limit = std::chrono::milliseconds{c->value("time_limit_ms", std::int64_t{0})};
      kept.jobs = std::clamp(c->value("jobs", 1), 1, 1024);
      if (const auto cuts = c->find("cuts"); cuts != c->end() && cuts->is_object())
        kept.cuts = conformance::TimeCuts{cuts->at("part").get<int>(), cuts->at("experiments").get<int>(),
                                          cuts->at("shrinking").get<int>()};
      kept.seconds = c->value("seconds", 0.0);
      if (const auto r = c->find("refused"); r != c->end() && r->is_object()) {
        kept.refused = {r->at("rule").get<std::string>(), r->at("message").get<std::string>()};
        kept.judged = r->value("judged", -1);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    // at(): "[json.exception.out_of_range.403] key 'seconds' not found"; get(): a type error.
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    return Error{name + ": " + what};
  }
  return {};
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

Result<std::string> evidence_sha256(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> lines;  // path, SHA-256 of its bytes
  const auto add = [&](const std::string& relative) -> Result<void> {
    const std::string path = dir + "/" + relative;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(path, ec);
    if (ec || !fs::exists(st)) return {};
    if (fs::is_symlink(st)) {
      lines.emplace_back(relative, "link " + hex(sha256(fs::read_symlink(path, ec).string())));
      return {};
    }
    if (!fs::is_regular_file(st)) return {};
    auto bytes = read_bounded_file(path, kMaxKept, "evidence");
    if (!bytes) return bytes.error();
    lines.emplace_back(relative, hex(sha256(*bytes)));
    return {};
  };
  for (const char* name : {"grading.json", "record.json", "conformance.json"})
    if (auto added = add(name); !added) return added.error();
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir + "/files", ec), end; !ec && it != end; it.increment(ec))
    if (auto added = add(fs::relative(it->path(), dir).string()); !added) return added.error();
  std::sort(lines.begin(), lines.end());
  std::string listing;
  for (const auto& [path, digest] : lines) listing += path + "\t" + digest + "\n";
  return hex(sha256(listing));
}

Result<void> keep_grade(const std::string& dir, Report& report, const Evidence& evidence, const LabSpec& spec,
                        const nlohmann::json& stamp) {
  auto files = DirHandle::open(dir + "/files", true);
  if (!files) return files.error();
  if (evidence.files)
    if (auto copied = copy_lab_files(*evidence.files, *files, spec); !copied) return copied.error();
  if (evidence.record)
    if (auto w = write_file_atomically(dir + "/record.json", to_json(*evidence.record)); !w) return w.error();
  if (evidence.conformance && report.conformance) {
    const nlohmann::json c{{"format", "cb-grade conformance 1"},
                           {"command", report.conformance->traces.command},
                           {"seed", report.conformance->traces.seed},
                           {"traces", report.conformance->traces.count},
                           {"verdict", conformance_json(*report.conformance)},
                           {"answers", evidence.conformance->answers.to_json()}};
    if (auto w = write_file_atomically(dir + "/conformance.json",
                                       c.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        !w)
      return w.error();
  }
  nlohmann::json inputs = inputs_json(evidence);
  if (!evidence.grader_failures.empty()) inputs["grader_failures"] = evidence.grader_failures;
  if (!stamp.is_null()) inputs["batch"] = stamp;
  // Where the numbers came from ("the course key and the student's folder"): the report says it,
  // so a regrade, a merge or a collect says it too.
  if (!spec.numbers_from.empty()) inputs["numbers_from"] = spec.numbers_from;
  const std::string grading = inputs.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (auto w = write_file_atomically(dir + "/grading.json", grading); !w) return w.error();
  auto digest = evidence_sha256(dir);
  if (!digest) return digest.error();
  report.evidence_sha256 = *digest;
  // The reports last: a folder with a report.json is a whole one.
  return write_reports(dir, report);
}

Result<void> keep_ungraded(const std::string& dir, const BatchRow& row) {
  if (auto made = make_directories(dir); !made) return made.error();
  nlohmann::json j{{"format", kFormat},
                   {"status", to_string(row.status)},
                   {"error", row.error},
                   {"with_conformance", row.with_conformance}};
  if (!row.student.empty()) j["student"] = row.student;  // a roster's student with an empty folder: the row says who
  if (row.fault != Fault::None) j["fault"] = to_string(row.fault);
  return write_file_atomically(dir + "/grading.json", j.dump(2) + "\n");
}

GradeOptions as_kept(GradeOptions grade, const nlohmann::json& stamp) {
  if (!stamp.is_object() || !stamp.contains("conformance") || !stamp["conformance"].is_object()) return grade;
  const nlohmann::json& c = stamp["conformance"];
  if (grade.rubric.seed && c.contains("seed") && c["seed"].is_number_unsigned())
    grade.rubric.seed = c["seed"].get<std::uint64_t>();
  if (grade.rubric.traces && c.contains("traces") && c["traces"].is_number_integer())
    grade.rubric.traces = c["traces"].get<int>();
  return grade;
}

std::optional<nlohmann::json> kept_batch_stamp(const std::string& dir) {
  auto grading = read_bounded_file(dir + "/grading.json", 1 << 20, "grading");
  if (!grading || !exists(dir + "/report.json")) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*grading, nullptr, false);
  if (!j.is_object() || j.value("status", "graded") != "graded" || !j.contains("batch") || !j["batch"].is_object())
    return std::nullopt;
  return std::move(j["batch"]);
}

Result<KeptGrade> read_kept_grade(const std::string& dir) {
  KeptGrade kept;
  kept.dir = dir;
  auto grading = read_json(dir + "/grading.json", "grading");
  if (!grading) return grading.error();
  if (const std::string status = string_at(*grading, "status"); !status.empty() && status != "graded") {
    static constexpr std::array kUngraded{RowStatus::Empty, RowStatus::Error, RowStatus::NotGraded,
                                          RowStatus::Superseded, RowStatus::NoSubmission};
    const auto known =
        std::find_if(kUngraded.begin(), kUngraded.end(), [&status](RowStatus s) { return status == to_string(s); });
    if (known == kUngraded.end())
      return Error{dir +
                   "/grading.json: status: expected graded, empty, error, not_graded, superseded or "
                   "no_submission"};
    kept.status = *known;
    kept.error = string_at(*grading, "error");
    kept.evidence.student = string_at(*grading, "student");
    kept.fault = fault_from(string_at(*grading, "fault"));
    kept.with_conformance = grading->value("with_conformance", false);
    return kept;
  }
  std::optional<conformance::AnswerLog> answers;
  if (const auto c = grading->find("conformance"); c != grading->end() && c->is_object()) {
    auto conf = read_json(dir + "/conformance.json", "conformance");
    if (!conf) return conf.error();
    if (!conf->is_object() || !conf->contains("answers"))
      return Error{dir + "/conformance.json: answers: expected the program's answers"};
    auto log = conformance::AnswerLog::from_json((*conf)["answers"], dir + "/conformance.json: answers");
    if (!log) return log.error();
    answers.emplace(*log);
  }
  if (auto in = inputs_of(*grading, dir + "/grading.json", kept.evidence, std::move(answers)); !in) return in.error();
  kept.numbers_from = string_at(*grading, "numbers_from");
  auto report = read_json(dir + "/report.json", "report");
  if (!report) return report.error();
  kept.report = std::move(*report);
  // A kept grade from before the program's time was kept with its answers: the report's.
  if (kept.evidence.conformance && kept.evidence.conformance->seconds == 0 && kept.report.contains("conformance") &&
      kept.report["conformance"].is_object())
    kept.evidence.conformance->seconds = kept.report["conformance"].value("seconds", 0.0);
  if (exists(dir + "/record.json")) {
    auto text = read_bounded_file(dir + "/record.json", kMaxKept, "record");
    if (!text) return text.error();
    auto record = parse_record(*text);
    if (!record) return Error{dir + "/record.json: " + record.error().message};
    kept.evidence.record = std::move(*record);
  }
  return kept;
}

}  // namespace cb::grade

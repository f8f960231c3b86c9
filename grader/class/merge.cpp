#include "cb/grade/merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "cb/atomic_file.h"
#include "cb/bounded_file.h"
#include "cb/grade/class_reports.h"
#include "cb/grade/regrade.h"
#include "cb/grade/shard.h"
#include "cb/hmac_sha256.h"
#include "parallel.h"

namespace cb::grade {
namespace {

// A manifest of 50,000 names is about 1.5 MB.
constexpr std::size_t kMaxShardFile = 32 << 20;

struct ShardKept {
  std::string dir;
  std::string class_name;
  std::size_t index = 0;
  std::size_t count = 0;
  std::string manifest_sha256;
  std::vector<std::string> manifest;
  nlohmann::json stamp;
};

Result<ShardKept> read_shard(const std::string& dir) {
  const std::string path = dir + "/shard.json";
  auto text = read_bounded_file(path, kMaxShardFile, "shard");
  if (!text) return Error{text.error().message + " (a --reports folder of --batch --shard I/N)"};
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("format", "") != kShardFormat)
    return Error{path + ": format: expected \"" + std::string(kShardFormat) + "\""};
  ShardKept s;
  s.dir = dir;
  const auto field = [&](const char* name, bool ok) -> Result<void> {
    if (!j.contains(name) || !ok) return Error{path + ": " + name + ": missing or of the wrong type"};
    return {};
  };
  for (const auto& [name, ok] :
       {std::pair{"class", j.contains("class") && j["class"].is_string()},
        std::pair{"index", j.contains("index") && j["index"].is_number_unsigned()},
        std::pair{"count", j.contains("count") && j["count"].is_number_unsigned()},
        std::pair{"manifest_sha256", j.contains("manifest_sha256") && j["manifest_sha256"].is_string()},
        std::pair{"manifest", j.contains("manifest") && j["manifest"].is_array()},
        std::pair{"stamp", j.contains("stamp") && j["stamp"].is_object()}})
    if (auto f = field(name, ok); !f) return f.error();
  s.class_name = j["class"].get<std::string>();
  s.index = j["index"].get<std::size_t>();
  s.count = j["count"].get<std::size_t>();
  s.manifest_sha256 = j["manifest_sha256"].get<std::string>();
  for (const auto& name : j["manifest"]) {
    if (!name.is_string() || name.get_ref<const std::string&>().empty() ||
        name.get_ref<const std::string&>().find('/') != std::string::npos ||
        name.get_ref<const std::string&>()[0] == '.')
      return Error{path + ": manifest: expected the names of the class's folders"};
    s.manifest.push_back(name.get<std::string>());
  }
  if (s.count == 0 || s.index >= s.count) return Error{path + ": index: expected 0 to count-1"};
  if (manifest_sha256(s.manifest) != s.manifest_sha256)
    return Error{path + ": manifest_sha256: not the SHA-256 of its manifest (the file was edited)"};
  s.stamp = j["stamp"];
  return s;
}

Result<void> same_class(const std::vector<ShardKept>& shards, const GradeOptions& grade) {
  const ShardKept& first = shards.front();
  for (const ShardKept& s : shards) {
    if (s.manifest_sha256 != first.manifest_sha256)
      return Error{s.dir + " and " + first.dir + " are shards of different classes (their manifests differ: " +
                   std::to_string(s.manifest.size()) + " and " + std::to_string(first.manifest.size()) +
                   " submissions); every shard must list the same root"};
    if (s.count != first.count)
      return Error{s.dir + " is a shard of " + std::to_string(s.count) + ", " + first.dir + " of " +
                   std::to_string(first.count)};
    if (s.stamp != first.stamp)
      return Error{s.dir + " and " + first.dir + " were graded differently (" + differing_keys(s.stamp, first.stamp) +
                   "): every shard must run the same grader, lab, rubric and traces"};
  }
  if (first.stamp.value("rubric_sha256", "") != grade.rubric.sha256)
    return Error{"the shards were graded with another rubric (SHA-256 " + first.stamp.value("rubric_sha256", "") +
                 "): give merge the --rubric they were given"};
  return {};
}

// A kept grade of NAME in a shard: whole (a report, the class's stamp) or not graded for a reason
// of its own (empty, error).
struct Candidate {
  const ShardKept* shard = nullptr;
  bool whole = false;
  std::string sha256;  // of report.json when whole, else of grading.json: what picks among twins
  nlohmann::json verdicts;
};

bool is_folder(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The steps' and the conformance part's statuses of a kept report.json: what twins must agree on.
nlohmann::json verdicts_of(const std::string& report_text) {
  const nlohmann::json r = nlohmann::json::parse(report_text, nullptr, false);
  nlohmann::json v = nlohmann::json::array();
  if (!r.is_object()) return v;
  for (const auto& s : r.value("steps", nlohmann::json::array()))
    if (s.is_object()) v.push_back({s.value("step", 0), s.value("status", "")});
  if (r.contains("conformance") && r["conformance"].is_object())
    v.push_back({"C", r["conformance"].value("status", ""), r["conformance"].value("rule", "")});
  return v;
}

std::optional<Candidate> candidate(const ShardKept& shard, const std::string& name) {
  const std::string dir = shard.dir + "/" + name;
  if (!is_folder(dir)) return std::nullopt;
  Candidate c;
  c.shard = &shard;
  if (auto stamp = kept_batch_stamp(dir)) {
    // What is each submission's own (its numbers, its folder's digest) is not the class's.
    stamp->erase("numbers");
    stamp->erase("submission_sha256");
    if (*stamp != shard.stamp) return std::nullopt;  // left by another batch in the same folder
    auto report = read_bounded_file(dir + "/report.json", 64 << 20, "report");
    if (!report) return std::nullopt;
    c.whole = true;
    c.sha256 = hex(sha256(*report));
    c.verdicts = verdicts_of(*report);
    return c;
  }
  auto grading = read_bounded_file(dir + "/grading.json", 1 << 20, "grading");
  if (!grading) return std::nullopt;
  const nlohmann::json g = nlohmann::json::parse(*grading, nullptr, false);
  const std::string status = g.is_object() ? g.value("status", "") : "";
  if (status != "empty" && status != "error" && status != "superseded" && status != "no_submission")
    return std::nullopt;  // not graded: the shard stopped first
  c.sha256 = hex(sha256(*grading));
  return c;
}

// The fixed rule: a whole grade over one that is not, then the smaller SHA-256.
const Candidate* pick(const std::vector<Candidate>& cs) {
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.whole != b.whole ? a.whole : a.sha256 < b.sha256;
  };
  const auto it = std::min_element(cs.begin(), cs.end(), better);
  return it == cs.end() ? nullptr : &*it;
}

Result<void> copy_folder(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy(from, to,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks, ec);
  if (ec) return Error{"copying " + from + " to " + to + ": " + ec.message()};
  return {};
}

}  // namespace

std::string differing_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::string out;
  for (const auto& [key, value] : a.items())
    if (!b.contains(key) || b[key] != value) out += (out.empty() ? "" : ", ") + key;
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) out += (out.empty() ? "" : ", ") + key;
  return out;
}

Result<Merged> merge_shards(const MergeOptions& o) {
  if (o.shards.empty()) return Error{"no shard given"};
  std::vector<ShardKept> shards;
  for (const std::string& dir : o.shards) {
    auto s = read_shard(dir);
    if (!s) return s.error();
    shards.push_back(std::move(*s));
  }
  if (auto same = same_class(shards, o.grade); !same) return same.error();
  if (auto made = make_directories(o.out); !made) return made.error();
  if (auto held = submission_folders(o.out); !held || !held->empty())
    return Error{o.out + ": " +
                 (held ? "holds graded submissions already: merge into a new folder" : held.error().message)};
  const ShardKept& first = shards.front();
  const GradeOptions grade = as_kept(o.grade, first.stamp);
  const bool with_conformance = first.stamp.contains("conformance");
  Merged m;
  m.class_name = first.class_name;
  m.rows.resize(first.manifest.size());
  std::vector<std::string> notes(first.manifest.size());
  for_each_submission(first.manifest.size(), o.jobs,
                      [&](std::size_t i) {
                        const std::string& name = first.manifest[i];
                        std::vector<Candidate> found;
                        std::string where;
                        for (const ShardKept& s : shards) {
                          if (!Shard{s.index, s.count}.takes(i)) continue;
                          if (auto c = candidate(s, name)) {
                            found.push_back(std::move(*c));
                            where += (where.empty() ? "" : " and ") + s.dir;
                          }
                        }
                        BatchRow& row = m.rows[i];
                        row.submission = name;
                        const Candidate* chosen = pick(found);
                        if (chosen == nullptr) {
                          row.status = RowStatus::NotGraded;
                          row.with_conformance = with_conformance;
                          row.max_score = grade.rubric.max_score(with_conformance);
                          row.error = "no shard given graded it (shard " + std::to_string(i % first.count) + " of " +
                                      std::to_string(first.count) + ")";
                          if (auto kept = keep_ungraded(o.out + "/" + name, row); !kept)
                            row.error += "; keeping it: " + kept.error().message;
                          return;
                        }
                        if (found.size() > 1) {
                          notes[i] =
                              name + ": graded by " + where + " (a shard run twice); kept " + chosen->shard->dir + "'s";
                          for (const Candidate& c : found)
                            if (c.verdicts != chosen->verdicts) {
                              notes[i] += ": their verdicts differ (nondeterministic)";
                              break;
                            }
                        }
                        if (auto copied = copy_folder(chosen->shard->dir + "/" + name, o.out + "/" + name); !copied) {
                          row.status = RowStatus::Error;
                          row.error = copied.error().message;
                          return;
                        }
                        row = regrade_submission(o.out, name, grade);
                        if (row.verdict_changed)
                          notes[i] += (notes[i].empty() ? name + ": " : "; ") +
                                      std::string("judged again here, a verdict changed (") + row.changes + ")";
                        row.regraded = false;
                        row.changes.clear();
                        row.verdict_changed = false;
                      },
                      {});
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    if (m.rows[i].status == RowStatus::NotGraded) m.missing.push_back(m.rows[i].submission);
    if (!notes[i].empty()) m.notes.push_back(notes[i]);
  }
  return m;
}

}  // namespace cb::grade

#include <algorithm>
#include <filesystem>
#include <map>

#include "cb/atomic_file.h"
#include "cb/grade/class_reports.h"
#include "cb/grade/handed_in.h"
#include "cb/grade/queue.h"
#include "cb/grade/regrade.h"
#include "cb/hmac_sha256.h"
#include "queue_store.h"

namespace cb::grade {
namespace {

struct Job {
  std::string state, result, verdict, nondeterministic, last_error, content, kind, student;
};

Result<Job> read_job(queue::QueueStore& store, const std::string& id) {
  auto r = store.command({"HMGET", store.prefix() + ":job:" + id, "state", "result", "verdict", "nondeterministic",
                          "last_error", "content", "kind", "student"});
  if (!r) return r.error();
  if (r->elements.size() != 8) return Error{"redis: HMGET: an answer of another shape"};
  Job j;
  std::string* fields[] = {&j.state,      &j.result,  &j.verdict, &j.nondeterministic,
                           &j.last_error, &j.content, &j.kind,    &j.student};
  for (std::size_t i = 0; i < 8; ++i) *fields[i] = r->elements[i].text;
  return j;
}

BatchRow not_graded(const std::string& name, const std::string& why, RowStatus status, bool with_conformance,
                    const GradeOptions& grade) {
  BatchRow row;
  row.submission = name;
  row.status = status;
  row.with_conformance = with_conformance;
  row.max_score = grade.rubric.max_score(with_conformance);
  row.error = why;
  return row;
}

// A job done: its reports and evidence written as the worker kept them, and its row judged from
// them as a merge judges a shard's (so the gradebook is the one --regrade would give).
BatchRow collect_done(queue::QueueStore& store, const std::string& reports, const std::string& name, const Job& job,
                      const GradeOptions& grade) {
  const std::string dir = reports + "/" + name;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  auto entries = FolderBytes::parse_listing(job.result);
  if (entries)
    if (auto w = write_folder(dir, *entries, [&](const std::string& sha) { return store.blob(sha); }); !w)
      entries = Error{w.error().message};
  if (!entries)
    return not_graded(name, "collecting its reports: " + entries.error().message, RowStatus::Error, false, grade);
  BatchRow row = regrade_submission(reports, name, grade);
  row.regraded = false;
  row.changes.clear();
  row.verdict_changed = false;
  return row;
}

// A row that is not a grade, kept in REPORTS/NAME in place of whatever an earlier collect left.
void keep_afresh(const std::string& reports, BatchRow& row) {
  const std::string dir = reports + "/" + row.submission;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (auto k = keep_ungraded(dir, row); !k) row.error += "; keeping it: " + k.error().message;
}

// The rows of folders whose student handed in again later: each folder's newest job, where it is
// not its student's current one, says which folder is graded instead.
Result<void> collect_superseded(queue::QueueStore& store, const CollectOptions& o, const GradeOptions& grade,
                                bool with_conformance, const std::map<std::string, std::string>& current,
                                Collected& c) {
  auto folders = store.command({"HGETALL", store.prefix() + ":folders"});
  if (!folders) return folders.error();
  for (std::size_t i = 0; i + 1 < folders->elements.size(); i += 2) {
    const std::string& name = folders->elements[i].text;
    if (current.contains(name)) continue;
    const std::string job = "job:" + folders->elements[i + 1].text;
    auto f = store.command({"HMGET", store.prefix() + ":" + job, "state", "student", "handed_in", "superseded_by"});
    if (!f) return f.error();
    // Superseded whatever its state: a job done before the student handed in again is so too.
    if (f->elements.size() != 4 || f->elements[3].text.empty()) continue;
    auto g = store.command({"HMGET", store.prefix() + ":job:" + f->elements[3].text, "name", "student", "handed_in"});
    if (!g) return g.error();
    if (g->elements.size() != 3 || g->elements[0].text == name) continue;  // its own newer push
    const HandIn older{name, f->elements[1].text, hand_in_key_time(f->elements[2].text)};
    const HandIn newer{g->elements[0].text, g->elements[1].text, hand_in_key_time(g->elements[2].text)};
    BatchRow row = not_graded(name, superseded_why(older, newer), RowStatus::Superseded, with_conformance, grade);
    row.student = older.student;
    keep_afresh(o.reports, row);
    c.rows.push_back(std::move(row));
  }
  std::sort(c.rows.begin(), c.rows.end(),
            [](const BatchRow& a, const BatchRow& b) { return a.submission < b.submission; });
  return {};
}

}  // namespace

Result<Collected> collect_queue(const CollectOptions& o) {
  auto address = parse_redis_address(o.queue.redis);
  if (!address) return Error{"--redis: " + address.error().message};
  queue::QueueStore store(*address, o.queue.name);
  auto kept = store.stamp();
  if (!kept) return kept.error();
  const nlohmann::json& stamp = *kept;
  if (stamp.value("rubric_sha256", "") != o.grade.rubric.sha256)
    return Error{"the queue grades with another rubric (SHA-256 " + stamp.value("rubric_sha256", "") +
                 "): give collect the --rubric its push was given"};
  const GradeOptions grade = as_kept(o.grade, stamp);
  const bool with_conformance = stamp.contains("conformance");
  if (auto made = make_directories(o.reports); !made) return made.error();
  auto subs = store.command({"HGETALL", store.prefix() + ":sub"});
  if (!subs) return subs.error();
  // Each student's current job, by the folder it was pushed as: the class's rows.
  std::map<std::string, std::string> job_of;
  for (std::size_t i = 0; i + 1 < subs->elements.size(); i += 2) {
    const std::string& id = subs->elements[i + 1].text;
    auto folder = store.hget("job:" + id, "name");
    if (!folder) return folder.error();
    job_of[*folder ? **folder : subs->elements[i].text] = id;
  }
  Collected c;
  auto cls = store.hget("meta", "class");
  c.class_name = cls && *cls ? **cls : o.queue.name;
  std::map<std::string, std::vector<std::string>> by_content;
  for (const auto& [name, id] : job_of) {
    auto job = read_job(store, id);
    if (!job) return job.error();
    if (job->state == "done") {
      c.rows.push_back(collect_done(store, o.reports, name, *job, grade));
      if (!job->nondeterministic.empty())
        c.notes.push_back(name + ": graded again with another verdict (nondeterministic): first " + job->verdict +
                          ", then " + job->nondeterministic + "; the first is kept");
    } else if (job->state == "refused") {
      // What was handed in could not be taken as it is: the folder's, as a batch says it; or a
      // roster's student handed in nothing.
      const bool absent = job->kind == to_string(RowStatus::NoSubmission);
      BatchRow row = not_graded(name, job->last_error, absent ? RowStatus::NoSubmission : RowStatus::Error,
                                with_conformance, grade);
      if (absent)
        row.student = job->student;
      else
        row.fault = Fault::Program;
      keep_afresh(o.reports, row);
      c.rows.push_back(std::move(row));
    } else {
      const bool dead = job->state == "dead";
      BatchRow row =
          dead ? not_graded(name, "infrastructure: " + job->last_error, RowStatus::Error, with_conformance, grade)
               : not_graded(name, "not graded yet (" + job->state + ")", RowStatus::NotGraded, with_conformance, grade);
      keep_afresh(o.reports, row);
      if (dead) c.notes.push_back(name + ": dead-lettered: " + job->last_error);
      if (!dead) c.missing.push_back(name);
      c.rows.push_back(std::move(row));
    }
    by_content[job->content].push_back(name);
  }
  if (auto s = collect_superseded(store, o, grade, with_conformance, job_of, c); !s) return s.error();
  for (const auto& [content, names] : by_content)
    if (names.size() > 1 && content != FolderBytes{}.sha256()) {  // empty folders are alike
      std::string all;
      for (std::size_t i = 0; i < names.size() && i < 5; ++i) all += (i == 0 ? "" : ", ") + names[i];
      if (names.size() > 5) all += " and " + std::to_string(names.size() - 5) + " more";
      c.notes.push_back("the same bytes were handed in by " + std::to_string(names.size()) + ": " + all);
    }
  return c;
}

}  // namespace cb::grade

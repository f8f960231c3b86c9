#include <algorithm>
#include <set>

#include "cb/redis_link.h"
#include "cb/grade/handed_in.h"
#include "cb/grade/merge.h"
#include "cb/grade/queue.h"
#include "cb/hmac_sha256.h"
#include "queue_store.h"

namespace cb::grade {
namespace {

// Whose submission a folder is: the roster's student, or the folder's own name.
Result<std::string> student_of(const BatchOptions& o, const std::string& name) {
  const auto named = o.roster.find(name);
  if (named != o.roster.end()) return named->second;
  if (o.roster_only) return Error{"the roster names no student for this folder"};
  return name;
}

// "NAME: handed in before NEWER, which is graded": a folder the queue keeps as superseded.
std::string handed_in_before(const std::string& name, const std::string& newer) {
  return name + ": handed in before " + newer + ", which is graded (the last a student hands in is)";
}

// The queue's stamp as Redis keeps it, told apart from this push's for a person.
std::string stamp_refusal(const std::string& kept, const std::string& ours) {
  const nlohmann::json a = nlohmann::json::parse(kept, nullptr, false);
  const nlohmann::json b = nlohmann::json::parse(ours, nullptr, false);
  return "the queue was pushed to with another grading (" + differing_keys(a, b) +
         "); push to a queue of another --queue name, or with the same grader, rubric and flags";
}

}  // namespace

Result<Pushed> push_class(const PushOptions& o) {
  if (o.lane != "bulk" && o.lane != "interactive") return Error{"--lane: expected interactive or bulk, got " + o.lane};
  auto address = parse_redis_address(o.queue.redis);
  if (!address) return Error{"--redis: " + address.error().message};
  auto names = submission_folders(o.batch.root);
  if (!names) return names.error();
  Pushed out;
  std::set<std::string> queued_now;  // the folders this push queued
  queue::QueueStore store(*address, o.queue.name);
  const std::string stamp = queue::grading_stamp(o.batch).dump();
  const std::string stamp_sha = hex(sha256(stamp));
  // Not queued, and said so twice: on the push's output, and as the folder's row in the gradebook
  // (a job that is never delivered); keyed by its student where one is known.
  const auto refuse = [&](const std::string& name, const std::string& student, const std::string& why,
                          const std::string& handed_in, const std::string& kind = {}) -> Result<void> {
    const std::string id = hex(sha256(name + "\nrefused\n" + why + "\n" + stamp_sha)).substr(0, 32);
    auto said =
        store.call("refuse", {name, id, student, why, stamp, o.queue.name, handed_in, student_key(student), kind});
    if (!said) return said.error();
    const std::string answer = said->elements.empty() ? "" : said->elements[0].text;
    if (answer == "stamp") return Error{stamp_refusal(said->elements[1].text, stamp)};
    if (answer == "older")
      out.older.push_back(handed_in_before(name, said->elements.size() > 1 ? said->elements[1].text : ""));
    else if (kind.empty())
      out.refused.push_back(name + ": " + why);
    else
      out.absent.push_back(name);
    return {};
  };
  // The roster's students who handed in nothing: a row each, as --batch gives them (its words).
  for (const auto& [name, student] : roster_without_folder(o.batch.roster, *names)) {
    const BatchRow row = no_submission_row(o.batch, name, student);
    if (auto r = refuse(name, student, row.error, "", to_string(RowStatus::NoSubmission)); !r) return r.error();
  }
  if (!o.manifest.empty()) {
    std::vector<std::string> listed;
    for (const std::string& name : o.manifest)
      if (std::binary_search(names->begin(), names->end(), name))
        listed.push_back(name);
      else  // no folder, no submission: said, and no row (a batch of the same root has none)
        out.refused.push_back(name + ": in the manifest, but " + o.batch.root + " holds no such folder");
    *names = std::move(listed);
  }
  for (const std::string& name : *names) {
    auto student = student_of(o.batch, name);
    if (!student) {
      if (auto r = refuse(name, "folder:" + name, student.error().message, ""); !r) return r.error();
      continue;
    }
    const std::string handed_in =
        hand_in_key(hand_in_of(o.batch.root, name, *student, o.batch.roster_handed_in).at, name);
    auto folder = read_folder(o.batch.root + "/" + name, o.limits);
    if (!folder) {
      if (auto r = refuse(name, *student, folder.error().message, handed_in); !r) return r.error();
      continue;
    }
    const std::string content = folder->sha256();
    // One job per student, bytes and grading: the same push again is the same job.
    const std::string id = hex(sha256(name + "\n" + *student + "\n" + content + "\n" + stamp_sha)).substr(0, 32);
    for (const auto& [sha, bytes] : folder->blobs)
      if (auto put = store.put_blob(sha, bytes); !put) return put.error();
    auto pushed = store.call("push", {name, id, *student, content, o.lane, stamp, o.queue.name, folder->listing(),
                                      handed_in, student_key(*student)});
    if (!pushed) return pushed.error();
    const std::string said = pushed->elements.empty() ? "" : pushed->elements[0].text;
    if (said == "stamp") return Error{stamp_refusal(pushed->elements[1].text, stamp)};
    if (said == "older")
      out.older.push_back(handed_in_before(name, pushed->elements.size() > 1 ? pushed->elements[1].text : ""));
    else
      (said == "new" ? out.queued : out.same) += 1;
    if (said == "new") queued_now.insert(name);
    if ((said == "new" || said == "known") && pushed->elements.size() > 1) {
      const std::string& dropped = pushed->elements[1].text;
      out.dropped.push_back(handed_in_before(dropped, name));
      // Queued by this very push and dropped again: it is counted as superseded, not queued.
      if (queued_now.erase(dropped) > 0) --out.queued;
    }
    if (o.resume) {
      auto repaired = store.call("repair", {id});
      if (!repaired) return repaired.error();
      if (repaired->text == "requeued") ++out.requeued;
      if (repaired->text == "revived") ++out.revived;
    }
    // Another student's copy is visible as such: each copy names the first folder (by name) that
    // holds the same bytes. Empty folders are all alike and say nothing.
    if (folder->entries.empty()) continue;
    auto sharing = store.command({"SMEMBERS", store.prefix() + ":content:" + content});
    if (!sharing) return sharing.error();
    std::string first = name;
    for (const RedisReply& r : sharing->elements) first = std::min(first, r.text);
    if (first != name) out.notes.push_back(name + ": the same bytes as " + first);
  }
  return out;
}

}  // namespace cb::grade

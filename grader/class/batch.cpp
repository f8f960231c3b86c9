#include "cb/grade/batch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "cb/grade/class_reports.h"
#include "cb/grade/gather.h"
#include "cb/grade/jobs.h"
#include "cb/grade/judge.h"
#include "cb/grade/provenance.h"
#include "cb/grade/regrade.h"
#include "cb/grade/variant.h"
#include "cb/bounded_file.h"
#include "cb/atomic_file.h"
#include "cb/dir_handle.h"
#include "cb/folder_digest.h"
#include "cb/sandbox/box.h"
#include "parallel.h"

namespace cb::grade {
namespace {

// A folder with nothing in it (hidden entries aside: a clone of an empty repository still has
// .git) was not handed in: its own status, not a program that failed every step.
// The names a folder shows (no hidden one), read as names only, nothing opened, and no more than
// `at_most` + 1 of them: one past the bound says there are more, without listing a folder of
// thousands. nullopt: not a folder that can be listed (graded, and named, further on).
std::optional<std::vector<std::string>> shown_names(const std::string& dir, std::size_t at_most) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') {
      names.emplace_back(e->d_name);
      if (names.size() > at_most) break;
    }
  ::closedir(d);
  return names;
}

constexpr std::size_t kArchivesNamed = 4;  // more names than this are a folder, not an upload of archives

std::string joined(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return all;
}

bool is_archive(const std::string& name) {
  for (const char* end : {".zip", ".tar", ".tar.gz", ".tgz", ".tar.xz", ".7z", ".rar"})
    if (name.size() > std::strlen(end) && name.compare(name.size() - std::strlen(end), std::string::npos, end) == 0)
      return true;
  return false;
}

// A student who uploaded their folder zipped: graded as it is, it failed on "cannot open run.sh",
// which says nothing of why. The grader does not unpack archives (a hostile one is a bomb or a
// path out of its folder); it names what to do.
std::string only_archives(const std::vector<std::string>& names) {
  if (names.empty() || names.size() > kArchivesNamed || !std::all_of(names.begin(), names.end(), is_archive)) return {};
  return "the folder holds only " + joined(names) +
         ", an archive; the grader does not unpack archives: unpack each submission into its own folder "
         "(unzip -d DIR FILE) and grade those folders";
}

// What a submission's grade depends on besides its folder: kept with it, so --resume grades again
// only what an earlier run graded otherwise (another grader, lab, numbers, rubric or traces).
nlohmann::json batch_stamp(const BatchOptions& o, const GradeOptions& options, const LabSpec& spec,
                           const nlohmann::json& shard) {
  nlohmann::json j{{"grader_version", std::string(grader_version())},
                   {"lab_spec_sha256", spec.sha256},
                   {"numbers", kit_settings_json(spec)},
                   {"rubric_sha256", options.rubric.sha256},
                   {"files_dir", o.files_dir},
                   {"run", o.run_command ? nlohmann::json(*o.run_command) : nlohmann::json(nullptr)},
                   {"timeout_ms", o.timeout.count()}};
  if (const auto& c = o.conformance)
    j["conformance"] = {{"command", c->traces.command},     {"traces", c->traces.count},
                        {"seed", c->traces.seed},           {"trace_limit_ms", c->trace_limit.count()},
                        {"warm_up_ms", c->warm_up.count()}, {"time_limit_ms", c->time_limit.count()}};
  // A shard's grades are of the same class as its sibling shards' (the same manifest, the same
  // split); which share it took is in shard.json.
  if (!shard.is_null()) j["shard"] = shard;
  return j;
}

// Whether DIR/NAME holds a whole grade of a batch stamped `stamp`.
bool kept_whole(const std::string& dir, const nlohmann::json& stamp) {
  const auto kept = kept_batch_stamp(dir);
  return kept && *kept == stamp;
}

// Where a submission is, below the root: NAME itself, or the one folder NAME holds when it holds
// nothing else (no file, no other folder; macOS's __MACOSX and hidden entries aside): a zip of a
// folder unpacks so, and Gradescope's run_autograder looks there by the same rule. Not when
// --batch-files names where the files are. Nothing is followed: a link is neither a file of it
// nor its folder.
std::string program_folder(const BatchOptions& o, const std::string& name) {
  if (o.files_dir != ".") return name;
  const std::string dir = o.root + "/" + name;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return name;
  std::string only;
  int folders = 0;
  int others = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    if (entry[0] == '.' || entry == "__MACOSX") continue;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
      ++folders;
      only = entry;
    } else {
      ++others;
    }
  }
  ::closedir(d);
  return others == 0 && folders == 1 ? name + "/" + only : name;
}

// The SHA-256 of what the submission's folder holds (cb/folder_digest.h), within the bounds its
// box would copy; nothing when it cannot be read whole.
std::optional<std::string> handed_in_digest(const std::string& root, const std::string& inside) {
  auto dir = open_handed_in(root, inside);
  if (!dir) return std::nullopt;
  DigestLimits bounds;
  bounds.walk.max_entries = sandbox::kMaxCopyEntries;
  bounds.max_bytes = sandbox::kMaxCopyBytes;
  auto digest = folder_digest(dir->fd(), dir->path(), bounds);
  if (!digest) return std::nullopt;
  return *digest;
}

// The folders of the class not graded because their student handed in again (handed_in.h): the
// whole class's, so that every shard of it rules alike. Only a student's several folders are dated.
std::map<std::string, Superseded> handed_in_twice(const BatchOptions& o, const std::vector<std::string>& folders) {
  std::map<std::string, std::vector<std::string>> by_student;
  for (const std::string& f : folders) {
    const auto named = o.roster.find(f);
    if (named == o.roster.end() && o.roster_only) continue;  // its row says the roster names nobody
    if (auto id = student_id(named == o.roster.end() ? f : named->second)) by_student[*id].push_back(f);
  }
  std::vector<HandIn> twice;
  for (const auto& [student, theirs] : by_student)
    if (theirs.size() > 1)
      for (const std::string& f : theirs) twice.push_back(hand_in_of(o.root, f, student, o.roster_handed_in));
  return superseded_folders(twice);
}

ClassNumbers class_numbers(const BatchOptions& o, const std::vector<std::string>& folders) {
  ClassNumbers out;
  if (o.course_key.empty()) return out;
  // By the id rule (student_id), as the queue keys its students: one name for one student.
  std::set<std::string> ids;
  for (const std::string& f : folders) {
    const auto named = o.roster.find(f);
    if (named == o.roster.end() && o.roster_only) continue;
    ids.insert(student_key(named != o.roster.end() ? named->second : f));
  }
  for (const std::string& id : ids)
    if (auto spec = variant_spec(o.grade.spec ? *o.grade.spec : lab_spec(), id, o.course_key))
      out.emplace_back(id, numbers_of(**spec));
  return out;
}

// s1.numbers failed: the students whose numbers show what the run showed (window and trials),
// named in its message. Whether it named anyone.
bool name_whose_numbers(Report& r, const std::string& raw_student, const ClassNumbers& everyone) {
  const std::string student = student_key(raw_student);  // as the class's ids are
  for (StepReport& s : r.steps)
    for (Check& c : s.checks) {
      if (c.id != "s1.numbers" || c.status != Status::Fail || !c.actual.is_object()) continue;
      std::vector<std::string> whose;
      for (const auto& [id, n] : everyone)
        if (id != student && n.window == c.actual.value("window", -1) && n.trials == c.actual.value("trials", -1))
          whose.push_back(id);
      if (whose.empty() || whose.size() > 3) return false;  // nobody of the class, or too many to say
      std::string names;
      for (const std::string& w : whose) names += (names.empty() ? "" : " or ") + w;
      c.message += " (by the course key, the numbers of " + names + ")";
      return true;
    }
  return false;
}

}  // namespace

namespace {

// One try: `earlier` holds why the tries before it were the grader's failures.
BatchRow grade_once(const BatchOptions& o, const std::string& name, const ClassContext& the_class,
                    const std::vector<std::string>& earlier) {
  const ClassNumbers& everyone = the_class.everyone;
  BatchRow row;
  row.submission = name;
  row.with_conformance = o.conformance.has_value();
  row.max_score = o.grade.rubric.max_score(row.with_conformance);
  // What is handed in and cannot be graded as it is, unless said to be the grader's.
  const auto fail = [&row](std::string why, Fault fault = Fault::Program) {
    row.status = RowStatus::Error;
    row.error = std::move(why);
    row.fault = fault;
    return row;
  };
  GradeOptions options = o.grade;
  if (!o.course_key.empty()) {
    const auto named = o.roster.find(name);
    if (named == o.roster.end() && o.roster_only) return fail("the roster names no student for this folder");
    row.student = named == o.roster.end() ? name : named->second;
    auto spec = variant_spec(o.grade.spec ? *o.grade.spec : lab_spec(), row.student, o.course_key);
    if (!spec) return fail("student " + row.student + ": " + spec.error().message);
    LabSpec keyed = **spec;
    keyed.numbers_from = "the course key and the student's " + (named == o.roster.end() ? "folder" : o.id_field);
    options.spec = std::make_shared<const LabSpec>(std::move(keyed));
  }
  const LabSpec& spec = options.spec ? *options.spec : lab_spec();
  const std::string inside = program_folder(o, name);
  // Kept only with a grade (--reports): a batch that keeps nothing reads no folder twice for it.
  const auto handed = o.reports_dir.empty() ? std::nullopt : handed_in_digest(o.root, inside);
  nlohmann::json stamp = batch_stamp(o, options, spec, the_class.shard);
  stamp["submission_sha256"] = handed ? nlohmann::json(*handed) : nlohmann::json(nullptr);
  // A kept grade is reused only for the very bytes it graded: a folder changed since (or one that
  // cannot be read whole now) is graded again.
  if (o.resume && handed && !o.reports_dir.empty() && kept_whole(o.reports_dir + "/" + name, stamp)) {
    BatchRow kept = regrade_submission(o.reports_dir, name, o.grade);
    if (kept.status == RowStatus::Graded && kept.report) {
      // The regrade wrote its reports; they are written again only when the names change them.
      if (name_whose_numbers(*kept.report, row.student, everyone))
        (void)write_reports(o.reports_dir + "/" + name, *kept.report);
      kept.regraded = false;
      kept.changes.clear();
      kept.resumed = true;
      return kept;
    }
  }
  const std::string sub = o.root + "/" + inside;
  const auto shown = shown_names(sub, kArchivesNamed);
  if (shown && shown->empty()) {
    row.status = RowStatus::Empty;
    row.error = "the folder is empty: nothing was handed in";
    return row;
  }
  if (shown)
    if (std::string zipped = only_archives(*shown); !zipped.empty()) return fail(std::move(zipped));
  Submission s;
  s.folder = sub;
  s.files_path = o.files_dir == "." ? sub : sub + "/" + o.files_dir;
  s.student = row.student;
  s.spec = options.spec;
  s.run = o.run_command;
  s.port = 0;  // outside the full sandbox: a server per submission, side by side
  s.timeout = o.timeout;
  s.conformance = o.conformance;
  s.prebuilt = options.rubric.prebuilt;
  s.class_build = o.class_build.get();
  if (!o.run_command) {
    // Files alone: the folder and --batch-files below it, opened without following a link (bob's
    // `cb` that leads to alice's is refused for bob alone). A run's files are its box's.
    auto handed_in = DirHandle::open(o.root);
    if (!handed_in) return fail(handed_in.error().message, Fault::Grader);
    auto below = handed_in->below(inside + "/" + (o.files_dir == "." ? "" : o.files_dir));
    if (!below) return fail(below.error().message);
    s.found = files_and_record(SubmissionDir::adopt(std::move(below).value(), s.files_path), std::nullopt,
                               "graded from the files alone (no --run)");
  }
  auto evidence = gather(std::move(s), o.sandbox);
  if (!evidence) return fail(evidence.error().message, evidence.error().fault);
  evidence->grader_failures = earlier;
  Report report = judge(*evidence, options);
  (void)name_whose_numbers(report, row.student, everyone);
  if (!o.reports_dir.empty())
    if (auto kept = keep_grade(o.reports_dir + "/" + name, report, *evidence, spec, stamp); !kept)
      return fail("keeping its reports: " + kept.error().message, Fault::Grader);
  row.status = RowStatus::Graded;
  row.report = std::move(report);
  return row;
}

}  // namespace

BatchRow superseded_row(const BatchOptions& o, const std::string& name, const Superseded& why) {
  BatchRow row;
  row.submission = name;
  const auto named = o.roster.find(name);
  row.student = named != o.roster.end() ? named->second : name;  // as its student's graded row says it
  row.status = RowStatus::Superseded;
  row.error = why.why;
  row.with_conformance = o.conformance.has_value();
  row.max_score = o.grade.rubric.max_score(row.with_conformance);
  return row;
}

BatchRow no_submission_row(const BatchOptions& o, const std::string& name, const std::string& student) {
  BatchRow row;
  row.submission = name;
  row.student = student;
  row.status = RowStatus::NoSubmission;
  row.error = "on the roster, but " + class_name(o.root) + " holds no folder of this student's: nothing was handed in";
  row.with_conformance = o.conformance.has_value();
  row.max_score = o.grade.rubric.max_score(row.with_conformance);
  return row;
}

namespace {

// The grader's failure is never a grade: graded again, kGradingTries in all, and after the last
// try a row that says why it is not graded (--resume grades it).
BatchRow graded_or_not(const BatchOptions& o, const std::string& name, const ClassContext& the_class) {
  std::vector<std::string> earlier;
  BatchRow row = grade_once(o, name, the_class, earlier);
  while (row.status == RowStatus::Error && row.fault == Fault::Grader) {
    earlier.push_back(row.error);
    if (earlier.size() == static_cast<std::size_t>(kGradingTries)) {
      row.status = RowStatus::NotGraded;
      row.error = not_graded_after(earlier);
      break;
    }
    row = grade_once(o, name, the_class, earlier);
  }
  return row;
}

}  // namespace

BatchRow grade_in_class(const BatchOptions& o, const std::string& name, const ClassContext& the_class) {
  BatchRow row = the_class.superseded.contains(name)  ? superseded_row(o, name, the_class.superseded.at(name))
                 : the_class.no_folder.contains(name) ? no_submission_row(o, name, the_class.no_folder.at(name))
                                                      : graded_or_not(o, name, the_class);
  if (!o.reports_dir.empty() && row.status != RowStatus::Graded)
    if (auto kept = keep_ungraded(o.reports_dir + "/" + row.submission, row); !kept)
      row.error += "; keeping it: " + kept.error().message;
  return row;
}

ClassContext class_context(const BatchOptions& o, const std::vector<std::string>& folders) {
  return ClassContext{class_numbers(o, folders), nullptr, {}, {}};
}

nlohmann::json class_stamp(const BatchOptions& o) {
  nlohmann::json stamp = batch_stamp(o, o.grade, o.grade.spec ? *o.grade.spec : lab_spec(), nullptr);
  stamp.erase("numbers");
  return stamp;
}

Result<std::vector<std::string>> submission_folders(const std::string& root) {
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

std::string class_name(std::string root) {
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (const auto slash = root.rfind('/'); slash != std::string::npos) root = root.substr(slash + 1);
  return root;
}

namespace {

// The class's rows by name: its folders and the roster's students without one.
std::vector<std::string> manifest_of(std::vector<std::string> folders,
                                     const std::map<std::string, std::string>& no_folder) {
  for (const auto& [folder, student] : no_folder) folders.push_back(folder);
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace

Result<std::vector<std::string>> class_manifest(const BatchOptions& o) {
  auto folders = submission_folders(o.root);
  if (!folders) return folders.error();
  return manifest_of(*folders, roster_without_folder(o.roster, *folders));
}

Result<std::vector<std::string>> batch_folders(const BatchOptions& o) {
  auto names = class_manifest(o);
  if (!names) return names.error();
  return share_of(*names, o.shard);
}

namespace {

// REPORTS/shard.json: which share this shard took of which class, and what its grades depend on
// besides each student's numbers, for `cb-grade merge` to hold every shard to the same.
Result<void> keep_shard(const BatchOptions& o, const std::vector<std::string>& manifest, const nlohmann::json& shard) {
  nlohmann::json stamp = batch_stamp(o, o.grade, o.grade.spec ? *o.grade.spec : lab_spec(), shard);
  stamp.erase("numbers");
  const nlohmann::json j{{"format", kShardFormat},
                         {"class", class_name(o.root)},
                         {"index", o.shard->index},
                         {"count", o.shard->count},
                         {"manifest_sha256", shard["manifest_sha256"]},
                         {"manifest", manifest},
                         {"stamp", stamp}};
  return write_file_atomically(o.reports_dir + "/shard.json", j.dump(1) + "\n");
}

}  // namespace

Result<std::vector<BatchRow>> grade_class(const BatchOptions& o) {
  auto folders = submission_folders(o.root);
  if (!folders) return folders.error();
  if (!o.reports_dir.empty())
    if (auto made = make_directories(o.reports_dir); !made) return made.error();
  ClassContext the_class;
  the_class.no_folder = roster_without_folder(o.roster, *folders);
  const std::vector<std::string> manifest = manifest_of(*folders, the_class.no_folder);
  the_class.everyone = class_numbers(o, manifest);  // the whole class's, whose share this is
  the_class.superseded = handed_in_twice(o, *folders);
  if (o.shard) {
    the_class.shard = {{"count", o.shard->count}, {"manifest_sha256", manifest_sha256(manifest)}};
    if (!o.reports_dir.empty())
      if (auto kept = keep_shard(o, manifest, the_class.shard); !kept) return kept.error();
  }
  const std::vector<std::string> names = share_of(manifest, o.shard);
  std::vector<BatchRow> rows(names.size());
  for_each_submission(
      rows.size(), o.jobs > 0 ? o.jobs : grading_jobs(this_process()).count,
      [&](std::size_t i) { rows[i] = grade_in_class(o, names[i], the_class); },
      [&](std::size_t i, std::size_t done, std::size_t total) {
        if (o.finished) o.finished(rows[i], done, total);
      });
  return rows;
}

}  // namespace cb::grade

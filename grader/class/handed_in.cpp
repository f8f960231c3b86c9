#include "cb/grade/handed_in.h"

#include <sys/stat.h>

#include <cstdio>

#include "cb/dir_handle.h"
#include "cb/folder_walk.h"
#include "cb/sandbox/box.h"
#include "cb/utc_time.h"

namespace cb::grade {
namespace {

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

Result<DirHandle> open_handed_in(const std::string& root, const std::string& inside) {
  auto top = DirHandle::open(root);
  if (!top) return top.error();
  return top->below(inside);
}

std::optional<std::int64_t> handed_in_at(const std::string& root, const std::string& folder) {
  auto dir = open_handed_in(root, folder);
  if (!dir) return std::nullopt;
  // The box's bounds: a folder too big to copy into a box is too big to date.
  WalkLimits bounds;
  bounds.max_entries = sandbox::kMaxCopyEntries;
  std::optional<std::int64_t> newest;
  auto walked = walk_folder(dir->fd(), dir->path(), bounds, [&](const WalkEntry& e) -> Result<WalkStep> {
    if (!newest || mtime_ns(e.st) > *newest) newest = mtime_ns(e.st);
    return WalkStep::Next;
  });
  if (!walked) return std::nullopt;
  if (!newest) {  // nothing inside: the folder's own time
    struct stat st {};
    if (::fstat(dir->fd(), &st) != 0) return std::nullopt;
    newest = mtime_ns(st);
  }
  return newest;
}

std::string hand_in_key(std::optional<std::int64_t> at, const std::string& folder) {
  char digits[24];
  // Times before 1970 (a forged mtime) count as unknown: the oldest.
  std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(at && *at > 0 ? *at : 0));
  return std::string(digits) + "\n" + folder;
}

std::optional<std::int64_t> hand_in_key_time(const std::string& key) {
  std::int64_t at = 0;
  for (std::size_t i = 0; i < key.size() && i < 20; ++i) {
    if (key[i] < '0' || key[i] > '9') return std::nullopt;
    at = at * 10 + (key[i] - '0');
  }
  return key.size() > 20 && at > 0 ? std::optional<std::int64_t>(at) : std::nullopt;
}

std::string hand_in_time(std::optional<std::int64_t> at) {
  if (!at || *at <= 0) return "an unknown time";
  std::string t = format_utc(*at / 1000);
  if (const auto dot = t.find('.'); dot != std::string::npos) t.erase(dot, t.size() - 1 - dot);
  return t;
}

HandIn hand_in_of(const std::string& root, const std::string& folder, const std::string& student,
                  const std::map<std::string, std::int64_t>& roster_times) {
  if (const auto given = roster_times.find(folder); given != roster_times.end())
    return HandIn{folder, student, given->second, true};
  return HandIn{folder, student, handed_in_at(root, folder), false};
}

std::string superseded_why(const HandIn& older, const HandIn& newer) {
  const char* by = older.by_roster && newer.by_roster   ? "by the times the roster gives"
                   : older.by_roster || newer.by_roster ? "by the roster's time where it gives one, else the newest "
                                                          "file a folder holds"
                                                        : "by the newest file each folder holds";
  return "handed in again: " + newer.folder + " (" + hand_in_time(newer.at) + ") is graded instead of this one (" +
         hand_in_time(older.at) + "); the last a student hands in is graded, " + by;
}

std::map<std::string, Superseded> superseded_folders(const std::vector<HandIn>& class_hand_ins) {
  std::map<std::string, const HandIn*> latest;  // by student
  for (const HandIn& h : class_hand_ins) {
    auto [at, fresh] = latest.emplace(h.student, &h);
    if (!fresh && hand_in_key(h.at, h.folder) > hand_in_key(at->second->at, at->second->folder)) at->second = &h;
  }
  std::map<std::string, Superseded> out;
  for (const HandIn& h : class_hand_ins) {
    const HandIn& kept = *latest.at(h.student);
    if (&kept != &h) out.emplace(h.folder, Superseded{h.student, kept.folder, superseded_why(h, kept)});
  }
  return out;
}

}  // namespace cb::grade

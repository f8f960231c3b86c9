#pragma once
// A student who hands in twice: two folders of one class whose students are one by the id rule
// (the roster's id, else the folder's name; student_id's case and spaces). One is graded, the one
// handed in last; the other gets a row that names it and says which was graded instead. The batch,
// every shard (each works it out over the whole class) and the queue keep to this one rule.
//
// When a folder was handed in is what the roster says where an LMS's export gives the time
// (roster.h: a "submitted" column); else what the folder itself says: the newest modification time of
// anything it holds (its entries as listed, a link's own time, nothing opened or followed). Equal
// times, or a folder whose time cannot be read (past the walk's bounds), are settled by name: the
// later in byte order is taken as the later hand-in, so every run picks the same one.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cb/dir_handle.h"
#include "cb/result.h"

namespace cb::grade {

// ROOT/INSIDE, a folder somebody handed in: the class's root opened as named, everything below it
// one name at a time, no link followed (DirHandle::below).
[[nodiscard]] Result<DirHandle> open_handed_in(const std::string& root, const std::string& inside);

// When ROOT/FOLDER was handed in, in nanoseconds since the epoch; nothing when it cannot be told.
[[nodiscard]] std::optional<std::int64_t> handed_in_at(const std::string& root, const std::string& folder);

// What the rule compares, as one string that orders as the hand-ins do (the queue's Redis
// function compares these too): the time, zero-padded, then the folder's name.
[[nodiscard]] std::string hand_in_key(std::optional<std::int64_t> at, const std::string& folder);

// The time a hand_in_key holds (nothing for an unknown one).
[[nodiscard]] std::optional<std::int64_t> hand_in_key_time(const std::string& key);

// A time as people read it in a row: "2026-11-03 14:22:05 UTC", or "an unknown time".
[[nodiscard]] std::string hand_in_time(std::optional<std::int64_t> at);

struct HandIn {
  std::string folder;
  std::string student;  // the id, as student_id gives it
  std::optional<std::int64_t> at;
  bool by_roster = false;  // `at` is the roster's (an LMS export's), not the folder's
};

// ROOT/FOLDER's hand-in: the time the roster gives it (Roster::handed_in_ns) where it gives one,
// else the folder's own (handed_in_at).
[[nodiscard]] HandIn hand_in_of(const std::string& root, const std::string& folder, const std::string& student,
                                const std::map<std::string, std::int64_t>& roster_times);

struct Superseded {
  std::string student;
  std::string by;   // the folder graded instead
  std::string why;  // the row's words
};

// Every folder not graded because its student handed in again later, by folder.
[[nodiscard]] std::map<std::string, Superseded> superseded_folders(const std::vector<HandIn>& class_hand_ins);

// Why `older` is not graded, `newer` being the student's: the row's words.
[[nodiscard]] std::string superseded_why(const HandIn& older, const HandIn& newer);

}  // namespace cb::grade

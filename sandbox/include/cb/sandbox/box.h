#pragma once
// A box: one submission's private place on the host, where every program graded for it works
// (the lab run and each conformance trace). It holds a copy of the submission, the directory the
// lab's files are written to, a private temporary directory, and the uid the programs run as.
// Programs write only here; the submission itself is never written, so grading it twice starts
// from the same files. The box is removed, links never followed, when it is destroyed, when the
// grader is interrupted (interrupt.h), or by the next grader when this one was killed.
//
//   $TMPDIR/cb-grade-box.NAME/   root: a tmpfs of the box's size, 0710, group the box's gid
//                                (only the box's uid may pass through); a user: 0700, its size
//                                counted while a program runs (usage())
//     sub/           the copy, owned by the box's uid, 0700
//     out/           the output directory, when it is not inside the submission
//     tmp/           TMPDIR and HOME (the fallback; the full sandbox has a tmpfs)
//   $TMPDIR/cb-grade-box.NAME.lock   held (flock) by the grader while the box lives

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cb/dir_handle.h"
#include "cb/result.h"
#include "cb/sandbox/policy.h"

namespace cb::sandbox {

// The copy is bounded: a lab's submission is a few files, and a program graded from a folder
// that holds a build tree or a home directory should be told, not copied.
inline constexpr std::uint64_t kMaxCopyBytes = 256ULL << 20;
inline constexpr std::size_t kMaxCopyEntries = 20'000;
inline constexpr int kMaxCopyDepth = 64;  // folders below the submission's own

class UidLease;
class BoxCgroup;
struct BoxPlace;

// What a box holds now, counted up to just past its limits.
struct BoxUsage {
  std::uint64_t bytes = 0;
  std::uint64_t files = 0;
  bool over = false;  // past --limit-box-size or --limit-box-files
};

struct BoxOptions {
  std::string submission;  // what the programs may see of the file system; copied
  std::string out_dir;     // where they are told to write the lab's files (may be inside it)
  bool copy = true;        // false: no box at all, the programs work in place (--sandbox none)
  // The grader is root: a uid of its own, leased from [first_uid, first_uid + uid_count).
  bool own_uid = false;
  uid_t first_uid = Policy{}.first_uid;
  unsigned uid_count = Policy{}.uid_count;
  // A control group of its own (cgroup.h) with these limits, where the machine gives one.
  bool cgroup = false;
  std::uint64_t memory_bytes = 0;
  std::uint64_t processes = 0;
  // Its size: a tmpfs of these where the grader may mount one, else counted (usage()).
  std::uint64_t box_bytes = Limits{}.box_bytes;
  std::uint64_t box_files = Limits{}.box_files;
};

// Why no box was made, and whose doing that is: the folder handed in (not there, not a folder, too
// big for its box, not copyable as it is) or the machine (no place, no uid, no group to make it).
// A caller that tries again decides by `submissions`, never by the message.
struct BoxError {
  std::string message;
  bool submissions = false;
};

class Box {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Box>, BoxError> make(const BoxOptions& options);
  ~Box();
  Box(const Box&) = delete;
  Box& operator=(const Box&) = delete;

  // The originals, absolute: what the full sandbox shows the programs, at the same paths.
  [[nodiscard]] const std::string& submission() const noexcept { return submission_; }
  [[nodiscard]] const std::string& out_dir() const noexcept { return out_dir_; }
  // Where they are on the host.
  [[nodiscard]] const std::string& copy_dir() const noexcept { return copy_; }
  [[nodiscard]] const std::string& out_host() const noexcept { return out_host_; }
  [[nodiscard]] const std::string& tmp_host() const noexcept { return tmp_host_; }
  [[nodiscard]] const std::string& base() const noexcept { return base_; }
  [[nodiscard]] bool copied() const noexcept { return !base_.empty(); }
  [[nodiscard]] bool out_inside_submission() const noexcept { return out_inside_; }
  // The output directory as its programs left it, reached from descriptors the box took before
  // any of them ran, without following a link: one that replaced it (or a folder on its way) by
  // a link gets an error naming the link, never what it points to. Shown as out_dir().
  [[nodiscard]] Result<DirHandle> out_handle() const;
  // The copy (or the folder itself, without one), held since before any program ran.
  [[nodiscard]] const DirHandle& copy_root() const noexcept { return copy_root_; }
  // The programs' uid and gid as the machine sees them (the grader's own without a lease).
  [[nodiscard]] uid_t uid() const noexcept { return uid_; }
  [[nodiscard]] gid_t gid() const noexcept { return gid_; }
  [[nodiscard]] bool own_uid() const noexcept { return lease_ != nullptr; }
  // Its control group, or null with why not (the sandbox then bounds memory per process).
  [[nodiscard]] const BoxCgroup* cgroup() const noexcept { return cgroup_.get(); }
  [[nodiscard]] const std::string& no_cgroup_why() const noexcept { return no_cgroup_why_; }
  // A tmpfs of its size holds it (the kernel refuses past it), or why not: its size is then
  // counted while its programs run (usage()), and a program past it is stopped.
  [[nodiscard]] bool bounded() const noexcept;
  [[nodiscard]] const std::string& unbounded_why() const noexcept;
  [[nodiscard]] Result<BoxUsage> usage() const;
  // Its tmpfs has no byte or no file left (a program ran into the size).
  [[nodiscard]] bool full() const;
  // Ends what still runs in it and removes it; once (destruction or an interrupt).
  void tear_down() noexcept;
  // How many files the copy skipped (FIFOs, sockets, devices: nothing a program needs).
  [[nodiscard]] std::size_t skipped() const noexcept { return skipped_; }

 private:
  Box() = default;
  std::string submission_, out_dir_, copy_, out_host_, tmp_host_, base_;
  std::string out_rel_;             // out_dir_ below the submission, when inside it
  DirHandle copy_root_, out_root_;  // the copy (or the folder itself, without one); out_dir_ outside it
  bool out_inside_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::unique_ptr<UidLease> lease_;
  std::unique_ptr<BoxCgroup> cgroup_;
  std::string no_cgroup_why_;
  std::unique_ptr<BoxPlace> place_;
  std::uint64_t box_bytes_ = 0, box_files_ = 0;
  std::size_t skipped_ = 0;
};

// Every box this process holds, for an interrupt to tear down (interrupt.h).
namespace live_boxes {
void add(Box* box);
void remove(Box* box);  // tears it down
void tear_down_all();
}  // namespace live_boxes

// Removes `path` and everything under it without following a symbolic link; a directory its
// programs made unreadable is opened up first. Errors name the entry.
[[nodiscard]] Result<void> remove_tree(const std::string& path);

}  // namespace cb::sandbox

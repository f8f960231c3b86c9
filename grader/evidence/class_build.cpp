#include "cb/grade/class_build.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "cb/bounded_file.h"
#include "cb/dir_handle.h"
#include "cb/kit_files.h"
#include "cb/owned_fd.h"
#include "cb/grade/output_tail.h"
#include "cb/sandbox/cgroup.h"

namespace cb::grade {
namespace {

// The kit whose harness a class shares, and what its build leaves of it (build.sh's .harness/).
constexpr const char* kKit = "cpp";
constexpr const char* kMarker = "harness.hpp";  // a folder that holds it may use the class's
constexpr const char* kBuild = "sh build.sh";
constexpr const char* kProducts = ".harness";
// The key last: a box that ran out of room for the objects has no key, and builds its own.
constexpr const char* kProductFiles[] = {"lab.o", "replay.o", "key"};
// Where a box is given them, in its copy: `.cb-class/cpp/`.
constexpr const char* kShared = ".cb-class";
constexpr std::chrono::seconds kBuildLimit{120};
constexpr std::size_t kProductBytes = 16U << 20U;

using Clock = std::chrono::steady_clock;

bool holds_file(const DirHandle& dir, const char* name) {
  struct stat st {};
  return ::fstatat(dir.fd(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

std::string errno_text() { return std::strerror(errno); }

// The kit's files in a folder of their own in $TMPDIR, for its box to copy.
Result<std::string> kit_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/cb-class-kit.XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) return Error{"cannot make a folder for the kit: " + errno_text()};
  const auto written = [&]() -> Result<void> {
    auto dir = DirHandle::open(path);
    if (!dir) return dir.error();
    for (const KitFile& f : kit_files()) {
      if (f.lang != kKit) continue;
      const std::string name(f.name);
      if (auto w = dir->write(name, std::string(f.text)); !w) return w.error();
      if (::fchmodat(dir->fd(), name.c_str(), f.executable ? 0755 : 0644, 0) != 0)
        return Error{"cannot set the mode of " + name + ": " + errno_text()};
    }
    return {};
  }();
  if (!written) {
    (void)sandbox::remove_tree(path);  // half a kit is no use to anybody, and not to be left
    return written.error();
  }
  return path;
}

// The last line of what a build said, for its failure.
std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// `command` run in `box` to its end, within kBuildLimit.
Result<void> run_in(sandbox::Sandbox& sandbox, const sandbox::Box& box, const std::string& command) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error{"cannot make a pipe: " + errno_text()};
  const OwnedFd out(fds[0]);
  sandbox::Program program;
  program.command = command;
  program.out_fd = fds[1];
  program.err_fd = fds[1];
  auto child = sandbox.start(box, program);
  ::close(fds[1]);
  if (!child) return Error{child.error().message};
  const auto began = Clock::now();
  const auto cpu_before = box.cgroup() != nullptr ? box.cgroup()->cpu_time() : std::nullopt;
  const auto deadline = began + kBuildLimit;
  OutputTail tail;
  char buf[4096];
  bool open_pipe = true;
  while (!sandbox::reap_if_exited(*child) && Clock::now() < deadline) {
    pollfd p{open_pipe ? out.get() : -1, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = ::read(out.get(), buf, sizeof buf);
      if (n > 0) tail.add(buf, static_cast<std::size_t>(n));
      if (n == 0) open_pipe = false;
    }
  }
  const bool ended = child->reaped;
  // Read before the box is emptied: a build out of time for want of CPU is the machine's.
  const std::string starved = ended ? "" : sandbox::starved_since(box.cgroup(), cpu_before, began);
  (void)sandbox::end_child(*child);
  if (!ended)
    return Error{"'" + command + "' took longer than " + std::to_string(kBuildLimit.count()) + " s" +
                 (starved.empty() ? "" : " while the machine kept its box from the CPU (" + starved + ")")};
  if (child->exit_code() != 0) {
    const std::string said = last_line(tail.take());
    return Error{"'" + command + "' exited with " + std::to_string(child->exit_code()) +
                 (said.empty() ? "" : ": " + said)};
  }
  return {};
}

Result<std::string> read_product(const DirHandle& dir, const char* name) {
  const OwnedFd fd(::openat(dir.fd(), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return Error{std::string("the build left no file ") + kProducts + "/" + name};
  auto text = read_at_most(fd.get(), kProductBytes);
  if (text && text->size() > kProductBytes) return Error{std::string(name) + " is larger than 16 MiB"};
  return text;
}

}  // namespace

void ClassBuild::build(sandbox::Sandbox& sandbox) {
  tried_ = true;
  auto kit = kit_folder();
  if (!kit) {
    failure_ = kit.error().message;
    return;
  }
  auto box = sandbox.box(*kit, "");
  (void)sandbox::remove_tree(*kit);  // copied into the box, or not to be
  if (!box) {
    failure_ = box.error().message;
    return;
  }
  ++builds_;
  if (auto built = run_in(sandbox, **box, kBuild); !built) {
    failure_ = built.error().message;
    return;
  }
  auto products = (*box)->copy_root().below(kProducts);
  if (!products) {
    failure_ = products.error().message;
    return;
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* name : kProductFiles) {
    auto text = read_product(*products, name);
    if (!text) {
      failure_ = text.error().message;
      return;
    }
    files.emplace_back(name, std::move(text).value());
  }
  files_ = std::move(files);
}

void ClassBuild::give(sandbox::Sandbox& sandbox, const sandbox::Box& box) {
  if (!box.copied() || !holds_file(box.copy_root(), kMarker)) return;
  MutexLock lock(mu_);
  if (!tried_) build(sandbox);
  if (files_.empty()) return;
  // A folder of that name handed in is the student's: theirs stays, and their build decides.
  if (::mkdirat(box.copy_root().fd(), kShared, 0755) != 0) return;
  auto shared = box.copy_root().below(kShared);
  if (!shared || ::fchmod(shared->fd(), 0755) != 0 || ::mkdirat(shared->fd(), kKit, 0755) != 0) return;
  auto dir = shared->below(kKit);
  // Readable by the box's uid whatever the grader's umask; written by the grader's alone.
  if (!dir || ::fchmod(dir->fd(), 0755) != 0) return;
  for (const auto& [name, bytes] : files_)
    if (!dir->write(name, bytes) || ::fchmodat(dir->fd(), name.c_str(), 0644, 0) != 0) return;
}

int ClassBuild::builds() const {
  MutexLock lock(mu_);
  return builds_;
}

std::string ClassBuild::failure() const {
  MutexLock lock(mu_);
  return failure_;
}

}  // namespace cb::grade

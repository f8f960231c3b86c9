#include "cb/sandbox/sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cb/sandbox/cgroup.h"
#include "plan.h"
#include "seccomp_filter.h"

namespace cb::sandbox {

Result<Sandbox::Decision> Sandbox::decide() {
  std::lock_guard lock(mu_);
  if (!decision_) {
    switch (policy_.mode) {
      case Mode::None: decision_ = Decision{Kind::None, "asked for (--sandbox none)"}; break;
      case Mode::Fallback: decision_ = Decision{Kind::Fallback, "asked for (--sandbox fallback)"}; break;
      case Mode::Auto:
      case Mode::Strict: decision_ = probe(); break;
    }
  }
  if (policy_.mode == Mode::Strict && decision_->kind != Kind::Namespaces)
    return Error{"--sandbox strict: the full sandbox cannot be had here: " + decision_->why};
  return *decision_;
}

// A whole start of an empty program in the full sandbox, in a box of an empty directory: what
// is refused shows here, once, instead of in a student's grade.
Sandbox::Decision Sandbox::probe() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string dir = std::string(tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp") + "/cb-grade-probe.XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr)
    return {Kind::Fallback, std::string("cannot make a directory to probe in: ") + std::strerror(errno)};
  Decision d{Kind::Namespaces, ""};
  {
    BoxOptions o;
    o.submission = dir;
    o.own_uid = ::geteuid() == 0;
    o.first_uid = policy_.first_uid;
    o.uid_count = policy_.uid_count;
    auto box = Box::make(o);
    if (!box) {
      d = {Kind::Fallback, box.error().message};
    } else {
      Program p;
      p.command = "exit 0";
      auto child = launch(policy_, Kind::Namespaces, **box, p);
      if (!child) {
        d = {Kind::Fallback, child.error().message};
      } else {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
        while (!reap_if_exited(*child) && std::chrono::steady_clock::now() < until)
          std::this_thread::sleep_for(std::chrono::milliseconds{1});
        const bool exited = child->reaped;
        (void)end_child(*child);
        if (!exited)
          d = {Kind::Fallback, "an empty program in the full sandbox did not finish"};
        else if (child->exit_code() != 0)
          d = {Kind::Fallback,
               "an empty program in the full sandbox exited with " + std::to_string(child->exit_code())};
      }
    }
  }
  (void)remove_tree(dir);
  return d;
}

Result<std::unique_ptr<Box>, BoxError> Sandbox::box(const std::string& submission, const std::string& out_dir) {
  auto decision = decide();
  if (!decision) return BoxError{decision.error().message};
  BoxOptions o;
  o.submission = submission;
  o.out_dir = out_dir;
  o.copy = decision->kind != Kind::None;
  o.own_uid = o.copy && ::geteuid() == 0;
  o.first_uid = policy_.first_uid;
  o.uid_count = policy_.uid_count;
  o.cgroup = o.copy;
  o.memory_bytes = policy_.limits.memory_bytes;
  o.processes = policy_.limits.processes;
  o.box_bytes = policy_.limits.box_bytes;
  o.box_files = policy_.limits.box_files;
  return Box::make(o);
}

namespace {

// Every other user may read the file: it, and every folder on its way, lets others in.
bool others_may_read(const std::string& real) {
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return false;
  for (auto slash = real.rfind('/'); slash != std::string::npos && slash > 0; slash = real.rfind('/', slash - 1)) {
    if (::stat(real.substr(0, slash).c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> Sandbox::readable_by_programs(const std::string& path, const std::string& submission) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;  // not there: reading it fails elsewhere
  const std::string real = buf;
  const auto decision = decide();
  if (!decision) return std::nullopt;
  if (decision->kind == Kind::None) return std::string("--sandbox none runs the programs as the grader itself");
  std::string sub = submission.empty() ? "." : submission;
  if (::realpath(sub.c_str(), buf) != nullptr) sub = buf;
  if (real == sub || real.rfind(sub + "/", 0) == 0)
    return "it is in the folder handed in (" + sub + "), which the programs get a copy of";
  // Whatever the box shows: a key every user may read is one a student on this machine, or a
  // program of a later grading in a weaker mode, may read too.
  if (others_may_read(real)) return "every user may read it, the programs' uid too (" + real + ")";
  const bool root = ::geteuid() == 0;
  const bool whole_machine = decision->kind == Kind::Fallback && landlock_version() == 0;
  const bool shown = whole_machine || in_system_dirs(real);
  if (!shown) return std::nullopt;
  if (!root)
    return whole_machine ? std::string(
                               "the programs run as the grader's own uid, and without Landlock they may read "
                               "all it may")
                         : "it is in a folder the programs see (" + real + "), and they run as the grader's own uid";
  return std::nullopt;
}

Result<Kind> Sandbox::kind() {
  auto decision = decide();
  if (!decision) return decision.error();
  return decision->kind;
}

Containment Sandbox::containment(const Box& box) {
  Containment c;
  auto decision = decide();
  c.kind = decision ? decision->kind : Kind::None;
  c.why = decision ? decision->why : decision.error().message;
  c.limits = policy_.limits;
  c.uid = box.uid();
  c.own_uid = box.own_uid();
  c.uid_inside = box.uid();
  if (c.kind == Kind::None) return c;
  c.cgroup_version = box.cgroup() != nullptr ? box.cgroup()->version() : 0;
  c.cpu_group = box.cgroup() != nullptr && !box.cgroup()->cpu_dir().empty();
  c.no_cgroup_why = box.no_cgroup_why();
  c.box_tmpfs = box.bounded();
  c.box_unbounded_why = box.unbounded_why();
  c.seccomp = syscall_filter().ok();
  if (c.kind == Kind::Namespaces) {
    c.user_namespace = ::geteuid() != 0;
    if (c.user_namespace) c.uid_inside = kInsideId;
    c.own_network = true;
  } else {
    c.landlock_abi = landlock_version();
  }
  return c;
}

Result<Child, StartError> Sandbox::start(const Box& box, const Program& program) {
  auto decision = decide();
  if (!decision) return StartError{decision.error()};
  auto child = launch(policy_, decision->kind, box, program);
  if (!child)
    return StartError{"cannot start the program in the sandbox: " + child.error().message, child.error().box_full};
  return child;
}

std::string Sandbox::visible_out(const Box& box) {
  auto decision = decide();
  return decision && decision->kind == Kind::Fallback ? box.out_host() : box.out_dir();
}

std::string Sandbox::visible_cwd(const Box& box) {
  auto decision = decide();
  return decision && decision->kind == Kind::Fallback ? box.copy_dir() : box.submission();
}

}  // namespace cb::sandbox

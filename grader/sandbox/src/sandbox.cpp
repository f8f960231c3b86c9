#include "cb/sandbox/sandbox.h"

#include <unistd.h>

#include <cerrno>
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

Result<std::unique_ptr<Box>> Sandbox::box(const std::string& submission, const std::string& out_dir) {
  auto decision = decide();
  if (!decision) return decision.error();
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

Result<Child> Sandbox::start(const Box& box, const Program& program) {
  auto decision = decide();
  if (!decision) return decision.error();
  auto child = launch(policy_, decision->kind, box, program);
  if (!child) return Error{"cannot start the program in the sandbox: " + child.error().message};
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

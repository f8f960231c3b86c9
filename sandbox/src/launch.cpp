#include "plan.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "children.h"
#include "jail.h"

namespace cb::sandbox {
namespace {

std::string failure_text(const jail::Plan& plan, const jail::Message& m) {
  const auto step = static_cast<jail::Step>(m.step);
  std::string what = jail::step_name(step);
  if (step == jail::Step::MountStep && m.index >= 0 && static_cast<std::size_t>(m.index) < plan.mounts.size()) {
    const jail::MountOp& op = plan.mounts[static_cast<std::size_t>(m.index)];
    what += " (" + op.target.substr(std::strlen("/newroot")) + (op.source.empty() ? "" : " from " + op.source) + ")";
  }
  if (step == jail::Step::Landlock && m.index >= 0 && static_cast<std::size_t>(m.index) < plan.landlock_rules.size())
    what += " (" + plan.landlock_rules[static_cast<std::size_t>(m.index)].path + ")";
  return what + ": " + std::strerror(m.error);
}

// Kills and reaps a child that did not get as far as its program.
void abandon(pid_t pid) {
  ::kill(pid, SIGKILL);
  Child c;
  c.pid = pid;
  c.kind = Kind::Namespaces;
  (void)end_child(c);
}

}  // namespace

Result<Child, StartError> launch(const Policy& policy, Kind kind, const Box& box, const Program& program) {
  auto made = make_plan(policy, kind, box, program);
  if (!made) return StartError{made.error()};
  jail::Plan plan = std::move(made).value();
  plan.seal();  // here, once it is where it stays: it points into its own strings
  const bool root = ::geteuid() == 0;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return StartError{Error{std::string("cannot start the program: socketpair: ") + std::strerror(errno)}};
  plan.control = sv[1];
  // Opened here, not in the child (it makes raw system calls on the plan only).
  plan.devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  unsigned long flags = SIGCHLD;
  if (kind == Kind::Namespaces)
    flags |= CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC | (root ? 0UL : CLONE_NEWUSER);
  long pid = -1;
  {
    auto lock = children::lock();  // registered before any reaper can take it for an orphan
    if (kind != Kind::Namespaces) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) jail::enter(plan);
    if (pid > 0) children::add(static_cast<pid_t>(pid));
  }
  const int clone_errno = errno;
  ::close(sv[1]);
  if (plan.devnull >= 0) ::close(plan.devnull);
  if (pid < 0) {
    ::close(sv[0]);
    return StartError{Error{std::string("clone: ") + std::strerror(clone_errno)}};
  }
  Child child;
  child.pid = static_cast<pid_t>(pid);
  child.kind = kind;

  // The conversation: a socket to serve (the full sandbox with a server), then the end of the
  // control socket, which its close-on-exec gives at the exec; or why it failed.
  Result<void> outcome;
  bool box_full = false;
  for (;;) {
    pollfd pfd{sv[0], POLLIN, 0};
    if (::poll(&pfd, 1, 10'000) <= 0) {
      outcome = Error{"the sandbox did not start the program within 10 s"};
      break;
    }
    jail::Message m;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    iovec iov{&m, sizeof m};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(sv[0], &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;  // exec'd
    if (n != static_cast<ssize_t>(sizeof m)) {
      outcome = Error{"the sandbox's child sent something unexpected"};
      break;
    }
    if (m.kind == jail::Message::Failed) {
      outcome = Error{failure_text(plan, m)};
      // The exec, past the box's own uid, refused for the processes that uid already runs.
      box_full = static_cast<jail::Step>(m.step) == jail::Step::Exec && m.error == EAGAIN &&
                 (box.own_uid() || kind == Kind::Namespaces);
      break;
    }
    int fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if (fd < 0 || !program.listen) {
      if (fd >= 0) ::close(fd);
      outcome = Error{"the sandbox's child sent no socket"};
      break;
    }
    outcome = program.listen->serve(fd);
    if (!outcome) break;
    const char go = 'g';
    if (::write(sv[0], &go, 1) != 1) {
      outcome = Error{"the sandbox's child went away before its program started"};
      break;
    }
  }
  ::close(sv[0]);
  if (!outcome) {
    abandon(child.pid);
    if (box_full)
      return StartError{outcome.error().message + " (the box already runs as many processes as it may: " +
                            std::to_string(policy.limits.processes) + ", all started by its own programs)",
                        true};
    return StartError{outcome.error()};
  }
  return child;
}

}  // namespace cb::sandbox

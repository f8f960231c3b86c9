// Runs a command where namespaces are refused, as Docker's default seccomp profile refuses them
// to a container (Gradescope's, say): clone, clone3 and unshare with a namespace flag fail with
// EPERM. For testing the grader's fallback and --sandbox strict on a machine that has namespaces.
//   no_namespaces PROGRAM [ARG...]
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: no_namespaces PROGRAM [ARG...]\n");
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  const unsigned long flags[] = {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWIPC};
  for (unsigned long f : flags) {
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, f, f));
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, SCMP_A0_64(SCMP_CMP_MASKED_EQ, f, f));
  }
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || seccomp_load(ctx) != 0) {
    std::perror("no_namespaces: seccomp");
    return 2;
  }
  seccomp_release(ctx);
  ::execv(argv[1], argv + 1);
  std::perror(argv[1]);
  return 127;
}

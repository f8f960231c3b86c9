#pragma once
// The system calls a lab program never needs, refused with an error (not a kill: a program that
// probes, or a runtime that tries io_uring first, gets an answer and goes on).

#include <linux/filter.h>

#include <string>

#include "cb/result.h"

namespace cb::sandbox {

// What every box gets, and two additions, as bits:
// - kNoSharedMemory: memfd_create and System V shared memory (shmget), for a box without a
//   control group, where RLIMIT_DATA is the memory limit and cannot see pages that belong to a
//   file or a segment rather than a process;
// - kTcpOnly: socket() for AF_UNIX and for datagrams, for the fallback, which shares the
//   machine's network: Landlock bounds TCP only, and a unix socket reaches any listener on the
//   machine by its path (socketpair stays: runtimes talk to their own children through it).
// - kNoBeacon: no answer to the harness's question (beacon.h): the harness may answer in the box.
inline constexpr unsigned kNoSharedMemory = 1;
inline constexpr unsigned kTcpOnly = 2;
inline constexpr unsigned kNoBeacon = 4;
// - kMachineIpcNamespace: every System V and POSIX IPC call, for a box that shares the machine's IPC
//   namespace (the fallback): its objects would outlive the grading.
inline constexpr unsigned kMachineIpcNamespace = 8;

// Built once each with libseccomp, then shared by every start (the child only hands it to the
// kernel).
[[nodiscard]] Result<const sock_fprog*> syscall_filter(unsigned additions = 0);

}  // namespace cb::sandbox

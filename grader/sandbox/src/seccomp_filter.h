#pragma once
// The system calls a lab program never needs, refused with an error (not a kill: a program that
// probes, or a runtime that tries io_uring first, gets an answer and goes on).

#include <linux/filter.h>

#include <string>

#include "cb/result.h"

namespace cb::sandbox {

// Standard: what every box gets. NoSharedMemory: also memfd_create and System V shared memory
// (shmget), for a box without a control group, where RLIMIT_DATA is the memory limit and cannot
// see pages that belong to a file or a segment rather than a process.
enum class Filter { Standard, NoSharedMemory };

// Built once each with libseccomp, then shared by every start (the child only hands it to the
// kernel).
[[nodiscard]] Result<const sock_fprog*> syscall_filter(Filter filter = Filter::Standard);

}  // namespace cb::sandbox

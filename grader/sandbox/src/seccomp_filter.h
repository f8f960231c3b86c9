#pragma once
// The system calls a lab program never needs, refused with an error (not a kill: a program that
// probes, or a runtime that tries io_uring first, gets an answer and goes on).

#include <linux/filter.h>

#include <string>

#include "cb/result.h"

namespace cb::sandbox {

// Built once with libseccomp, then shared by every start (the child only hands it to the kernel).
[[nodiscard]] Result<const sock_fprog*> syscall_filter();

}  // namespace cb::sandbox

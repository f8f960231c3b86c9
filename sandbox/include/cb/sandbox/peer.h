#pragma once
// Who is at the other end of a loopback TCP connection: the uid that owns the peer's socket, as
// the kernel's socket diagnostics (NETLINK_SOCK_DIAG) report it. In the fallback, where the
// program shares the machine's network, this is how the grader's server tells the program it
// grades (a uid of its own) from any other program on the machine that reaches its port.

#include <sys/types.h>

#include <optional>

#include "cb/result.h"

namespace cb::sandbox {

// The uid owning the socket at the other end of `connected_fd`, a TCP connection over loopback
// (both ends in this network namespace). nullopt when the kernel cannot say: the peer's socket
// is already gone, or closed and in TIME_WAIT, where the kernel keeps no owner. Errors: the
// descriptor is not a TCP socket, or the diagnostics cannot be asked.
[[nodiscard]] Result<std::optional<uid_t>> peer_uid(int connected_fd);

// Whether this kernel answers socket diagnostics at all (asked once). Where it does, a lookup
// that fails is about that one connection (reset before it was accepted, say), not the kernel.
[[nodiscard]] bool peer_diagnostics_available();

}  // namespace cb::sandbox

#include "cb/sandbox/peer.h"

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cb::sandbox {
namespace {

Error sys_error(const char* what) { return Error{std::string("peer_uid: ") + what + ": " + std::strerror(errno)}; }

// Copies an address of `family` into the diagnostics' four 32-bit words, as the kernel keeps it.
void put_address(const sockaddr_storage& a, __be32 (&out)[4]) {
  if (a.ss_family == AF_INET) {
    std::memcpy(&out[0], &reinterpret_cast<const sockaddr_in&>(a).sin_addr, 4);
  } else {
    std::memcpy(&out[0], &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, 16);
  }
}

__be16 port_of(const sockaddr_storage& a) {
  return a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(a).sin_port
                                : reinterpret_cast<const sockaddr_in6&>(a).sin6_port;
}

}  // namespace

bool peer_diagnostics_available() {
  static const bool available = [] {
    const int nl = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl >= 0) ::close(nl);
    return nl >= 0;
  }();
  return available;
}

Result<std::optional<uid_t>> peer_uid(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof local, peer_len = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return sys_error("getsockname");
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return sys_error("getpeername");
  if ((local.ss_family != AF_INET && local.ss_family != AF_INET6) || peer.ss_family != local.ss_family)
    return Error{"peer_uid: not an IP connection"};

  // One socket asked for by its four-tuple (no dump): the peer's, whose source is our peer and
  // whose destination is us. Its cookie is unknown, which the kernel is told.
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask{};
  ask.header.nlmsg_len = sizeof ask;
  ask.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  ask.header.nlmsg_flags = NLM_F_REQUEST;
  ask.request.sdiag_family = static_cast<__u8>(local.ss_family);
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = ~0U;
  ask.request.id.idiag_sport = port_of(peer);
  ask.request.id.idiag_dport = port_of(local);
  put_address(peer, ask.request.id.idiag_src);
  put_address(local, ask.request.id.idiag_dst);
  ask.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  ask.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  const int nl = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl < 0) return sys_error("socket(NETLINK_SOCK_DIAG)");
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(nl, &ask, sizeof ask, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) != sizeof ask) {
    const Error e = sys_error("send");
    ::close(nl);
    return e;
  }
  alignas(nlmsghdr) char reply[1024];
  ssize_t n;
  do n = ::recv(nl, reply, sizeof reply, 0);
  while (n < 0 && errno == EINTR);
  const int recv_errno = errno;
  ::close(nl);
  if (n < 0) {
    errno = recv_errno;
    return sys_error("recv");
  }
  const auto* h = reinterpret_cast<const nlmsghdr*>(reply);
  if (!NLMSG_OK(h, static_cast<unsigned>(n))) return Error{"peer_uid: a short answer from the kernel"};
  if (h->nlmsg_type == NLMSG_ERROR) {
    const auto* err = reinterpret_cast<const nlmsgerr*>(reply + NLMSG_HDRLEN);
    if (err->error == -ENOENT) return std::optional<uid_t>{};  // the peer's socket is gone
    errno = -err->error;
    return sys_error("the kernel's answer");
  }
  if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg)))
    return Error{"peer_uid: an answer of another kind from the kernel"};
  const auto* msg = reinterpret_cast<const inet_diag_msg*>(reply + NLMSG_HDRLEN);
  // A closed socket waiting out TIME_WAIT (or an orphaned FIN_WAIT2, kept the same way) is
  // reported with uid 0: it has no owner any more.
  if (msg->idiag_state == TCP_TIME_WAIT) return std::optional<uid_t>{};
  return std::optional<uid_t>{msg->idiag_uid};
}

}  // namespace cb::sandbox

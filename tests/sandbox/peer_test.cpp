// Who is at the other end of a loopback connection (cb::sandbox::peer_uid), and the flaky
// server's door that uses it in the fallback: a connection from another uid gets nothing and
// leaves nothing in the record. Real sockets, real uids (a child that becomes another user).
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "cb/flaky/server.h"
#include "cb/sandbox/peer.h"
#include "raw_socket.h"
#include "skip.h"

namespace cb::sandbox {
namespace {

using cb::testing::RawSocket;

constexpr uid_t kOther = 65534;  // nobody

// GET /fast from a child running as `uid`: its exit status is 0 when it was answered 200.
int fetch_as(uid_t uid, int port) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(3);
    RawSocket s(port);
    s.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string answer = s.receive_all(5000);
    ::_exit(answer.rfind("HTTP/1.1 200", 0) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

TEST_CASE("peer_uid: the uid that owns the other end of a loopback connection") {
  // Asked on the server's thread, read here once the answer came: the order goes through the
  // kernel, which a race detector cannot see, so the value is atomic. -1: not asked, -2: unknown.
  std::atomic<long long> seen{-1};
  flaky::ServerOptions o;
  o.port = 0;
  o.admit = [&](int fd) {
    auto uid = peer_uid(fd);
    seen = uid.ok() && *uid ? static_cast<long long>(**uid) : -2;
    return true;
  };
  auto server = flaky::FlakyServer::start(o);
  REQUIRE(server.ok());
  RawSocket mine((*server)->port());
  mine.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(mine.receive_all(5000).rfind("HTTP/1.1 200", 0) == 0);
  CHECK(seen.load() == static_cast<long long>(::geteuid()));
  if (::geteuid() == 0) {
    seen = -1;
    CHECK(fetch_as(kOther, (*server)->port()) == 0);
    CHECK(seen.load() == static_cast<long long>(kOther));
  }
}

TEST_CASE("peer_uid: what is not a TCP connection is an error, not a uid") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  CHECK_FALSE(peer_uid(pair[0]).ok());
  ::close(pair[0]);
  ::close(pair[1]);
}

TEST_CASE(
    "the flaky server admits only the uid it is told to: another's connection is closed unanswered and unrecorded") {
  if (cb::testing::skip_unless(::geteuid() == 0, "another uid to connect from needs root")) return;
  flaky::ServerOptions o;
  o.port = 0;
  o.admit = [](int fd) {
    auto uid = peer_uid(fd);
    return uid.ok() && *uid && **uid == kOther;
  };
  auto server = flaky::FlakyServer::start(o);
  REQUIRE(server.ok());
  CHECK(fetch_as(kOther, (*server)->port()) == 0);  // the admitted uid is served
  RawSocket root((*server)->port());                // root is not that uid
  root.send("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  int error = -2;
  CHECK(root.receive_all(5000, &error).empty());
  CHECK(error != -1);  // closed at once, not left hanging
  const flaky::Page page = (*server)->record().read(0, 100);
  REQUIRE(page.entries.size() == 1);
  CHECK(page.count == 1);
}

}  // namespace
}  // namespace cb::sandbox

// The fallback shares the machine: its programs may run as the grader's own uid (an ordinary
// user) and on the machine's network. What they could reach through that is refused: another
// process's limits and priorities, datagrams and unix sockets; and a batch that would put every
// student under one uid is graded only when the instructor says so.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "grading.h"
#include "process.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

TEST_CASE("fallback: a program cannot change another process's limits, priority, CPUs or I/O priority") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"reach_others.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 reach_others.py");
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);  // the grader finished, with a report: its own limits held
      REQUIRE(g.attack.is_object());
      CHECK(g.attack["changed"].empty());
      if (s.mode == "fallback") CHECK(g.attack["tried"].get<int>() > 0);  // the grader itself, at least
    }
  }
}

TEST_CASE("fallback: a program sends no datagram and reaches no unix socket of the machine") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      const int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_in at{};
      at.sin_family = AF_INET;
      at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof at;
      REQUIRE(::bind(udp, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
      REQUIRE(::getsockname(udp, reinterpret_cast<sockaddr*>(&at), &len) == 0);
      TempDir place;
      ::chmod(place.path().c_str(), 0755);
      const std::string path = place / "listener.sock";
      const int unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_un un{};
      un.sun_family = AF_UNIX;
      std::strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
      REQUIRE(::bind(unix_fd, reinterpret_cast<sockaddr*>(&un), sizeof un) == 0);
      REQUIRE(::listen(unix_fd, 8) == 0);
      ::chmod(path.c_str(), 0777);

      Submission sub(s, {"datagrams.py"});
      TempDir out;
      const Graded g = grade(
          s, sub, out, "python3 datagrams.py",
          {"--program-env", "UDP_PORT=" + std::to_string(ntohs(at.sin_port)), "--program-env", "UNIX_PATH=" + path});
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      REQUIRE(g.attack.is_object());
      char buf[64];
      CHECK(::recv(udp, buf, sizeof buf, 0) < 0);      // nothing arrived
      CHECK(::accept(unix_fd, nullptr, nullptr) < 0);  // nobody connected
      if (s.mode == "fallback") {
        CHECK(g.attack["udp"] == "PermissionError");
        CHECK(g.attack["unix"] == "PermissionError");
      }
      ::close(udp);
      ::close(unix_fd);
    }
  }
}

// How many processes of `name` (their comm) run now.
int running_named(const std::string& name) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream comm(e.path() / "comm");
    std::string c;
    if (std::getline(comm, c) && c == name) ++n;
  }
  return n;
}

TEST_CASE("fallback: a program that forks and walks away leaves nothing running when the grader returns") {
  TempDir build;
  const Ran cc = run({"/usr/bin/gcc", "-O2", "-o", build / "cbwalker", kAttacks + "/fork_walker.c"});
  REQUIRE_MESSAGE(cc.exit_code == 0, cc.err);
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {});
      fs::copy_file(build / "cbwalker", sub.dir / "cbwalker");
      hand_over(sub.dir.path(), s, false);
      ::chmod((sub.dir / "cbwalker").c_str(), 0755);
      TempDir out;
      const Graded g = grade(s, sub, out, "./cbwalker");
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);  // graded: everything it left was ended
      CHECK(running_named("cbwalker") == 0);
    }
  }
}

TEST_CASE("fallback: an ordinary user's batch is graded in one shared uid only when asked for by name") {
  if (skip_unless(am_root(), "an ordinary user to grade as is made by root")) return;
  {
    // The grader as an ordinary user, where namespaces are refused.
    const Setup user{false, "auto"};
    TempDir root;
    fs::create_directories(root / "alice");
    fs::copy_file(kStudents + "/good_breaker.py", root / "alice/breaker.py");
    hand_over(root.path(), user, false);
    const Ran refused = run(as(user, {kNoNamespaces, grader_for(user), "--batch", root.path(), "--batch-files", "out",
                                      "--run", "python3 breaker.py"}));
    INFO(refused.out, refused.err);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("cb-grade: class: no full sandbox here, and the fallback of an ordinary user runs every "
                           "student's program as the grader's own uid") == 0);
    // A queue's worker grades students one after another as a batch does: refused alike, by its own name,
    // before it takes a job (no queue is reachable here).
    if (run({grader_for(user), "queue", "--help"}).exit_code == 0) {
      const Ran worker = run(as(user, {kNoNamespaces, grader_for(user), "queue", "work", "--queue", "class", "--redis",
                                       "unix:///nonexistent/redis.sock", "--run", "python3 breaker.py"}));
      INFO(worker.out, worker.err);
      CHECK(worker.exit_code == 2);
      CHECK(worker.err.find("cb-grade: queue work: no full sandbox here") == 0);
    }
    const Ran asked = run(as(user, {kNoNamespaces, grader_for(user), "--batch", root.path(), "--batch-files", "out",
                                    "--run", "python3 breaker.py", "--sandbox", "fallback", "--format", "json"}));
    INFO(asked.out, asked.err);
    const json book = json::parse(asked.out, nullptr, false);
    REQUIRE(book.is_array());
    CHECK(book[0]["score"] == 8);
    // The gradebook names the containment the programs ran in, as the kept files do.
    CHECK(book[0]["sandbox"] == "fallback");
    // A single submission is graded as before, and its report says whose uid it had.
    Submission sub(user, {}, true);
    TempDir out;
    hand_over(out.path(), user, true);
    const Ran one = run(as(user, {kNoNamespaces, grader_for(user), "--run", "python3 breaker.py", "--submission",
                                  sub.dir.path(), "--dir", out.path(), "--format", "json"}));
    const json report = json::parse(one.out, nullptr, false);
    REQUIRE(report.is_object());
    CHECK(report["program"]["sandbox"]["description"].get<std::string>().find(
              "the grader's, shared with every program it grades") != std::string::npos);
  }
}

}  // namespace
}  // namespace cb::testing

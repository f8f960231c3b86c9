// Which server cb-lab uses, and that no run destroys someone else's evidence: a server cb-lab
// did not start is used (and its record reset) only when named. "Someone else's server" here is
// one this test starts on a free port and writes into a copy of the lab's scenario as the
// scenario's own address, so the test never needs port 8110.
#include <doctest/doctest.h>

#include <algorithm>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cb/flaky/server.h"
#include "process.h"
#include "raw_socket.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kLab = CB_LAB_BIN;

// Someone's flaky server with a record of its own: one /fast they made.
struct SomeoneElses {
  std::unique_ptr<flaky::FlakyServer> server;
  SomeoneElses() {
    flaky::ServerOptions o;
    o.port = 0;
    server = flaky::FlakyServer::start(o).value();
    const auto arrival = server->record().arrive(
        "GET", "/fast", flaky::Kind::Lab, [] { return std::int64_t{1}; }, 1);
    server->record().complete(arrival, flaky::Outcome::Answered, 200, 2);
  }
  [[nodiscard]] std::uint64_t epoch() const { return server->record().read(0, 10).epoch; }
  [[nodiscard]] std::uint64_t entries() const { return server->record().read(0, 100).entries.size(); }
};

// The lab's scenario with its address set to `server`.
std::string scenario_at(const TempDir& dir, const std::string& server) {
  json lab = json::parse(slurp(std::string(CB_SCENARIOS) + "/lab.json"));
  lab["server"] = server;
  dir.write("lab.json", lab.dump());
  return dir / "lab.json";
}

int session_server_pid(const std::string& dir) {
  return json::parse(slurp(dir + "/.cb-lab/session.json")).at("server_pid").get<int>();
}

TEST_CASE("cb-lab run: a server someone else started is left alone unless it is named") {
  SomeoneElses theirs;
  TempDir out;
  const std::string scenario = scenario_at(out, theirs.server->url());
  SUBCASE("not named: cb-lab starts its own on a free port, and says so") {
    const Ran r = run({kLab, "run", "--dir", out / "cb", "--scenario", scenario});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("on a free port: " + std::to_string(theirs.server->port()) + " is in use") != std::string::npos);
    CHECK(theirs.epoch() == 1);    // never reset
    CHECK(theirs.entries() == 1);  // and nothing of the run in it
  }
  SUBCASE("named with --server: used, and its record reset for the run") {
    const Ran r = run({kLab, "run", "--dir", out / "cb", "--scenario", scenario, "--server", theirs.server->url()});
    CHECK(r.exit_code == 0);
    CHECK(theirs.epoch() == 2);
  }
  SUBCASE("named by CB_SERVER, as cb-grade --run sets it: the same") {
    const Ran r =
        run({kLab, "run", "--dir", out / "cb", "--scenario", scenario}, {}, {"CB_SERVER=" + theirs.server->url()});
    CHECK(r.exit_code == 0);
    CHECK(theirs.epoch() == 2);
  }
}

TEST_CASE("cb-lab run: finding the scenario's port taken sends nothing to the server there") {
  // A grader's server is locked, and keeps even a refused admin request in its record as evidence
  // against the program it grades: a health check from a lab run on the same machine, asking
  // whether the port was free, was once charged to a student being graded there.
  flaky::ServerOptions o;
  o.port = 0;
  o.admin_token = "the grader's";
  auto graders = flaky::FlakyServer::start(o).value();
  TempDir out;
  const std::string scenario = scenario_at(out, graders->url());
  const Ran r = run({kLab, "run", "--dir", out / "cb", "--scenario", scenario});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("on a free port: " + std::to_string(graders->port()) + " is in use") != std::string::npos);
  CHECK(graders->record().read(0, 100).entries.empty());
}

TEST_CASE("cb-lab step: step 1 starts a server of its own in the background, and the later steps use it") {
  SomeoneElses theirs;
  TempDir out;
  const std::string scenario = scenario_at(out, theirs.server->url());
  const Ran first = run({kLab, "step", "1", "--dir", out / "cb", "--scenario", scenario});
  REQUIRE(first.exit_code == 0);
  const int pid = session_server_pid(out / "cb");
  CHECK(first.out.find("in the background (pid " + std::to_string(pid) + ")") != std::string::npos);
  SUBCASE("step 2 uses it, and step 1 again reuses it rather than starting another") {
    CHECK(run({kLab, "step", "2", "--dir", out / "cb"}).exit_code == 0);
    const Ran again = run({kLab, "step", "1", "--dir", out / "cb"});
    CHECK(again.exit_code == 0);
    CHECK(again.out.find("in the background") == std::string::npos);
    CHECK(session_server_pid(out / "cb") == pid);
  }
  SUBCASE("when it is gone, a later step says so instead of grading on a new, empty record") {
    // A pidfd becomes readable when the process exits: waiting on it is waiting for the event.
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    REQUIRE(pidfd >= 0);
    REQUIRE(::kill(pid, SIGTERM) == 0);
    pollfd exited{pidfd, POLLIN, 0};
    REQUIRE(::poll(&exited, 1, 10'000) == 1);
    ::close(pidfd);
    const Ran r = run({kLab, "step", "2", "--dir", out / "cb"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is gone, and with it their record: run `cb-lab step 1` again") != std::string::npos);
  }
  ::kill(pid, SIGTERM);
  CHECK(theirs.epoch() == 1);
  CHECK(theirs.entries() == 1);
}

// Forked without an exec, the server would show in ps as the command that started it: a step
// that looks as if it never ended.
TEST_CASE("cb-lab step 1: the server it leaves running shows in ps as a flaky server") {
  SomeoneElses theirs;
  TempDir out;
  const std::string scenario = scenario_at(out, theirs.server->url());
  REQUIRE(run({kLab, "step", "1", "--dir", out / "cb", "--scenario", scenario}).exit_code == 0);
  const int pid = session_server_pid(out / "cb");
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string args = slurp(proc + "/cmdline");
  std::replace(args.begin(), args.end(), '\0', ' ');
  CHECK_MESSAGE(args.rfind("flaky-server 127.0.0.1:", 0) == 0, args);
  CHECK(args.find("step") == std::string::npos);
  CHECK(slurp(proc + "/comm") == "flaky-server\n");
  ::kill(pid, SIGTERM);
}

TEST_CASE("cb-lab step 1: the background server keeps none of the descriptors cb-lab was given") {
  SomeoneElses theirs;
  TempDir out;
  const std::string scenario = scenario_at(out, theirs.server->url());
  // fd 3 is a copy of the shell's stdout, the pipe run() reads to its end: a daemon that kept it
  // would hold the pipeline open until it is killed (run() would end at its 20 s bound, exit 137).
  const Ran r = run({"/bin/sh", "-c", "exec 3>&1; " + kLab + " step 1 --dir " + out / "cb" + " --scenario " + scenario},
                    {}, {}, std::chrono::seconds{20});
  CHECK(r.exit_code == 0);
  ::kill(session_server_pid(out / "cb"), SIGTERM);
}

TEST_CASE("cb-lab run passes 8/8 beside 1000 idle connections and 100 half-sent requests") {
  flaky::ServerOptions o;
  o.port = 0;
  const auto server = flaky::FlakyServer::start(o).value();
  std::vector<std::unique_ptr<RawSocket>> held;
  for (int i = 0; i < 1000; ++i) held.push_back(std::make_unique<RawSocket>(server->port()));
  for (int i = 0; i < 100; ++i) {
    held.push_back(std::make_unique<RawSocket>(server->port()));
    REQUIRE(held.back()->send("GET /count HTTP/1.1\r\nHost: x\r\n"));  // ...and the blank line never comes
  }
  TempDir out;
  const Ran r = run({kLab, "run", "--dir", out.path(), "--server", server->url()});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("not answering as a flaky server") == std::string::npos);
}

}  // namespace
}  // namespace cb::testing

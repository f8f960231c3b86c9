// Memory, as the kernel counts it: real runtimes that reserve far more address space than they
// touch start under the default limits (a JVM, Node's fetch, a program built with ASan), and
// memory taken for real is stopped and named, however it is taken: in one process, over four,
// or in memory files that belong to no process. Where the box has a control group (the grader
// is root here) it holds the whole box; elsewhere RLIMIT_DATA holds each process and the filter
// refuses memory files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "grading.h"
#include "process.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

// The box has a control group when the grader is root on this machine (cgroup v1 or v2).
bool box_wide(const Setup& s) { return s.root; }

std::string memory_bound(const Graded& g) { return g.report["program"]["sandbox"].value("memory_bound", ""); }

void check_bound(const Setup& s, const Graded& g) {
  INFO(g.report["program"]["sandbox"].dump());
  if (box_wide(s))
    CHECK(memory_bound(g).rfind("cgroup v", 0) == 0);
  else
    CHECK(memory_bound(g) == "RLIMIT_DATA");
}

TEST_CASE("sandbox memory: a JVM and Node's fetch start under the default limits") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": java -version").c_str()) {
      if (skip_unless(std::system("command -v java >/dev/null 2>&1") == 0, "no java on this machine")) return;
      Submission sub(s, {});
      TempDir out;
      const Graded g = grade(s, sub, out, R"(java -version 2>&1; echo "ATTACK {\"java\": $?}")");
      check_containment(s, g);
      check_bound(s, g);
      REQUIRE_MESSAGE(g.attack.is_object(), g.report["run_output"]);
      CHECK(g.attack["java"] == 0);
      CHECK(g.report["program"]["limit_hit"].is_null());
    }
    SUBCASE((s.name() + ": Node's fetch").c_str()) {
      Submission sub(s, {"node_fetch.js"});
      TempDir out;
      const Graded g = grade(s, sub, out, "node node_fetch.js");
      check_containment(s, g);
      REQUIRE_MESSAGE(g.attack.is_object(), g.report["run_output"]);
      CHECK(g.attack["status"] == 200);
    }
  }
}

TEST_CASE("sandbox memory: a program built with ASan starts where the box has a control group") {
  TempDir build;
  build.write("hello.cpp", "#include <cstdio>\nint main() { std::puts(\"ATTACK {\\\"asan\\\": 0}\"); }\n");
  const Ran cc = run({"/usr/bin/g++", "-fsanitize=address", "-o", build / "hello", build / "hello.cpp"});
  if (skip_unless(cc.exit_code == 0, "no ASan here: " + cc.err)) return;
  for (const Setup& s : setups()) {
    if (!box_wide(s)) continue;  // RLIMIT_DATA counts ASan's shadow: --limit-memory unlimited (docs/GRADER.md)
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {});
      std::filesystem::copy_file(build / "hello", sub.dir / "hello");
      hand_over(sub.dir.path(), s, false);
      ::chmod((sub.dir / "hello").c_str(), 0755);
      TempDir out;
      // LeakSanitizer's check at exit stops the other threads with ptrace, which the filter
      // refuses: the course turns it off, as docs/GRADER.md says.
      const Graded g = grade(s, sub, out, "./hello", {"--program-env", "ASAN_OPTIONS=detect_leaks=0"});
      check_containment(s, g);
      check_bound(s, g);
      REQUIRE_MESSAGE(g.attack.is_object(), g.report["run_output"]);
      CHECK(g.report["program"]["exit_code"] == 0);
    }
  }
}

TEST_CASE("sandbox memory: memory taken for real is stopped and named, however it is taken") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": 3 GiB in one process").c_str()) {
      Submission sub(s, {"memory.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 memory.py");
      check_containment(s, g);
      check_bound(s, g);
      // Killed by the kernel (no line at all), or refused (it says it got nothing).
      if (g.attack.is_object()) CHECK(g.attack["allocated"] == 0);
      CHECK(g.report["program"]["limit_hit"] == "memory");
      CHECK(g.report["program"]["limit_text"].get<std::string>().find("2 GiB") != std::string::npos);
    }
    SUBCASE((s.name() + ": 6,000 MiB of memory files").c_str()) {
      Submission sub(s, {"memfd_hoard.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 memfd_hoard.py");
      check_containment(s, g);
      check_bound(s, g);
      INFO(g.report["run_output"]);
      if (box_wide(s)) {
        // The files are the box's memory: it is stopped at 2 GiB.
        if (g.attack.is_object()) CHECK(g.attack["held_mib"].get<int>() < 2048);
        CHECK(g.report["program"]["limit_hit"] == "memory");
      } else {
        // No group to charge them to: refused at the first.
        REQUIRE(g.attack.is_object());
        CHECK(g.attack["held_mib"] == 0);
        CHECK(g.attack["refused"].get<std::string>().find("PermissionError") != std::string::npos);
      }
    }
    // Without a control group nothing but a group could see the four together, and each is
    // within its own 2 GiB: only where the box has one (6 GiB of this machine otherwise).
    if (!box_wide(s)) continue;
    SUBCASE((s.name() + ": 6 GiB over four processes").c_str()) {
      Submission sub(s, {"memory_spread.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 memory_spread.py");
      check_containment(s, g);
      check_bound(s, g);
      INFO(g.report["run_output"]);
      CHECK(g.report["program"]["limit_hit"] == "memory");
      CHECK(g.report["program"]["limit_text"] == "the memory limit (2 GiB for the whole box, as the kernel counts it)");
    }
  }
}

// The findings: under --limit-memory 128M a program held 512 MiB in loopback TCP buffers, its own
// sockets at both ends (cgroup v1 counts them only under a limit of their own), and no limit was
// named; in the root fallback, requests sent to the grader's server and never answered held
// 195-283 MiB of the kernel's memory on the grader's side. Where the box has a group its buffers
// are its memory, and the grader's server holds at most 256 KiB a connection (64 MiB).
TEST_CASE("sandbox memory: TCP buffers are the box's memory, and the grader's side of them is bounded") {
  for (const Setup& s : setups()) {
    if (!box_wide(s)) continue;
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"tcp_hoard.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 tcp_hoard.py", {"--limit-memory", "128M"});
      check_containment(s, g);
      REQUIRE_MESSAGE(g.attack.is_object(), g.report.dump());
      INFO(g.attack.dump());
      if (s.mode == "fallback") {
        CHECK(g.attack["held_mib"].get<int>() <= 128 + 64);
      } else {
        CHECK(g.attack["held_mib"].get<int>() <= 128);
        CHECK(g.report["program"]["limit_hit"] == "memory");
      }
    }
  }
}

// The IPC objects on the machine owned by a uid a box or the test's ordinary user has (58000 and
// up): "kind id" for each, from /proc/sysvipc, and the POSIX queues in /dev/mqueue.
std::set<std::string> boxes_ipc() {
  std::set<std::string> out;
  for (const char* kind : {"msg", "shm", "sem"}) {
    std::ifstream in(std::string("/proc/sysvipc/") + kind);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = [&] {
      std::vector<std::string> w;
      std::istringstream h(line);
      for (std::string x; h >> x;) w.push_back(x);
      return w;
    }();
    const auto col = std::find(header.begin(), header.end(), "uid") - header.begin();
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::vector<std::string> w;
      for (std::string x; row >> x;) w.push_back(x);
      if (static_cast<std::size_t>(col) < w.size() && std::stoul(w[static_cast<std::size_t>(col)]) >= 58000)
        out.insert(std::string(kind) + " " + w[1]);
    }
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/mqueue", ec))
    if (e.path().filename().string().rfind("cb-hoard-", 0) == 0) out.insert("mq " + e.path().filename().string());
  return out;
}

// The findings: in the root fallback, shared memory segments and message queues owned by the
// box's uid outlived the grading (the uid is leased to the next student); without a control
// group, hundreds of MiB sat in message queues nothing counted. Where the box shares the machine's
// IPC namespace every IPC call is refused; where no group counts the box, the kinds that hold
// memory are; and nothing outlives the grading anywhere.
TEST_CASE("sandbox memory: IPC objects are counted or refused, and none outlives the grading") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      const std::set<std::string> before = boxes_ipc();
      Submission sub(s, {"ipc_hoard.py"});
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 ipc_hoard.py");
      check_containment(s, g);
      REQUIRE_MESSAGE(g.attack.is_object(), g.report.dump());
      INFO(g.attack.dump());
      const json& made = g.attack["made"];
      const bool own_ipc = containment(g.report) == "namespaces";
      if (!own_ipc) {
        for (const char* kind : {"sysv_msg", "sysv_shm", "sysv_sem", "posix_mq"}) {
          CAPTURE(kind);
          CHECK(made[kind] == 0);
          CHECK(g.attack["refused"][kind] == "Operation not permitted");
        }
      } else if (!box_wide(s)) {
        for (const char* kind : {"sysv_msg", "sysv_shm", "posix_mq"}) {
          CAPTURE(kind);
          CHECK(made[kind] == 0);
        }
      } else {
        CHECK(made["sysv_msg"] == 64);  // in its own namespace, counted by its group, gone with both
      }
      CHECK(boxes_ipc() == before);
    }
  }
}

}  // namespace
}  // namespace cb::testing

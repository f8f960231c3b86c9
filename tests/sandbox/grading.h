#pragma once
// Grading a hostile program for real, as a test does: who runs cb-grade (root or an ordinary user)
// and in which sandbox mode, a submission folder of attack files, the JSON report and what the
// attack said of itself (its ATTACK line).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"
#include "temp_dir.h"

namespace cb::testing::grading {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const std::string kGrade = CB_GRADE_BIN;
inline const std::string kNoNamespaces = CB_NO_NAMESPACES_BIN;
inline const std::string kAttacks = std::string(CB_FIXTURES) + "/attacks";
inline const std::string kStudents = std::string(CB_FIXTURES) + "/students";
inline const std::string kPtyRun = std::string(CB_SANDBOX_TESTS) + "/pty_run.py";

// Who runs the grader, and in which sandbox mode.
struct Setup {
  bool root;         // false: an ordinary user (uid user_id())
  std::string mode;  // "auto" (the full sandbox here) or "fallback"
  [[nodiscard]] std::string name() const { return std::string(root ? "root" : "user") + ", --sandbox " + mode; }
};

inline bool am_root() { return ::geteuid() == 0; }

// An ordinary user for the grader: no passwd entry needed; one per test process, so tests in
// parallel never share one.
inline uid_t user_id() { return static_cast<uid_t>(58000 + ::getpid() % 1000); }

// The four setups where the tests run as root (CI); the user's two otherwise.
inline std::vector<Setup> setups() {
  if (am_root()) return {{true, "auto"}, {true, "fallback"}, {false, "auto"}, {false, "fallback"}};
  return {{false, "auto"}, {false, "fallback"}};
}

// A directory the grader's user can read (a submission) or write (an output directory).
inline void hand_over(const std::string& dir, const Setup& s, bool writable) {
  ::chmod(dir.c_str(), 0755);
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    ::chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
    if (writable && !s.root && am_root()) (void)::lchown(e.path().c_str(), user_id(), user_id());
  }
  if (writable && !s.root && am_root()) (void)::chown(dir.c_str(), user_id(), user_id());
}

// The grader where the ordinary user can run it: the build tree may be under a home it cannot
// enter, so a copy in a directory of its own.
inline const std::string& grader_for(const Setup& s) {
  if (s.root || !am_root()) return kGrade;
  static TempDir dir;
  static const std::string copy = [] {
    fs::copy_file(kGrade, dir / "cb-grade");
    ::chmod(dir.path().c_str(), 0755);
    ::chmod((dir / "cb-grade").c_str(), 0755);
    return dir / "cb-grade";
  }();
  return copy;
}

// argv run as the setup's user.
inline std::vector<std::string> as(const Setup& s, std::vector<std::string> argv) {
  if (s.root || !am_root()) return argv;
  const std::string id = std::to_string(user_id());
  argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid", id, "--regid", id, "--clear-groups", "--"});
  return argv;
}

// A submission folder holding the given attack files (and, with `breaker`, a right solution as
// breaker.py).
struct Submission {
  TempDir dir;
  Submission(const Setup& s, const std::vector<std::string>& attacks, bool breaker = false) {
    for (const std::string& a : attacks) fs::copy_file(kAttacks + "/" + a, dir / a);
    if (breaker) fs::copy_file(kStudents + "/good_breaker.py", dir / "breaker.py");
    hand_over(dir.path(), s, false);
  }
};

struct Graded {
  Ran ran;
  json report;  // null when the output was not JSON
  json attack;  // what the attack said of itself (its ATTACK line), null when it said nothing
};

inline json attack_line(const std::string& output) {
  const auto at = output.rfind("ATTACK ");
  if (at == std::string::npos) return nullptr;
  const auto end = output.find('\n', at);
  return json::parse(output.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7), nullptr,
                     false);
}

// cb-grade --run COMMAND on the submission, as the setup says, in JSON.
inline Graded grade(const Setup& s, const Submission& sub, const TempDir& out, const std::string& command,
                    const std::vector<std::string>& extra = {},
                    std::chrono::milliseconds limit = std::chrono::seconds{90}) {
  hand_over(out.path(), s, true);
  std::vector<std::string> argv{grader_for(s), "--run",     command, "--submission", sub.dir.path(), "--dir",
                                out.path(),    "--sandbox", s.mode,  "--format",     "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Graded g{run(as(s, argv), "", {}, limit), nullptr, nullptr};
  g.report = json::parse(g.ran.out, nullptr, false);
  if (g.report.is_discarded()) g.report = nullptr;
  if (g.report.is_object() && g.report.contains("run_output")) g.attack = attack_line(g.report["run_output"]);
  return g;
}

inline std::string containment(const json& report) {
  if (!report.is_object() || !report.contains("program")) return "";
  return report["program"]["sandbox"]["containment"].get<std::string>();
}

// What the setup must run under here: the fallback when asked; the full sandbox as root; as an
// ordinary user, the full sandbox where the kernel gives unprivileged user namespaces.
inline void check_containment(const Setup& s, const Graded& g) {
  REQUIRE_MESSAGE(g.report.is_object(), g.ran.out, g.ran.err);
  const std::string got = containment(g.report);
  if (s.mode == "fallback") {
    CHECK(got == "fallback");
  } else if (s.root) {
    CHECK(got == "namespaces");
  } else if (got != "namespaces") {
    MESSAGE("no unprivileged user namespaces here: " << g.report["program"]["sandbox"]["why"]);
    CHECK(got == "fallback");
  }
  CHECK(g.report["program"]["sandbox"]["trusted"] == true);
}

// Every file under `dir` with its bytes: a folder compared before and after.
inline std::map<std::string, std::string> contents(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? slurp(e.path().string()) : "<dir>";
  return out;
}
}  // namespace cb::testing::grading

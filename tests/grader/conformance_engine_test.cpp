// The project's own engine, as a program on the conformance protocol (cb-lab conform) in the
// grader's box, agrees with the model on every trace; and a program that stops answering is
// named at the call it stopped on.
#include <doctest/doctest.h>

#include <filesystem>

#include "temp_dir.h"

#include "cb/grade/conformance_check.h"
#include "cb/grade/conformance_process.h"
#include "cb/grade/conformance_traces.h"

namespace cb::grade::conformance {
namespace {

TEST_CASE("conformance traces: the project's engine, as a process on the protocol, agrees on every trace") {
  // The engine's program in a submission of its own, run in the grader's sandbox as any is, where
  // the harness is let answer (as refuse_prebuilt none lets it; cb/sandbox/beacon.h).
  cb::testing::TempDir submission;
  std::filesystem::copy_file(CB_LAB_BIN, submission / "cb-lab");
  sandbox::Policy policy;
  policy.harness_may_answer = true;
  if (CB_SANITIZED != 0) {  // cb-lab carries the sanitizer too: see sanitized.h
    policy.limits.memory_bytes = sandbox::kUnlimited;
    policy.env = {"ASAN_OPTIONS=detect_leaks=0"};
  }
  sandbox::Sandbox sb{policy};
  auto box = sb.box(submission.path(), "");
  REQUIRE_MESSAGE(box.ok(), (box.ok() ? "" : box.error().message));
  ProcessOptions options;
  options.command = "./cb-lab conform";
  options.sandbox = &sb;
  options.box = box->get();
  options.trace_limit = std::chrono::seconds{10};
  const Program engine = process_programs(options).run;
  for (int i = 0; i < 40; ++i) {
    const Trace t = generate(7, i);
    const Replies replies = engine(t);
    const auto d = compare(t, replies.answers);
    CAPTURE(i);
    CHECK_MESSAGE(!d, (d ? explain(*d, t, replies).text : std::string()));
    CHECK(replies.problem.empty());
  }
  SUBCASE("and a program that stops answering is named at the call it stopped on") {
    // Answers the first call, then exits on reading the second: the end of its output, not a wait.
    options.command =
        "read settings; read call; echo '{\"decision\":\"permitted\",\"state\":\"CLOSED\"}'; read call; exit 3";
    const Program quits = process_programs(options).run;
    const Trace t{lab_settings(), {{0, 200, false}, {1, 200, false}, {2, 200, false}}};
    const Replies replies = quits(t);
    const auto d = compare(t, replies.answers);
    REQUIRE(d.has_value());
    CHECK(d->at == 1);
    CHECK_FALSE(d->got.has_value());
    CHECK(explain(*d, t, replies).text == "gave no answer to this call: closed its output (it exited with 3)");
  }
}

}  // namespace
}  // namespace cb::grade::conformance

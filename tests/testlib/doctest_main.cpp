// Every test program's main. CTest runs one case a run, by name; a name doctest cannot match
// (a `;` splits it in CMake's lists) would run nothing and pass, so a run that asked for cases and
// ran none fails instead.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

unsigned cases_ran = 0;  // written once, by the listener at the end of the run

struct CasesRan : doctest::IReporter {
  explicit CasesRan(const doctest::ContextOptions& /*unused*/) {}
  void report_query(const doctest::QueryData& /*unused*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override { cases_ran = stats.numTestCasesPassingFilters; }
  void test_case_start(const doctest::TestCaseData& /*unused*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*unused*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*unused*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*unused*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*unused*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*unused*/) override {}
  void log_message(const doctest::MessageData& /*unused*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*unused*/) override {}
};
DOCTEST_REGISTER_LISTENER("cases-ran", 1, CasesRan);

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit()) return rc;  // a query (--list-test-cases, --help): nothing was to run
  if (rc == 0 && cases_ran == 0) {
    std::fprintf(stderr, "%s: no test case matches what was asked: nothing ran\n", argc > 0 ? argv[0] : "test");
    return 1;
  }
  return rc;
}

#include "cb/grade/lab_spec.h"

namespace cb::grade::lab {
namespace {

constexpr std::string_view kTitles[] = {
    "",
    "The flaky server runs and /count answers",
    "3 calls to /fast leave the breaker CLOSED",
    "5 calls to /always500 open it on the 3rd failure",
    "10 calls while OPEN are refused at once, none reaching the server",
    "After the 3 s cool-down, one call finds it HALF_OPEN",
    "Successful trials in HALF_OPEN close it (3 permitted)",
    "A new breaker ignores 4xx: 10 x /bad leave it CLOSED with 0 failures",
    "transitions.log holds the three transitions in order",
};

// Pseudo-prerequisites: "server" is the server's record, whatever it holds (absent when there is
// no server to ask); "record" is that record holding one whole run (s1.once says when not);
// "file:NAME" is a lab file that parsed. Each file's contract is judged, and charged, in one
// step only (state.json where the run leaves it, fastfail.txt in 4, ignore4xx.json in 7,
// transitions.log in 8); other steps that read it skip what they cannot judge without it.
std::vector<CheckSpec> make_checks() {
  using W = When;
  // A table, one check a line.
  // clang-format off
  return {
      {"s1.server", 1, W::Always, "the flaky server answers, with its record of every request", true, {"server"}},
      {"s1.once", 1, W::Always, "the record holds one whole run of the lab", true, {"s1.server"}},
      {"s1.count", 1, W::Finished, "/count was asked and answered {\"count\": N}", true, {"record"}},
      {"s1.admin", 1, W::Always, "the program left the server's admin endpoints alone", true, {"server"}},

      {"s2.state_contract", 2, W::JustAfter, "state.json follows the contract", false, {}},
      {"s2.state", 2, W::JustAfter, "state.json: \"state\" is \"CLOSED\"", false, {"s2.state_contract"}},
      {"s2.failures", 2, W::JustAfter, "state.json: \"failures\" is 0", false, {"s2.state_contract"}},
      {"s2.window", 2, W::JustAfter, "state.json: \"window_size\" is 10", false, {"s2.state_contract"}},
      {"s2.fast_first", 2, W::Always, "the server received 3 /fast first", true, {"record"}},

      {"s3.state_contract", 3, W::JustAfter, "state.json follows the contract", false, {}},
      {"s3.state", 3, W::JustAfter, "state.json: \"state\" is \"OPEN\"", false, {"s3.state_contract"}},
      {"s3.failures", 3, W::JustAfter, "state.json: \"failures\" is the window's 3 that opened it (or 0)", false,
       {"s3.state_contract"}},
      {"s3.trip", 3, W::Always, "the breaker opened on the 3rd /always500", true, {"record"}},

      {"s4.state_contract", 4, W::JustAfter, "state.json follows the contract", false, {}},
      {"s4.state", 4, W::JustAfter, "state.json: \"state\" is \"OPEN\"", false, {"s4.state_contract"}},
      {"s4.fastfail_contract", 4, W::Always, "fastfail.txt follows the contract", false, {}},
      {"s4.blocked", 4, W::Always, "fastfail.txt: blocked=10", false, {"s4.fastfail_contract"}},
      {"s4.before_after", 4, W::Always, "fastfail.txt: before equals after", false, {"s4.fastfail_contract"}},
      {"s4.max_ms", 4, W::Always, "fastfail.txt: max_ms < 50", false, {"s4.fastfail_contract"}},
      {"s4.counts_real", 4, W::Always, "fastfail.txt: before and after are /count answers from the server", true,
       {"s4.fastfail_contract", "record"}},
      {"s4.before_at_trip", 4, W::Always, "fastfail.txt: before was taken after the breaker opened", true,
       {"s4.fastfail_contract", "record"}},
      {"s4.none_reached", 4, W::Always, "no call reached the server while the breaker was OPEN", true, {"record"}},

      {"s5.state_contract", 5, W::JustAfter, "state.json follows the contract", false, {}},
      {"s5.state", 5, W::JustAfter, "state.json: \"state\" is \"HALF_OPEN\"", false, {"s5.state_contract"}},
      {"s5.failures", 5, W::JustAfter, "state.json: \"failures\" is 0 (HALF_OPEN counts its trials only)", false,
       {"s5.state_contract"}},
      {"s5.log_wait", 5, W::Finished, "transitions.log: OPEN->HALF_OPEN at least 3 s after CLOSED->OPEN", false,
       {"file:transitions.log"}},
      {"s5.waited", 5, W::Always, "the first call after the breaker opened came at least 3 s later", true, {"record"}},

      {"s6.state_contract", 6, W::Always, "state.json follows the contract", false, {}},
      {"s6.state", 6, W::Always, "state.json: \"state\" is \"CLOSED\"", false, {"s6.state_contract"}},
      {"s6.permitted", 6, W::Always, "state.json: \"permitted_in_half_open\" >= 3", false, {"s6.state_contract"}},
      {"s6.trials", 6, W::Always, "at least 3 successful trial calls reached the server", true, {"record"}},
      {"s6.closed_after_trials", 6, W::Finished, "HALF_OPEN->CLOSED came after the server answered the 3rd trial", true,
       {"s6.trials", "file:transitions.log", "record"}},

      {"s7.ignore_contract", 7, W::Always, "ignore4xx.json follows the contract", false, {}},
      {"s7.state", 7, W::Always, "ignore4xx.json: \"state\" is \"CLOSED\"", false, {"s7.ignore_contract"}},
      {"s7.failures", 7, W::Always, "ignore4xx.json: \"failures\" is 0", false, {"s7.ignore_contract"}},
      {"s7.bad_all", 7, W::Always, "the server received all 10 /bad", true, {"record"}},

      {"s8.log_contract", 8, W::Always, "transitions.log follows the contract", false, {}},
      {"s8.order", 8, W::Always, "transitions.log: exactly CLOSED->OPEN, OPEN->HALF_OPEN, HALF_OPEN->CLOSED", false,
       {"s8.log_contract"}},
      {"s8.increasing", 8, W::Always, "transitions.log: the timestamps never go backwards", false, {"s8.order"}},
      {"s8.seen", 8, W::Always, "transitions.log: the server saw each transition happen", true, {"s8.order", "record"}},
  };
  // clang-format on
}

}  // namespace

std::string_view step_title(int step) noexcept { return step >= 1 && step <= kSteps ? kTitles[step] : ""; }

const std::vector<CheckSpec>& checks() {
  static const std::vector<CheckSpec> all = make_checks();
  return all;
}

const CheckSpec* find_check(std::string_view id) noexcept {
  for (const CheckSpec& c : checks())
    if (c.id == id) return &c;
  return nullptr;
}

bool reads_files(int step) {
  for (const CheckSpec& c : checks()) {
    if (c.step != step) continue;
    if (!c.needs_server) return true;
    for (std::string_view need : c.needs)
      if (need.rfind("file:", 0) == 0) return true;
  }
  return false;
}

}  // namespace cb::grade::lab

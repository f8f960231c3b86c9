// Step 8: transitions.log, judged once, here.
#include "cb/grade/check.h"
#include "lab_checks.h"

namespace cb::grade {
namespace {

// What its checks say, the lab's values and the moment's ({got}, {line}, ...) filled in.
constexpr std::string_view kSayOrderCount = "{got} transition(s), expected {transition_count}";

constexpr CheckDef kLogContract{"s8.log_contract", When::Always, "{transitions_file} follows the contract",
                                nullptr,           {},           FileRole::Transitions};

void s8_order(CheckVerdict& v, const Inputs& in, bool) {
  const auto& t = *in.transitions.value;
  std::vector<std::string> got;
  for (const auto& l : t) got.push_back(l.from + "->" + l.to);
  const std::vector<std::string>& want = in.spec.transitions;
  std::string message;
  if (got.size() != want.size()) {
    message = in.spec.fill(kSayOrderCount, {{"got", std::to_string(got.size())}});
  } else {
    for (std::size_t i = 0; i < want.size() && message.empty(); ++i)
      if (got[i] != want[i]) message = "line " + str(t[i].line) + " is " + got[i] + ", expected " + want[i];
  }
  v.expect(message.empty(), message, want, got);
}
constexpr CheckDef kOrder{
    "s8.order", When::Always, "{transitions_file}: exactly {transition_list}", s8_order, {after(kLogContract)}};

bool stamped(const std::vector<TransitionLine>& log) {
  return std::all_of(log.begin(), log.end(), [](const TransitionLine& l) { return l.at_us.has_value(); });
}

void s8_increasing(CheckVerdict& v, const Inputs& in, bool) {
  const auto& l = *in.transitions.value;
  if (!stamped(l)) return v.skip(in.spec.files.transitions + " has no timestamps (the contract requires them)");
  // The cool-down between the first two is step 5's rule, judged there; here only the log's own
  // consistency.
  bool increasing = true;
  for (std::size_t i = 1; i < l.size(); ++i) increasing = increasing && *l[i - 1].at_us <= *l[i].at_us;
  v.expect(increasing, "the timestamps go backwards", "increasing", increasing ? "increasing" : "backwards");
}
constexpr CheckDef kIncreasing{"s8.increasing",
                               When::Always,
                               "{transitions_file}: the timestamps never go backwards",
                               s8_increasing,
                               {after(kOrder)}};

void s8_seen(CheckVerdict& v, const Inputs& in, bool) {
  const auto& l = *in.transitions.value;
  if (!stamped(l)) return v.skip(in.spec.files.transitions + " has no timestamps (the contract requires them)");
  const LabRun& run = *in.run;
  // The log's times against the server's: CLOSED->OPEN within a second of the burst's last
  // /always500, HALF_OPEN->CLOSED no earlier than the first trial. A second of slack covers
  // clocks read at slightly different moments; a log from another run is off by far more.
  if (!run.trip || run.trials.empty() || !run.lab[*run.trip]->wall_us || !run.trials.front()->wall_us)
    return v.fail("the server's record has no tripping " + kFailingPath +
                  " followed by trial calls for these transitions");
  const std::int64_t trip = *run.lab[*run.trip]->wall_us;
  const std::int64_t first_trial = *run.trials.front()->wall_us;
  constexpr std::int64_t kSlackUs = 1'000'000;
  const TransitionLine& opened = l.front();
  const TransitionLine& closed = l.back();
  // Each stamp is the interval its last digit covers: it is near enough when any moment of it is.
  const bool open_ok = *opened.at_us + opened.resolution_us - 1 >= trip - kSlackUs && *opened.at_us <= trip + kSlackUs;
  const bool close_ok =
      *closed.at_us + closed.resolution_us >= first_trial && *closed.at_us <= first_trial + 60 * kSlackUs;
  v.expect(open_ok && close_ok,
           !open_ok
               ? "CLOSED->OPEN is stamped " + seconds_text(static_cast<double>(*opened.at_us - trip) / 1000.0) +
                     " away from the " + kFailingPath + " that opened it: the log is not from the run the server saw"
               : "HALF_OPEN->CLOSED is stamped outside the trial calls the server saw: the log is not from this run",
           nullptr, nullptr);
}
constexpr CheckDef kSeen{"s8.seen",
                         When::Always,
                         "{transitions_file}: the server saw each transition happen",
                         s8_seen,
                         {after(kOrder), kRecord}};

constexpr const CheckDef* kStep[] = {&kLogContract, &kOrder, &kIncreasing, &kSeen};

}  // namespace

std::span<const CheckDef* const> step8_checks() noexcept { return kStep; }

}  // namespace cb::grade

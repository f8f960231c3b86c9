#include "step_builder.h"

#include <algorithm>
#include <set>

#include "cb/grade/grade.h"
#include "lab_checks.h"

namespace cb::grade {

namespace {

bool applies(const CheckDef& c, bool just_after) {
  return c.when == When::Always || (c.when == When::JustAfter) == just_after;
}

// The check of a file's contract that this report shows, where the file's problem is said in
// full; null when no step shown judges it.
const CheckDef* contract_shown(FileRole role, const Prerequisites& pre, bool just_after) {
  for (int step : pre.shown_steps)
    for (const CheckDef* c : checks_of_step(step))
      if (c->contract == role && applies(*c, just_after)) return c;
  return nullptr;
}

// A file that is missing is said so in a few words; any other problem is pointed to where it is
// said in full.
std::string needs_unusable(const std::string& file, const std::string& problem, std::string_view contract_id) {
  if (problem == file + " is missing") return "needs " + file + ", which is missing";
  return "needs " + file + ", which cannot be used (" + std::string(contract_id) + " says why)";
}

const Check* reported(const std::vector<Check>& done, std::string_view id) {
  for (const Check& c : done)
    if (c.id == id) return &c;
  return nullptr;
}

// Why check `c` may not run, or nothing when every need is met. The checks it needs are listed
// before it in its step, so they have all been decided.
struct Unmet {
  Unmet(std::string why, std::string on = {})  // NOLINT(google-explicit-constructor): most are a line alone
      : message(std::move(why)), stands_on(std::move(on)) {}
  std::string message;
  std::string stands_on;  // the check it needs that did not pass, when that is why
};
std::optional<Unmet> unmet(const CheckDef& c, const LabSpec& spec, const Prerequisites& pre, bool just_after,
                           const std::vector<Check>& done, const std::set<std::string, std::less<>>& absent) {
  for (const Need& need : c.needs) {
    switch (need.kind) {
      case Need::Kind::None: break;
      case Need::Kind::Server:
        if (!pre.has_record) return pre.no_record_reason;
        break;
      case Need::Kind::Record:
        if (!pre.has_record) return pre.no_record_reason;
        if (!pre.record_unusable.empty()) return "not judged on the record: " + pre.record_unusable + " (step 1)";
        break;
      case Need::Kind::Numbers:
        if (!pre.other_numbers.empty()) return std::string(kOtherNumbers);
        break;
      case Need::Kind::File: {
        const std::string_view role = role_name(need.file);
        const auto it = pre.file_problems.find(role);
        if (it == pre.file_problems.end()) break;
        const std::string file(spec.files.of(role));
        // Said in full once, by the check of the file's contract, when the report shows it.
        if (const CheckDef* contract = contract_shown(need.file, pre, just_after))
          return needs_unusable(file, it->second, contract->id);
        return "needs " + file + ": " + it->second;
      }
      case Need::Kind::Check: {
        const std::string id(need.check->id);
        const Check* done_need = reported(done, id);
        if (done_need == nullptr) return "needs " + id + ", which was not checked";
        if (done_need->status == Status::Pass) break;
        if (absent.count(id) != 0) return done_need->message;
        // A file's contract is named by the file, its failure said just above; any other check by
        // its id, so the reader can find the failure it stands on.
        if (need.check->contract != FileRole::None) {
          const std::string_view role = role_name(need.check->contract);
          const auto problem = pre.file_problems.find(role);
          return needs_unusable(std::string(spec.files.of(role)),
                                problem == pre.file_problems.end() ? done_need->message : problem->second, id);
        }
        return Unmet{"not judged: it stands on " + id + ", which did not pass: " + done_need->message, id};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

void settle(StepReport& step, double points) {
  bool any_fail = false;
  bool any_error = false;
  bool any_pass = false;
  for (const Check& c : step.checks) {
    any_fail = any_fail || c.status == Status::Fail;
    any_error = any_error || c.status == Status::Error;
    // A file that follows its contract says nothing of the step's rule: a step whose other
    // checks were all skipped (their premise did not happen) is not passed on its file's form.
    const CheckDef* d = find_check(c.id);
    const bool contract = d != nullptr && d->contract != FileRole::None;
    any_pass = any_pass || (c.status == Status::Pass && !contract);
  }
  step.status = any_fail ? Status::Fail : any_error ? Status::Error : any_pass ? Status::Pass : Status::Skip;
  step.max_score = points;
  step.score = step.status == Status::Pass ? points : 0.0;
}

void CheckVerdict::set(Status status, std::string message, nlohmann::json expected, nlohmann::json actual) {
  twice_ = twice_ || reported_;
  reported_ = true;
  status_ = status;
  message_ = std::move(message);
  expected_ = std::move(expected);
  actual_ = std::move(actual);
}

void CheckVerdict::pass(nlohmann::json expected, nlohmann::json actual) {
  set(Status::Pass, {}, std::move(expected), std::move(actual));
}

void CheckVerdict::pass_noting(std::string note, nlohmann::json expected, nlohmann::json actual) {
  set(Status::Pass, std::move(note), std::move(expected), std::move(actual));
}

void CheckVerdict::fail(std::string message, nlohmann::json expected, nlohmann::json actual) {
  set(Status::Fail, std::move(message), std::move(expected), std::move(actual));
}

void CheckVerdict::skip(std::string reason) { set(Status::Skip, std::move(reason), nullptr, nullptr); }

void CheckVerdict::skip_absent(std::string reason) {
  skip(std::move(reason));
  absent_ = true;
}

void CheckVerdict::expect(bool ok, const std::string& message, nlohmann::json expected, nlohmann::json actual) {
  if (ok) {
    pass(std::move(expected), std::move(actual));
  } else {
    fail(message, std::move(expected), std::move(actual));
  }
}

StepReport check_step(int step, bool just_after, const Inputs& in, const Prerequisites& pre, double points) {
  const auto started = std::chrono::steady_clock::now();
  StepReport report;
  report.step = step;
  // Checks skipped because what they need is absent: their dependants inherit the reason.
  std::set<std::string, std::less<>> absent;
  for (const CheckDef* def : checks_of_step(step)) {
    if (!applies(*def, just_after)) continue;
    Check c{std::string(def->id), in.spec.fill(def->title), Status::Skip, {}, nullptr, nullptr, needs_server(*def), {}};
    if (auto why = unmet(*def, in.spec, pre, just_after, report.checks, absent)) {
      c.message = std::move(why->message);
      c.stands_on = std::move(why->stands_on);
      absent.insert(c.id);
    } else {
      // A file's contract is one rule for every file, chosen by the check's `contract`.
      CheckVerdict v;
      if (def->contract == FileRole::None) {
        def->body(v, in, just_after);
      } else {
        contract_check(v, in, role_name(def->contract));
      }
      if (!v.reported_ || v.twice_) {
        c.status = Status::Error;
        c.message = std::string("the check's code gave ") + (v.twice_ ? "two verdicts" : "no verdict") +
                    " (a grader bug: please report it)";
      } else {
        c.status = v.status_;
        c.message = std::move(v.message_);
        c.expected = std::move(v.expected_);
        c.actual = std::move(v.actual_);
        if (v.absent_) absent.insert(c.id);
      }
    }
    report.checks.push_back(std::move(c));
  }
  settle(report, points);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace cb::grade

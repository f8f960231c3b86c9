#include "step_builder.h"

#include <algorithm>
#include <stdexcept>

namespace cb::grade {

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Skip: return "skip";
    case Status::Error: return "error";
  }
  return "?";
}

namespace {

const lab::CheckSpec& spec_of(std::string_view id) {
  const lab::CheckSpec* spec = lab::find_check(id);
  // A programming error in the grader, caught by every test that grades anything.
  if (spec == nullptr) throw std::logic_error("cb-grade: no check has the id " + std::string(id));
  return *spec;
}

bool applies(const lab::CheckSpec& c, int step, bool just_after) {
  if (c.step != step) return false;
  return c.when == lab::When::Always || (c.when == lab::When::JustAfter) == just_after;
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
    const bool contract = c.id.size() > 9 && c.id.compare(c.id.size() - 9, 9, "_contract") == 0;
    any_pass = any_pass || (c.status == Status::Pass && !contract);
  }
  step.status = any_fail ? Status::Fail : any_error ? Status::Error : any_pass ? Status::Pass : Status::Skip;
  step.max_score = points;
  step.score = step.status == Status::Pass ? points : 0.0;
}

StepBuilder::StepBuilder(int step, bool just_after, const Prerequisites& pre)
    : just_after_(just_after), pre_(pre), started_(std::chrono::steady_clock::now()) {
  step_.step = step;
}

const Check* StepBuilder::reported(std::string_view id) const {
  for (const Check& c : step_.checks)
    if (c.id == id) return &c;
  return nullptr;
}

std::optional<std::string> StepBuilder::unmet(std::string_view id) const {
  for (std::string_view need : spec_of(id).needs) {
    if (need == "server") {
      if (!pre_.has_record) return pre_.no_record_reason;
    } else if (need == "record") {
      if (!pre_.has_record) return pre_.no_record_reason;
      if (!pre_.record_unusable.empty()) return "not judged on the record: " + pre_.record_unusable + " (step 1)";
    } else if (need.rfind("file:", 0) == 0) {
      const std::string_view file = need.substr(5);
      if (const auto it = pre_.file_problems.find(file); it != pre_.file_problems.end())
        return "needs " + std::string(file) + " (judged in step 8): " + it->second;
    } else {
      const Check* c = reported(need);
      if (c == nullptr) {
        if (auto deeper = unmet(need)) return deeper;
        return "needs " + std::string(spec_of(need).title) + ", which was not checked";
      }
      if (c->status == Status::Pass) continue;
      // A file's contract is named by the file ("needs state.json: ..."); any other check by its
      // id, so the reader can find the failure it stands on.
      const std::string title(spec_of(need).title);
      const auto file_end = title.find(' ');
      if (title.compare(file_end == std::string::npos ? title.size() : file_end, 21, " follows the contract") == 0)
        return "needs " + title.substr(0, file_end) + ": " + c->message;
      return "not judged: it stands on " + std::string(need) + ", which did not pass: " + c->message;
    }
  }
  return std::nullopt;
}

bool StepBuilder::ready(std::string_view id) const { return !unmet(id).has_value(); }

void StepBuilder::add(std::string_view id, Status status, std::string message, nlohmann::json expected,
                      nlohmann::json actual) {
  const lab::CheckSpec& spec = spec_of(id);
  if (reported(id) != nullptr) throw std::logic_error("cb-grade: check " + std::string(id) + " reported twice");
  step_.checks.push_back({std::string(spec.id), std::string(spec.title), status, std::move(message),
                          std::move(expected), std::move(actual), spec.needs_server});
}

void StepBuilder::pass(std::string_view id, nlohmann::json expected, nlohmann::json actual) {
  add(id, Status::Pass, {}, std::move(expected), std::move(actual));
}

void StepBuilder::pass_noting(std::string_view id, std::string note, nlohmann::json expected, nlohmann::json actual) {
  add(id, Status::Pass, std::move(note), std::move(expected), std::move(actual));
}

void StepBuilder::fail(std::string_view id, std::string message, nlohmann::json expected, nlohmann::json actual) {
  add(id, Status::Fail, std::move(message), std::move(expected), std::move(actual));
}

void StepBuilder::skip(std::string_view id, std::string reason) {
  add(id, Status::Skip, std::move(reason), nullptr, nullptr);
}

void StepBuilder::expect(bool ok, std::string_view id, const std::string& message, nlohmann::json expected,
                         nlohmann::json actual) {
  if (ok) {
    pass(id, std::move(expected), std::move(actual));
  } else {
    fail(id, message, std::move(expected), std::move(actual));
  }
}

StepReport StepBuilder::finish(double points) {
  std::vector<Check> ordered;
  for (const lab::CheckSpec& spec : lab::checks()) {
    if (!applies(spec, step_.step, just_after_)) continue;
    if (const Check* c = reported(spec.id)) {
      ordered.push_back(*c);
      continue;
    }
    const auto why = unmet(spec.id);
    ordered.push_back({std::string(spec.id), std::string(spec.title), Status::Skip,
                       why ? *why : std::string("not reached (a grader bug: please report it)"), nullptr, nullptr,
                       spec.needs_server});
  }
  step_.checks = std::move(ordered);
  settle(step_, points);
  step_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return std::move(step_);
}

}  // namespace cb::grade

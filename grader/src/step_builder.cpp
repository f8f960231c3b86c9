#include "step_builder.h"

namespace cb::grade {

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::Pass: return "pass";
    case Status::Fail: return "fail";
    case Status::Skip: return "skip";
  }
  return "?";
}

StepBuilder::StepBuilder(int step) : started_(std::chrono::steady_clock::now()) { step_.step = step; }

void StepBuilder::pass(std::string name, nlohmann::json expected, nlohmann::json actual) {
  step_.checks.push_back({std::move(name), Status::Pass, {}, std::move(expected), std::move(actual), evidence_, false});
}

void StepBuilder::fail(std::string name, std::string message, nlohmann::json expected, nlohmann::json actual) {
  step_.checks.push_back(
      {std::move(name), Status::Fail, std::move(message), std::move(expected), std::move(actual), evidence_, false});
}

void StepBuilder::skip(std::string name, std::string reason) {
  step_.checks.push_back({std::move(name), Status::Skip, std::move(reason), nullptr, nullptr, evidence_, false});
}

void StepBuilder::expect(bool ok, std::string name, const std::string& message, nlohmann::json expected,
                         nlohmann::json actual) {
  if (ok) {
    pass(std::move(name), std::move(expected), std::move(actual));
  } else {
    fail(std::move(name), message, std::move(expected), std::move(actual));
  }
}

StepReport StepBuilder::finish(double points) {
  bool any_fail = false;
  bool any_pass = false;
  for (const Check& c : step_.checks) {
    any_fail = any_fail || c.status == Status::Fail;
    any_pass = any_pass || c.status == Status::Pass;
  }
  step_.status = any_fail ? Status::Fail : any_pass ? Status::Pass : Status::Skip;
  step_.max_score = points;
  step_.score = step_.status == Status::Pass ? points : 0.0;
  step_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return std::move(step_);
}

}  // namespace cb::grade

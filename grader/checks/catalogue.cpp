// The lab's checks, step by step: each step's table is in its own file (check.h).
#include <algorithm>
#include <vector>

#include "cb/grade/grade.h"
#include "cb/grade/check.h"
#include "step_builder.h"

namespace cb::grade {
namespace {

using Table = std::span<const CheckDef* const> (*)() noexcept;
constexpr Table kSteps[] = {step1_checks, step2_checks, step3_checks, step4_checks,
                            step5_checks, step6_checks, step7_checks, step8_checks};
static_assert(std::size(kSteps) == kGradedSteps);

// A step's checks with the ones an ExtraCheck added (empty while there are none). Only a test
// adds any, before it grades; nothing else writes these.
std::vector<const CheckDef*>& with_extras(int step) {
  static std::vector<const CheckDef*> steps[kGradedSteps + 1];
  return steps[step];
}

std::string json_text(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

}  // namespace

std::string_view role_name(FileRole role) noexcept {
  switch (role) {
    case FileRole::State: return "state";
    case FileRole::Ignore: return "ignore";
    case FileRole::Fastfail: return "fastfail";
    case FileRole::Transitions: return "transitions";
    case FileRole::None: break;
  }
  return "";
}

std::span<const CheckDef* const> checks_of_step(int step) {
  if (step < 1 || step > kGradedSteps) return {};
  if (const auto& extended = with_extras(step); !extended.empty()) return extended;
  return kSteps[step - 1]();
}

const CheckDef* find_check(std::string_view id) {
  for (int step = 1; step <= kGradedSteps; ++step)
    for (const CheckDef* c : checks_of_step(step))
      if (c->id == id) return c;
  return nullptr;
}

bool needs_server(const CheckDef& check) {
  if (check.on_server) return true;
  return std::any_of(check.needs.begin(), check.needs.end(), [](const Need& n) {
    return n.kind == Need::Kind::Server || n.kind == Need::Kind::Record ||
           (n.kind == Need::Kind::Check && needs_server(*n.check));
  });
}

ExtraCheck::ExtraCheck(int step, const CheckDef& check) : step_(step), check_(&check) {
  auto& steps = with_extras(step);
  if (steps.empty()) {
    const auto own = kSteps[step - 1]();
    steps.assign(own.begin(), own.end());
  }
  steps.push_back(&check);
}

ExtraCheck::~ExtraCheck() {
  auto& steps = with_extras(step_);
  std::erase(steps, check_);
  // With only the step's own left, its table serves again.
  if (steps.size() == kSteps[step_ - 1]().size()) steps.clear();
}

bool reads_files(int step) {
  for (const CheckDef* c : checks_of_step(step)) {
    if (c->when == When::Finished) continue;
    if (!needs_server(*c)) return true;
    for (const Need& n : c->needs)
      if (n.kind == Need::Kind::File) return true;
  }
  return false;
}

std::string list_checks(const LabSpec& spec, bool json) {
  const char* when_text[] = {"finished", "just after", "always"};
  std::string out = json ? "[" : "| step | id | when | needs | title |\n|---|---|---|---|---|\n";
  bool first = true;
  for (int step = 1; step <= spec.steps(); ++step)
    for (const CheckDef* c : checks_of_step(step)) {
      std::string needs;
      for (const Need& n : c->needs) {
        std::string need;
        switch (n.kind) {
          case Need::Kind::None: continue;
          case Need::Kind::Check: need = std::string(n.check->id); break;
          case Need::Kind::Server: need = "server"; break;
          case Need::Kind::Record: need = "record"; break;
          case Need::Kind::Numbers: need = "numbers"; break;
          case Need::Kind::File: need = std::string(spec.files.of(role_name(n.file))); break;
        }
        needs += (json ? (needs.empty() ? "" : ",") + json_text(need) : (needs.empty() ? "" : ", ") + need);
      }
      const std::string when = when_text[static_cast<int>(c->when)];
      const std::string title = spec.fill(c->title);
      if (json) {
        out += std::string(first ? "" : ",") + "\n  {\"step\": " + std::to_string(step) +
               ", \"id\": " + json_text(c->id) + ", \"when\": " + json_text(when) + ", \"needs\": [" + needs +
               "], \"title\": " + json_text(title) + "}";
      } else {
        std::string cell = title;
        for (std::size_t at = 0; (at = cell.find('|', at)) != std::string::npos; at += 2) cell.replace(at, 1, "\\|");
        out += "| " + std::to_string(step) + " | `" + std::string(c->id) + "` | " + when + " | " + needs + " | " +
               cell + " |\n";
      }
      first = false;
    }
  return json ? out + "\n]\n" : out;
}

}  // namespace cb::grade

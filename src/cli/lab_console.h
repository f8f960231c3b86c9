#pragma once
// What `cb-lab run` and `cb-lab step` show a person: the step being run, one compact line per
// action, a countdown while waiting (on a terminal; plain lines otherwise), each step's verdict
// from the grader, and the checklist. Colour only on a terminal, and never with NO_COLOR.

#include <string>

#include "cb/grade/report.h"
#include "cb/lab/runner.h"

namespace cb::cli {

class LabConsole final : public lab::Reporter {
 public:
  // `quiet`: for --json, nothing is shown.
  explicit LabConsole(bool quiet);

  void header(const std::string& text);
  void step(int n, const std::string& title);
  void action(const std::string& text) override;
  void countdown(std::chrono::microseconds left, std::chrono::microseconds total) override;
  void verdict(const grade::StepReport& report);
  void checklist(const grade::Report& report, double seconds);
  void note(const std::string& text);

  [[nodiscard]] bool terminal() const noexcept { return terminal_; }

 private:
  [[nodiscard]] std::string paint(const char* code, const std::string& s) const;
  void clear_countdown();

  bool quiet_;
  bool terminal_;
  bool colour_;
  bool countdown_shown_ = false;
  long long last_plain_second_ = -1;
};

}  // namespace cb::cli

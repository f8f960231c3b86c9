#include "lab_console.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace cb::cli {
namespace {

std::string points(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

}  // namespace

LabConsole::LabConsole(bool quiet)
    : quiet_(quiet),
      terminal_(::isatty(STDOUT_FILENO) != 0),
      colour_(terminal_ && std::getenv("NO_COLOR") == nullptr) {}

std::string LabConsole::paint(const char* code, const std::string& s) const {
  return colour_ ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
}

void LabConsole::clear_countdown() {
  if (!countdown_shown_) return;
  std::printf("\r\x1b[K");
  countdown_shown_ = false;
}

void LabConsole::header(const std::string& text) {
  if (quiet_) return;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void LabConsole::note(const std::string& text) {
  if (quiet_) return;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void LabConsole::step(int n, const std::string& title) {
  if (quiet_) return;
  std::printf("\n%s %s\n", paint("1", "Step " + std::to_string(n)).c_str(), title.c_str());
  std::fflush(stdout);
}

void LabConsole::action(const std::string& text) {
  if (quiet_) return;
  clear_countdown();
  std::printf("        %s\n", text.c_str());
  std::fflush(stdout);
}

void LabConsole::countdown(std::chrono::microseconds left, std::chrono::microseconds total) {
  if (quiet_) return;
  const double l = static_cast<double>(left.count()) / 1e6;
  if (terminal_) {
    std::printf("\r\x1b[K        waiting for the cool-down: %.1f s of %.1f s left", l,
                static_cast<double>(total.count()) / 1e6);
    countdown_shown_ = true;
  } else {
    // Not a terminal: a plain line per whole second, not a stream of carriage returns.
    const long long second = static_cast<long long>(l + 0.999);
    if (second == last_plain_second_) return;
    last_plain_second_ = second;
    std::printf("        waiting for the cool-down: %lld s left\n", second);
  }
  std::fflush(stdout);
}

void LabConsole::verdict(const grade::StepReport& r) {
  if (quiet_) return;
  clear_countdown();
  const bool error = r.status == grade::Status::Error;
  const char* word = r.status == grade::Status::Pass   ? "PASS"
                     : r.status == grade::Status::Fail ? "FAIL"
                     : error                           ? "NOT GRADED"
                                                       : "SKIP";
  const char* code = r.status == grade::Status::Pass   ? "1;32"
                     : r.status == grade::Status::Fail ? "1;31"
                     : error                           ? "1;35"
                                                       : "1;33";
  std::printf("        %s", paint(code, word).c_str());
  bool first = true;
  for (const grade::Check& c : r.checks) {
    const bool shown = c.status == grade::Status::Fail || c.status == grade::Status::Error ||
                       (r.status == grade::Status::Skip && first);  // why nothing was checked
    if (!shown) continue;
    std::printf("%s %s: %s\n", first ? "" : "             ", c.name.c_str(), c.message.c_str());
    first = false;
  }
  if (first) std::printf("\n");
  std::fflush(stdout);
}

void LabConsole::checklist(const grade::Report& r, double seconds) {
  if (quiet_) return;
  std::printf("\n%s\n", paint("1", "Checklist (the grader, on the server's record)").c_str());
  for (const std::string& note : r.notes) std::printf("  %s\n", paint("1;35", "! " + note).c_str());
  for (const grade::StepReport& s : r.steps) {
    const char* mark = s.status == grade::Status::Pass    ? "[x]"
                       : s.status == grade::Status::Fail  ? "[ ]"
                       : s.status == grade::Status::Error ? "[?]"
                                                          : "[-]";
    const char* code = s.status == grade::Status::Pass    ? "32"
                       : s.status == grade::Status::Fail  ? "31"
                       : s.status == grade::Status::Error ? "35"
                                                          : "33";
    std::printf("  %s %d  %s\n", paint(code, mark).c_str(), s.step, s.title.c_str());
    for (const grade::Check& c : s.checks) {
      if (c.status == grade::Status::Fail || (c.status == grade::Status::Error && r.notes.empty()))
        std::printf("          %s: %s\n", c.name.c_str(), c.message.c_str());
      if (s.status == grade::Status::Skip && c.status == grade::Status::Skip) {
        std::printf("          not checked: %s\n", c.message.c_str());
        break;
      }
    }
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", seconds);
  std::printf("\nScore %s/%s in %s%s\n", points(r.score).c_str(), points(r.max_score).c_str(), secs,
              r.passed ? paint("1;32", ": every step passed").c_str()
              : r.status == grade::Status::Error
                  ? paint("1;35", ": NOT GRADED, the evidence failed (not the breaker's fault)").c_str()
                  : "");
  std::fflush(stdout);
}

}  // namespace cb::cli

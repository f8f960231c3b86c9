#include "cb/sandbox/limits.h"

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <limits>
#include <utility>

namespace cb::sandbox {

std::string_view to_string(LimitHit hit) noexcept {
  switch (hit) {
    case LimitHit::None: return "none";
    case LimitHit::Cpu: return "cpu";
    case LimitHit::FileSize: return "file_size";
    case LimitHit::Memory: return "memory";
    case LimitHit::Processes: return "processes";
    case LimitHit::OpenFiles: return "open_files";
    case LimitHit::BoxSize: return "box_size";
    case LimitHit::OutsideMemory: return "outside_memory";
  }
  return "none";
}

Result<std::uint64_t> parse_size(std::string_view text) {
  const auto bad = [&] {
    return Error{"'" + std::string(text) + "' is not a size like 2G, 64M, 512K, a number of bytes, or unlimited"};
  };
  if (text == "unlimited") return kUnlimited;
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0])) == 0) return bad();
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0; ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return bad();
    n = n * 10 + digit;
  }
  std::string_view unit = text.substr(i);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b') && unit.size() > 1) unit.remove_suffix(1);
  if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.remove_suffix(1);
  unsigned shift = 0;
  if (unit.empty() || unit == "B" || unit == "b")
    shift = 0;
  else if (unit == "K" || unit == "k")
    shift = 10;
  else if (unit == "M" || unit == "m")
    shift = 20;
  else if (unit == "G" || unit == "g")
    shift = 30;
  else if (unit == "T" || unit == "t")
    shift = 40;
  else
    return bad();
  if (shift > 0 && n > (std::numeric_limits<std::uint64_t>::max() >> shift)) return bad();
  if (n == 0) return Error{"'" + std::string(text) + "' is zero; a limit must allow something"};
  return n << shift;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes == kUnlimited) return "unlimited";
  static constexpr std::array<std::pair<unsigned, const char*>, 4> units{
      {{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}}};
  for (const auto& [shift, name] : units) {
    const std::uint64_t unit = 1ULL << shift;
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes >> shift) + " " + name;
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string size_flag(std::uint64_t bytes) {
  if (bytes == kUnlimited) return "unlimited";
  static constexpr std::array<std::pair<unsigned, const char*>, 4> units{{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}}};
  for (const auto& [shift, name] : units) {
    const std::uint64_t unit = 1ULL << shift;
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes >> shift) + name;
  }
  return std::to_string(bytes);
}

namespace {

bool says(std::string_view text, std::initializer_list<std::string_view> phrases) {
  for (std::string_view p : phrases)
    if (text.find(p) != std::string_view::npos) return true;
  return false;
}

// The signal that ended it: directly, or through a shell that reports 128 + the signal.
int ending_signal(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128) return WEXITSTATUS(status) - 128;
  return 0;
}

}  // namespace

LimitHit limit_hit(const Limits& limits, int status, std::chrono::microseconds cpu_used, std::string_view output_tail) {
  const int sig = ending_signal(status);
  // SIGXCPU at the soft limit; SIGKILL a second later at the hard limit, for a program that
  // ignores the first.
  if (sig == SIGXCPU || (sig == SIGKILL && cpu_used >= limits.cpu)) return LimitHit::Cpu;
  if (sig == SIGXFSZ) return LimitHit::FileSize;
  // Python ignores SIGXFSZ and reports the write's EFBIG itself.
  if (says(output_tail, {"File too large"})) return LimitHit::FileSize;
  if (says(output_tail, {"No space left on device"})) return LimitHit::BoxSize;
  if (says(output_tail, {"MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory"}))
    return LimitHit::Memory;
  if (says(output_tail, {"Too many open files"})) return LimitHit::OpenFiles;
  if (says(output_tail, {"fork: Resource temporarily unavailable", "Cannot fork", "can't fork", "fork: retry",
                         "BlockingIOError: [Errno 11]"}))
    return LimitHit::Processes;
  return LimitHit::None;
}

std::string describe(const Limits& limits, LimitHit hit, bool box_wide) {
  switch (hit) {
    case LimitHit::None: return "";
    case LimitHit::Cpu: return "the CPU-time limit (" + std::to_string(limits.cpu.count()) + " s a process)";
    case LimitHit::FileSize: return "the file-size limit (" + size_text(limits.file_bytes) + ")";
    case LimitHit::Memory:
      return "the memory limit (" + size_text(limits.memory_bytes) +
             (box_wide ? " for the whole box, as the kernel counts it)" : " of data a process)");
    case LimitHit::Processes:
      return "the process limit (" + std::to_string(limits.processes) +
             (box_wide ? " in the box at once)" : " at once)");
    case LimitHit::OpenFiles: return "the open-file limit (" + std::to_string(limits.open_files) + " a process)";
    case LimitHit::BoxSize:
      return "the box's size limit (" + size_text(limits.box_bytes) + " and " + std::to_string(limits.box_files) +
             " files)";
    case LimitHit::OutsideMemory:
      return "a memory limit outside the box (the machine's, or a job's the grader runs in), while the box was within "
             "its own " +
             size_text(limits.memory_bytes);
  }
  return "";
}

}  // namespace cb::sandbox

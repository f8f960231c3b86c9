#pragma once
// What one graded program may use, as plain values. Each is a kernel resource limit (setrlimit)
// set in the program's process before it starts, so it holds for everything the program runs.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "cb/result.h"

namespace cb::sandbox {

struct Limits {
  // Memory: of the whole box where it has a control group (everything the kernel charges to it:
  // the programs' pages, shared memory, the files they write in tmpfs), else of each process's
  // data (RLIMIT_DATA). Never address space: a JVM reserves 1 GiB of class space and Node
  // gigabytes for WebAssembly that they never touch. The lab needs under 100 MiB; the C++ kit's
  // compiler under 512 MiB.
  std::uint64_t memory_bytes = 2ULL << 30;  // kUnlimited: none (see parse_size)
  // Processes (threads count too) of the program's user at once. A program of its own uid
  // counts only itself; the lab needs a handful.
  std::uint64_t processes = 128;
  std::uint64_t open_files = 256;
  // Largest file it may write: the lab's files are a few hundred bytes.
  std::uint64_t file_bytes = 64ULL << 20;
  // CPU time per process. The lab costs about 0.1 s of CPU, the C++ kit's build 2-3 s.
  std::chrono::seconds cpu{30};
  // The private /tmp of the full sandbox (a tmpfs: memory, so it is bounded too).
  std::uint64_t tmp_bytes = 256ULL << 20;
  // The box: the copy of the submission, its output and the fallback's temporary files, all its
  // programs together. A tmpfs of this size where the grader may mount one (root), else counted
  // while the program runs. The copy itself is at most 256 MiB and 20,000 files.
  std::uint64_t box_bytes = 256ULL << 20;
  std::uint64_t box_files = 20'000;
};

// Which limit a program ran into, when the kernel says so (a signal only a limit sends, or a CPU
// time at the limit), or when its own output says it (the kernel refuses memory, processes and
// files without stopping the program, so a program that stops there says why itself).
// OutsideMemory: the kernel killed a process of the box for memory while the box was within its
// own limit: a limit around the grader (a batch job's, a container's) or the machine's own ran out.
// Not the program's doing, and never its grade.
enum class LimitHit { None, Cpu, FileSize, Memory, Processes, OpenFiles, BoxSize, OutsideMemory };
[[nodiscard]] std::string_view to_string(LimitHit hit) noexcept;  // "cpu", "file_size", ..., "box_size"

// No limit: for programs built with a sanitizer, which reserve terabytes of address space for
// their shadow memory before they run a line.
inline constexpr std::uint64_t kUnlimited = ~0ULL;

// "1G", "512M", "64K", "1000" (bytes); binary units; "unlimited" is kUnlimited. Errors name
// what was expected.
[[nodiscard]] Result<std::uint64_t> parse_size(std::string_view text);
// "2 GiB", "64 MiB", "100 bytes", "unlimited": how a report and an error say a size.
[[nodiscard]] std::string size_text(std::uint64_t bytes);
// "2G", "64M", "100", "unlimited": a size as a flag takes it (parse_size reads it back).
[[nodiscard]] std::string size_flag(std::uint64_t bytes);

// From how a program ended: `status` as waitpid gives it, the CPU time it used, and the end of
// its output.
[[nodiscard]] LimitHit limit_hit(const Limits& limits, int status, std::chrono::microseconds cpu_used,
                                 std::string_view output_tail);

// "the CPU-time limit (30 s)": the limit named with its value, for a report's sentence.
// `box_wide`: memory was the box's control group's, not each process's.
[[nodiscard]] std::string describe(const Limits& limits, LimitHit hit, bool box_wide = false);

}  // namespace cb::sandbox

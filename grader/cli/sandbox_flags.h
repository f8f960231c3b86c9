#pragma once
// cb-grade's flags for the sandbox its programs run in (docs/GRADER.md, "The sandbox").

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cb/result.h"
#include "cb/sandbox/policy.h"

namespace cb::grade {

// As typed, each default the sandbox's own (limits.h), written as the flag takes it.
struct SandboxFlags {
  std::string mode = std::string(sandbox::to_string(sandbox::Policy{}.mode));
  std::string memory = sandbox::size_flag(sandbox::Limits{}.memory_bytes);
  std::uint64_t processes = sandbox::Limits{}.processes;
  std::uint64_t open_files = sandbox::Limits{}.open_files;
  std::string file_size = sandbox::size_flag(sandbox::Limits{}.file_bytes);
  std::string cpu = std::to_string(sandbox::Limits{}.cpu.count()) + "s";
  std::string box_size = sandbox::size_flag(sandbox::Limits{}.box_bytes);
  std::uint64_t box_files = sandbox::Limits{}.box_files;
  std::vector<std::string> env;
};

void add_sandbox_flags(CLI::App& app, SandboxFlags& flags);

// Errors name the flag and what was expected.
[[nodiscard]] Result<sandbox::Policy> sandbox_policy(const SandboxFlags& flags);

}  // namespace cb::grade

#pragma once
// cb-grade's flags for the sandbox its programs run in (docs/GRADER.md, "The sandbox").

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cb/result.h"
#include "cb/sandbox/policy.h"

namespace cb::grade {

struct SandboxFlags {
  std::string mode = "auto";
  std::string memory = "2G";
  std::uint64_t processes = 128;
  std::uint64_t open_files = 256;
  std::string file_size = "64M";
  std::string cpu = "30s";
  std::string box_size = "256M";
  std::uint64_t box_files = 20'000;
  std::vector<std::string> env;
};

void add_sandbox_flags(CLI::App& app, SandboxFlags& flags);

// Errors name the flag and what was expected.
[[nodiscard]] Result<sandbox::Policy> sandbox_policy(const SandboxFlags& flags);

}  // namespace cb::grade

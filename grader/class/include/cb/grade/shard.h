#pragma once
// A class split over machines by a job array (a Kubernetes Indexed Job, a Slurm array, a CI
// matrix): shard I of N grades the submissions at positions I, I+N, I+2N... of the sorted list
// of the root's folders (the manifest), so every shard, listing the same root, takes its own
// share and no two take the same one. Each keeps the manifest and what the grade depends on in
// REPORTS/shard.json; `cb-grade merge` joins the shards' reports into one (merge.h).

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"

namespace cb::grade {

struct Shard {
  std::size_t index = 0;  // 0-based
  std::size_t count = 1;
  [[nodiscard]] bool takes(std::size_t position) const noexcept { return position % count == index; }
  [[nodiscard]] std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "I/N" (0 <= I < N), or the index from a job array's environment: "env/N" takes I from
// JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm: the array is --array=0-(N-1),
// so a task re-run alone is still its shard); "env" alone also takes N from
// SLURM_ARRAY_TASK_COUNT, of a whole array from 0 only (Kubernetes does not give its pods the
// count). `env` reads a variable (nullptr when unset): getenv, or a test's.
using EnvReader = std::function<const char*(const char*)>;
[[nodiscard]] Result<Shard> parse_shard(std::string_view text, const EnvReader& env);

// What a shard grades of the manifest (all of it without one), in its order.
[[nodiscard]] std::vector<std::string> share_of(const std::vector<std::string>& manifest,
                                                const std::optional<Shard>& shard);

// REPORTS/shard.json's format: {"format", "class", "index", "count", "manifest_sha256",
// "manifest": [names], "stamp": the batch's stamp without the student's numbers}.
inline constexpr const char* kShardFormat = "cb-grade shard 1";

// The SHA-256 of the manifest, one name a line in its order: every shard of a class has the same.
[[nodiscard]] std::string manifest_sha256(const std::vector<std::string>& names);

}  // namespace cb::grade

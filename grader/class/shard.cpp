#include "cb/grade/shard.h"

#include <charconv>
#include <optional>

#include "cb/hmac_sha256.h"

namespace cb::grade {
namespace {

// A whole non-negative number, all of `text`.
std::optional<std::size_t> number(std::string_view text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

Result<std::size_t> env_number(const EnvReader& env, const char* name) {
  const char* value = env(name);
  if (value == nullptr) return Error{std::string(name) + " is not set"};
  const auto n = number(value);
  if (!n) return Error{std::string(name) + " is '" + value + "', not a whole number"};
  return *n;
}

// The index a job array gave this task, 0-based. A Slurm task's id is its shard: the array is
// `--array=0-(N-1)`, and one index re-run alone (`sbatch --array=3`) is the same shard, though
// Slurm then says MIN=3 and COUNT=1 (an id counted from MIN would be shard 0 of 1: the class).
Result<std::size_t> env_index(const EnvReader& env) {
  if (env("JOB_COMPLETION_INDEX") != nullptr) return env_number(env, "JOB_COMPLETION_INDEX");
  if (env("SLURM_ARRAY_TASK_ID") == nullptr)
    return Error{
        "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm array) "
        "is set"};
  return env_number(env, "SLURM_ARRAY_TASK_ID");
}

// N for `--shard env`: a whole Slurm array from 0 says it (MIN 0, COUNT N). Any other (a re-run
// of some of its ids, an array from 1) does not, and guessing would grade the wrong share.
Result<std::size_t> env_count(const EnvReader& env) {
  auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
  if (!count) return Error{count.error().message + " (outside Slurm, say env/N)"};
  auto min = env_number(env, "SLURM_ARRAY_TASK_MIN");
  if (!min || *min != 0)
    return Error{"this array does not start at 0 (SLURM_ARRAY_TASK_MIN " +
                 std::string(min ? std::to_string(*min) : "unset") +
                 "): a re-run of some of its tasks, whose count is not the class's; say env/N, N the class's shards"};
  return *count;
}

}  // namespace

Result<Shard> parse_shard(std::string_view text, const EnvReader& env) {
  const auto fail = [&text](const std::string& why) { return Error{"--shard: '" + std::string(text) + "': " + why}; };
  const auto slash = text.find('/');
  const std::string_view first = text.substr(0, slash);
  Shard s;
  if (slash == std::string_view::npos) {
    if (first != "env") return fail("expected I/N (shard I of N, from 0), env/N or env");
    auto count = env_count(env);
    if (!count) return fail(count.error().message);
    s.count = *count;
  } else {
    const auto count = number(text.substr(slash + 1));
    if (!count) return fail("N is not a whole number");
    s.count = *count;
  }
  if (s.count == 0) return fail("a class cannot be split into 0 shards");
  if (first == "env") {
    auto index = env_index(env);
    if (!index) return fail(index.error().message);
    s.index = *index;
  } else {
    const auto index = number(first);
    if (!index) return fail("I is not a whole number");
    s.index = *index;
  }
  if (s.index >= s.count)
    return fail("shard " + std::to_string(s.index) + " of " + std::to_string(s.count) + ": I counts from 0 to N-1" +
                (first == "env" && env("SLURM_ARRAY_TASK_ID") != nullptr && env("JOB_COMPLETION_INDEX") == nullptr
                     ? " (a Slurm array's ids are the shards: --array=0-" + std::to_string(s.count - 1) + ")"
                     : ""));
  return s;
}

std::vector<std::string> share_of(const std::vector<std::string>& manifest, const std::optional<Shard>& shard) {
  if (!shard) return manifest;
  std::vector<std::string> share;
  for (std::size_t i = 0; i < manifest.size(); ++i)
    if (shard->takes(i)) share.push_back(manifest[i]);
  return share;
}

std::string manifest_sha256(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += name + "\n";
  return hex(sha256(text));
}

}  // namespace cb::grade

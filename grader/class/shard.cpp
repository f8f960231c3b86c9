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

// The index a job array gave this task, 0-based.
Result<std::size_t> env_index(const EnvReader& env) {
  if (env("JOB_COMPLETION_INDEX") != nullptr) return env_number(env, "JOB_COMPLETION_INDEX");
  if (env("SLURM_ARRAY_TASK_ID") == nullptr)
    return Error{
        "neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (a Slurm array) "
        "is set"};
  auto id = env_number(env, "SLURM_ARRAY_TASK_ID");
  if (!id) return id.error();
  std::size_t min = 0;
  if (env("SLURM_ARRAY_TASK_MIN") != nullptr) {
    auto m = env_number(env, "SLURM_ARRAY_TASK_MIN");
    if (!m) return m.error();
    min = *m;
  }
  if (*id < min) return Error{"SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN"};
  return *id - min;
}

}  // namespace

Result<Shard> parse_shard(std::string_view text, const EnvReader& env) {
  const auto fail = [&text](const std::string& why) { return Error{"--shard: '" + std::string(text) + "': " + why}; };
  const auto slash = text.find('/');
  const std::string_view first = text.substr(0, slash);
  Shard s;
  if (slash == std::string_view::npos) {
    if (first != "env") return fail("expected I/N (shard I of N, from 0), env/N or env");
    auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
    if (!count) return fail(count.error().message + " (outside Slurm, say env/N)");
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
    return fail("shard " + std::to_string(s.index) + " of " + std::to_string(s.count) + ": I counts from 0 to N-1");
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

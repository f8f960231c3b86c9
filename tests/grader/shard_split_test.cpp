// How a job array's task finds its shard, and what share of the class it takes: every folder
// once over the shards, whatever the class's size.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "cb/grade/shard.h"
#include "env_of.h"

namespace cb::grade {
namespace {

using cb::testing::env_of;

TEST_CASE("shard: I/N as given, or the index from Kubernetes' or Slurm's environment") {
  const EnvReader none = env_of({});
  auto s = parse_shard("2/4", none);
  REQUIRE(s);
  CHECK(s->index == 2);
  CHECK(s->count == 4);
  // Kubernetes gives the index, never the count.
  s = parse_shard("env/8", env_of({{"JOB_COMPLETION_INDEX", "5"}}));
  REQUIRE(s);
  CHECK(s->text() == "5/8");
  // A Slurm array from 0 gives the count; its ids are the shards.
  s = parse_shard(
      "env", env_of({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  REQUIRE(s);
  CHECK(s->text() == "3/4");
}

// Issue found on a real Slurm: `sbatch --array=1 grade.sh`, to grade shard 1 again, sets MIN=1
// and COUNT=1, and the task graded the wrong share (0 of 1 with env, 0 of N with env/N).
TEST_CASE("shard: one Slurm index re-run alone is the same shard with env/N, and env alone is refused") {
  const EnvReader rerun = env_of({{"SLURM_ARRAY_TASK_ID", "1"},
                                  {"SLURM_ARRAY_TASK_MIN", "1"},
                                  {"SLURM_ARRAY_TASK_MAX", "1"},
                                  {"SLURM_ARRAY_TASK_COUNT", "1"}});
  auto s = parse_shard("env/2", rerun);
  REQUIRE(s);
  CHECK(s->text() == "1/2");
  s = parse_shard("env", rerun);
  REQUIRE_FALSE(s);
  CHECK(s.error().message ==
        "--shard: 'env': this array does not start at 0 (SLURM_ARRAY_TASK_MIN 1): a re-run of some of its tasks, "
        "whose count is not the class's; say env/N, N the class's shards");
  // An array from 1 is not the shards' numbering: its last id is named, not graded as another's.
  s = parse_shard("env/4", env_of({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}}));
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("a Slurm array's ids are the shards: --array=0-3") != std::string::npos);
}

TEST_CASE("shard: what is not a shard is one line naming it") {
  const EnvReader none = env_of({});
  for (const char* bad : {"4/4", "1/0", "a/2", "1/", "/2", "1/2/3", "-1/2", "env/x", "", "all"}) {
    CAPTURE(bad);
    const auto s = parse_shard(bad, none);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("--shard: '" + std::string(bad) + "'") == 0);
  }
  auto s = parse_shard("env/4", none);
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("JOB_COMPLETION_INDEX") != std::string::npos);
  s = parse_shard("env", env_of({{"JOB_COMPLETION_INDEX", "1"}}));
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("say env/N") != std::string::npos);
  s = parse_shard("env/4", env_of({{"JOB_COMPLETION_INDEX", "4"}}));
  REQUIRE_FALSE(s);
  CHECK(s.error().message.find("from 0 to N-1") != std::string::npos);
}

TEST_CASE("shard: the shards of a class take every folder once, and the same manifest hashes the same") {
  for (std::size_t size : {0U, 1U, 5U, 7U, 300U}) {
    std::vector<std::string> manifest;
    for (std::size_t i = 0; i < size; ++i) manifest.push_back("s" + std::to_string(1000 + i));
    for (std::size_t count : {1U, 2U, 3U, 8U}) {
      CAPTURE(size);
      CAPTURE(count);
      std::multiset<std::string> seen;
      std::size_t largest = 0;
      std::size_t smallest = size;
      for (std::size_t index = 0; index < count; ++index) {
        const auto share = share_of(manifest, Shard{index, count});
        seen.insert(share.begin(), share.end());
        largest = std::max(largest, share.size());
        smallest = std::min(smallest, share.size());
      }
      CHECK(seen == std::multiset<std::string>(manifest.begin(), manifest.end()));
      CHECK(largest - smallest <= 1);  // a fair share each
    }
    CHECK(share_of(manifest, std::nullopt) == manifest);
  }
  CHECK(manifest_sha256({"a", "b"}) == manifest_sha256({"a", "b"}));
  CHECK(manifest_sha256({"a", "b"}) != manifest_sha256({"ab"}));
  CHECK(manifest_sha256({"a", "b"}) != manifest_sha256({"b", "a"}));
}

}  // namespace
}  // namespace cb::grade

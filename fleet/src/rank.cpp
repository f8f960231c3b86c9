#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "cb/fleet/shared_breaker.h"

namespace cb::fleet {
namespace {

// FNV-1a over the name and the key, then splitmix64's finaliser: the same number in every
// process for the same (instance, key), and unrelated numbers for neighbouring keys, so the
// first place moves around the fleet from one cool-down to the next.
std::uint64_t rank_hash(const std::string& instance, std::uint64_t key) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : instance) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  for (int i = 0; i < 8; ++i) h = (h ^ ((key >> (8 * i)) & 0xffU)) * 0x100000001b3ULL;
  h = (h ^ (h >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27U)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31U);
}

}  // namespace

bool ranks_first(const std::string& instance, const std::vector<std::string>& members, std::uint64_t key, int permits) {
  const auto mine = std::make_tuple(rank_hash(instance, key), instance);
  int ahead = 0;
  for (const std::string& m : members) {
    if (m == instance) continue;
    if (std::make_tuple(rank_hash(m, key), m) < mine) ++ahead;
  }
  return ahead < permits;
}

}  // namespace cb::fleet

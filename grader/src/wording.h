#pragma once
// Phrases more than one parser words the same way.

#include <string>
#include <vector>

namespace cb::grade {

// "\"a\" is missing", "\"a\" and \"b\" are missing", "\"a\", \"b\" and \"c\" are missing": every
// missing key named at once, so a student fixes a file in one go, not one run per key.
inline std::string missing_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += "\"" + keys[i] + "\"";
  }
  return out + (keys.size() == 1 ? " is missing" : " are missing");
}

}  // namespace cb::grade

// The queue's two numbers are written once (queue.h): the Redis functions are given them with
// each call, and the docs that count heartbeats and deliveries in words are held to them here.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>

#include "cb/grade/queue.h"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int number_of(const std::string& word) {
  static const std::map<std::string, int> words{{"one", 1},  {"two", 2}, {"three", 3}, {"four", 4},
                                                {"five", 5}, {"six", 6}, {"ten", 10}};
  const auto w = words.find(word);
  return w != words.end() ? w->second : std::stoi(word);
}

TEST_CASE("queue rules: the Redis functions hold no number of their own for deliveries or heartbeats") {
  const std::string lua = slurp(std::string(CB_SOURCE_DIR) + "/grader/queue/cb_queue.lua");
  REQUIRE(lua.find("local function take") != std::string::npos);
  CHECK(lua.find("MAX_DELIVERIES") == std::string::npos);
  static const std::regex counted(R"(\b([0-9]+|three) (missed |more )?(heartbeats|deliveries))");
  CHECK_FALSE(std::regex_search(lua, counted));
}

TEST_CASE("queue rules: every count of heartbeats and deliveries in the docs is the queue's") {
  static const std::regex counted(
      R"(\b([0-9]+|one|two|three|four|five|six|ten) (missed |more )?(heartbeats|deliveries)\b)");
  int seen = 0;
  for (const char* doc : {"docs/SCALE.md", "docs/PERFORMANCE.md", "docs/GRADER.md", "docs/TEACHING.md", "README.md"}) {
    const std::string text = slurp(std::string(CB_SOURCE_DIR) + "/" + doc);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), counted); it != std::sregex_iterator(); ++it) {
      ++seen;
      INFO(doc, ": ", it->str());
      CHECK(number_of((*it)[1]) ==
            ((*it)[3] == "heartbeats" ? cb::grade::kMissedHeartbeats : cb::grade::kMaxDeliveries));
    }
  }
  CHECK(seen >= 10);  // the docs were read at all
}

}  // namespace

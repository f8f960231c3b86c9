#pragma once
// The starter kits the tests run, from tests/kits/kits.json (which bench/class reads too): each
// with the file the student writes and the classic mistakes as edits of its reference rules, so
// a kit added there is run by every test that runs them all.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "process.h"

namespace cb::testing {

// One edit of the reference rules: the text as written, and the mistake in its place.
struct Mistake {
  std::string right;
  std::string wrong;
};

struct Kit {
  std::string lang;
  std::string rules;                        // the file the student writes
  std::map<std::string, Mistake> mistakes;  // "gt", "4xx", "one_trial", "no_minimum"
};

inline const std::vector<Kit>& all_kits() {
  static const std::vector<Kit> kits = [] {
    std::ifstream in(std::string(CB_KIT_REFERENCE) + "/kits.json");
    const auto doc = nlohmann::json::parse(in);
    std::vector<Kit> out;
    for (const auto& k : doc.at("kits")) {
      Kit kit{k.at("lang"), k.at("rules"), {}};
      for (const auto& [name, edit] : k.at("mistakes").items()) kit.mistakes[name] = {edit.at(0), edit.at(1)};
      out.push_back(std::move(kit));
    }
    return out;
  }();
  return kits;
}

inline const Kit& kit_of(const std::string& lang) {
  for (const Kit& kit : all_kits())
    if (kit.lang == lang) return kit;
  throw std::logic_error("tests/kits/kits.json has no kit " + lang);
}

// The reference rules of a kit, as tests/kits/<lang>/ holds them.
inline std::string reference_rules(const Kit& kit) {
  std::ifstream in(std::string(CB_KIT_REFERENCE) + "/" + kit.lang + "/" + kit.rules);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The reference rules with one mistake made: the right form must be there exactly once.
inline std::string with_mistake(const Kit& kit, const std::string& mistake) {
  std::string rules = reference_rules(kit);
  const Mistake& m = kit.mistakes.at(mistake);
  const auto at = rules.find(m.right);
  if (at == std::string::npos || rules.find(m.right, at + 1) != std::string::npos)
    throw std::logic_error(kit.lang + "'s reference rules hold \"" + m.right + "\" other than once");
  return rules.replace(at, m.right.size(), m.wrong);
}

// A kit made by `cb-lab init` (CB_LAB_BIN) in `kit_dir`, its student's file holding `rules`
// (empty: as shipped), and built once there as its README asks: a graded copy has the build, up to
// date, and does not build again.
inline void make_kit(const std::string& kit_dir, const Kit& kit, const std::string& rules = {}) {
  REQUIRE(run({CB_LAB_BIN, "init", kit_dir, "--lang", kit.lang}).exit_code == 0);
  if (!rules.empty()) std::ofstream(kit_dir + "/" + kit.rules) << rules;
  if (std::filesystem::exists(kit_dir + "/build.sh"))
    REQUIRE(run({"/bin/sh", "-c", "cd '" + kit_dir + "' && sh build.sh >/dev/null"}).exit_code == 0);
}

}  // namespace cb::testing

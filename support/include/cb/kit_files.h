#pragma once
// The starter kits, built into the programs from kits/ (cmake/embed_kits.cmake): `cb-lab init`
// writes them, and the grader builds a compiled kit's harness from them once for a class
// (class_build.h).

#include <string_view>
#include <vector>

namespace cb {

struct KitFile {
  std::string_view lang;  // "python", "node", "cpp"
  std::string_view name;  // a plain file name
  bool executable;        // written 0755 (run.sh)
  std::string_view text;
};

[[nodiscard]] const std::vector<KitFile>& kit_files();

}  // namespace cb

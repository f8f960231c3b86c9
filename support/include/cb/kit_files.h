#pragma once
// The starter kits `cb-lab init` writes, built into the program from kits/ (see
// cmake/embed_kits.cmake).

#include <string_view>
#include <vector>

namespace cb::cli {

struct KitFile {
  std::string_view lang;  // "python", "node", "cpp"
  std::string_view name;  // a plain file name
  bool executable;        // written 0755 (run.sh)
  std::string_view text;
};

[[nodiscard]] const std::vector<KitFile>& kit_files();

}  // namespace cb::cli

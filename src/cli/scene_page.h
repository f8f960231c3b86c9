#pragma once
// A scene's --json data as one self-contained page of pictures (cb-lab scene NAME --html FILE).

#include <nlohmann/json.hpp>
#include <string>

namespace cb::cli {

// `scene`: what `cb-lab scene NAME --json` prints ({"scene", "live", "scale", "steps"}).
[[nodiscard]] std::string scene_page(const nlohmann::json& scene);

}  // namespace cb::cli

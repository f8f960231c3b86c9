#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "exit_code.h"

namespace CLI {
class App;
}

namespace cb::cli {

struct SceneOptions {
  std::string name;
  bool live = false;
  bool json = false;
  double scale = 0;  // 0: chosen so a live scene takes about 12 s
  std::string duration;
  std::string server;
  std::optional<std::uint64_t> seed;
  std::string html;    // also draw the scene as a page here
  std::string shared;  // fleet: also run real processes sharing a breaker through this Redis
};

CLI::App* setup_scene(CLI::App& app, SceneOptions& options);
ExitCode scene_command(const SceneOptions& options);

}  // namespace cb::cli

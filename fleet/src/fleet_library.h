#pragma once
// Internal: the Redis function library (fleet/redis/cb_fleet.lua), embedded at build time.
#include <string_view>

namespace cb::fleet {

[[nodiscard]] std::string_view fleet_library_text() noexcept;
inline const std::string_view kFleetLibrary = fleet_library_text();

}  // namespace cb::fleet

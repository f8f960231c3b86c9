#pragma once
// Internal: the queue's Redis function library (queue/cb_queue.lua), embedded at build time.
#include <string_view>

namespace cb::grade::queue {

[[nodiscard]] std::string_view queue_library_text() noexcept;

}  // namespace cb::grade::queue

#pragma once
// Each fuzz target feeds arbitrary bytes to one parser the grader runs on untrusted input. A
// parser may refuse anything; it must never crash, hang, or read out of bounds.

#include <cstddef>
#include <cstdint>
#include <string_view>

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

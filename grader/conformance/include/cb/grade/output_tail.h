#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace cb::grade {

// The last 8 KiB of what a program wrote, kept as it comes without growing past four times that.
class OutputTail {
 public:
  void add(const char* data, std::size_t n) {
    text_.append(data, n);
    if (text_.size() > 4 * kLimit) text_.erase(0, text_.size() - kLimit);
  }
  [[nodiscard]] std::string take() {
    if (text_.size() > kLimit) text_.erase(0, text_.size() - kLimit);
    return std::move(text_);
  }

 private:
  static constexpr std::size_t kLimit = 8 * 1024;
  std::string text_;
};

}  // namespace cb::grade

#include "input.h"

#include <iostream>

#include "cb/bounded_file.h"

namespace cb::cli {

Result<std::string> read_input(const std::string& path, std::size_t limit, const std::string& what) {
  if (path != "-") return read_bounded_file(path, limit, what);
  std::string data;
  char buf[65536];
  while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    data.append(buf, static_cast<std::size_t>(std::cin.gcount()));
    if (data.size() > limit) return Error{"standard input: larger than " + std::to_string(limit) + " bytes"};
  }
  if (std::cin.bad()) return Error{"standard input: read error"};
  return data;
}

}  // namespace cb::cli

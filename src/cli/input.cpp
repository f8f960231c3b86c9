#include "input.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

namespace cb::cli {

Result<std::string> read_input(const std::string& path, std::size_t limit) {
  const std::string name = path == "-" ? "standard input" : path;
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Error{name + ": cannot open: " + std::strerror(errno)};
    in = &file;
  }
  std::string data;
  char buf[65536];
  while (in->read(buf, sizeof buf) || in->gcount() > 0) {
    data.append(buf, static_cast<std::size_t>(in->gcount()));
    if (data.size() > limit) return Error{name + ": larger than " + std::to_string(limit) + " bytes"};
  }
  if (in->bad()) return Error{name + ": read error"};
  return data;
}

}  // namespace cb::cli

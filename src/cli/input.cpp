#include "input.h"

#include <unistd.h>

#include "cb/bounded_file.h"

namespace cb::cli {

Result<std::string> read_input(const std::string& path, std::size_t limit, const std::string& what) {
  if (path != "-") return read_bounded_file(path, limit, what);
  auto data = read_at_most(STDIN_FILENO, limit);
  if (!data) return Error{"standard input: " + data.error().message};
  if (data->size() > limit) return Error{"standard input: larger than " + std::to_string(limit) + " bytes"};
  return data;
}

}  // namespace cb::cli

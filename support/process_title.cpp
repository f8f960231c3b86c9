#include "cb/process_title.h"

#include <sys/prctl.h>

#include <cstring>
#include <string>

namespace cb {
namespace {

char* g_area = nullptr;
std::size_t g_size = 0;

}  // namespace

void remember_arguments(int argc, char** argv) noexcept {
  if (argc < 1 || argv == nullptr || argv[0] == nullptr) return;
  // The kernel lays the arguments out one after another; only that run is ours to rewrite.
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end = argv[i] + std::strlen(argv[i]) + 1;
  g_area = argv[0];
  g_size = static_cast<std::size_t>(end - argv[0]);
}

void set_process_title(std::string_view title) noexcept {
  const std::string name(title.substr(0, title.find(' ')));
  ::prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
  if (g_area == nullptr || g_size < 2) return;
  std::string_view fits = title;
  // Cut at a word that fits, so the title never ends in half a word.
  while (fits.size() > g_size - 1) {
    const auto space = fits.rfind(' ');
    fits = space == std::string_view::npos ? fits.substr(0, g_size - 1) : fits.substr(0, space);
  }
  std::memcpy(g_area, fits.data(), fits.size());
  std::memset(g_area + fits.size(), 0, g_size - fits.size());
}

}  // namespace cb

// The title `ps` shows: the arguments' own bytes rewritten, cut at a word that fits, the rest
// zeroed; and the name `top` shows, the title's first word.
#include "cb/process_title.h"

#include <doctest/doctest.h>
#include <sys/prctl.h>

#include <array>
#include <cstring>
#include <string>

TEST_CASE("process title: written over the arguments' bytes, cut at a whole word, and the name set") {
  // An argv laid out as the kernel lays it out: one run of bytes, each argument after the last.
  // Static: the library keeps a pointer to it for the rest of the process, as to the real argv.
  static std::array<char, 16> area{'c', 'b', '-', 'l', 'a', 'b', '\0', 's', 't', 'e', 'p', '\0', '1', '\0'};
  std::array<char*, 3> argv{area.data(), area.data() + 7, area.data() + 12};
  cb::remember_arguments(3, argv.data());  // the run is 14 bytes: 13 of title and its end
  cb::set_process_title("cb-lab-server 8110 for the lab");
  CHECK(std::string(area.data()) == "cb-lab-server");  // "cb-lab-server 8110" is 18: cut at the word
  CHECK(area[13] == '\0');
  std::array<char, 17> name{};
  REQUIRE(::prctl(PR_GET_NAME, name.data(), 0, 0, 0) == 0);
  CHECK(std::string(name.data()) == "cb-lab-server");
  cb::set_process_title("short");
  CHECK(std::string(area.data()) == "short");
  CHECK(std::memcmp(area.data() + 5, std::array<char, 9>{}.data(), 9) == 0);  // nothing of the old title left
}

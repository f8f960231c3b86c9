#pragma once
// Bytes from the kernel's random source, for names and secrets nobody may guess.

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <string>

namespace cb {

inline std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r > 0)
      got += static_cast<std::size_t>(r);
    else if (errno != EINTR)
      break;
  }
  return out;
}

}  // namespace cb

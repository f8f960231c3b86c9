// A fixed loop for valgrind --tool=callgrind: instructions are repeatable where nanoseconds on
// this VM are not (bench/count-instructions runs it and divides).
//   breaker_instructions closed-lab|closed-balancer|open-refusal N
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  if (argc != 3) {
    std::fprintf(stderr, "usage: breaker_instructions closed-lab|closed-balancer|open-refusal N\n");
    return 2;
  }
  const std::string_view mode = argv[1];
  const long n = std::atol(argv[2]);
  cb::SteadyClock clock;
  auto breaker = cb::CircuitBreaker::create(mode == "closed-balancer" ? cb::profiles::balancer()
                                                                      : cb::profiles::lab(3600s),
                                            clock)
                     .value();
  if (mode == "open-refusal") {
    for (int i = 0; i < 5; ++i) (void)breaker->record(breaker->try_acquire().ticket, {cb::Verdict::Failure, 1ms});
  }
  long permitted = 0;
  for (long i = 0; i < n; ++i) {
    const cb::Admission a = breaker->try_acquire();
    if (a) {
      ++permitted;
      (void)breaker->record(a.ticket, {cb::Verdict::Success, 1ms});
    }
  }
  std::printf("%ld\n", permitted);
  return 0;
}

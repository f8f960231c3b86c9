// A fixed loop for valgrind --tool=callgrind: instructions are repeatable where nanoseconds on
// this VM are not (bench/count-instructions runs it and divides). The mutex-* modes run the
// common one-mutex design (bench/mutex_breaker.h) on the same loop, for comparison.
//   breaker_instructions [mutex-]closed-lab|[mutex-]closed-balancer|[mutex-]open-refusal N
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"
#include "mutex_breaker.h"

namespace {

using namespace std::chrono_literals;

long ours(std::string_view mode, long n) {
  cb::SteadyClock clock;
  auto breaker =
      cb::CircuitBreaker::create(mode == "closed-balancer" ? cb::profiles::balancer() : cb::profiles::lab(3600s), clock)
          .value();
  if (mode == "open-refusal")
    for (int i = 0; i < 5; ++i) (void)breaker->record(breaker->try_acquire().ticket, {cb::Verdict::Failure, 1ms});
  long permitted = 0;
  for (long i = 0; i < n; ++i) {
    const cb::Admission a = breaker->try_acquire();
    if (a) {
      ++permitted;
      (void)breaker->record(a.ticket, {cb::Verdict::Success, 1ms});
    }
  }
  return permitted;
}

long mutex(std::string_view mode, long n) {
  cb::bench::MutexBreaker breaker(mode == "closed-balancer" ? cb::bench::MutexBreaker::balancer_rule(3600s)
                                                            : cb::bench::MutexBreaker::lab_rule(3600s));
  if (mode == "open-refusal")
    for (int i = 0; i < 5; ++i) breaker.after(breaker.before(), false);
  long permitted = 0;
  for (long i = 0; i < n; ++i) {
    const std::uint64_t generation = breaker.before();
    if (generation != 0) {
      ++permitted;
      breaker.after(generation, true);
    }
  }
  return permitted;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view mode = argc == 3 ? argv[1] : "";
  const bool of_mutex = mode.starts_with("mutex-");
  if (of_mutex) mode.remove_prefix(6);
  if (mode != "closed-lab" && mode != "closed-balancer" && mode != "open-refusal") {
    std::fprintf(stderr,
                 "usage: breaker_instructions [mutex-]closed-lab|[mutex-]closed-balancer|[mutex-]open-refusal N\n");
    return 2;
  }
  const long n = std::atol(argv[2]);
  std::printf("%ld\n", of_mutex ? mutex(mode, n) : ours(mode, n));
  return 0;
}

// The engine from outside the project: a flaky "pricing" dependency behind a breaker, called
// with cb::call and a typed fallback, on a clock the program moves itself so the run is exact.
// Prints what each call got and the transitions; exits non-zero if the story is not the one the
// engine promises (examples/consumer is built and run by the project's tests).
#include <cb/breaker/breaker.h>
#include <cb/breaker/call.h>
#include <cb/breaker/profiles.h>

#include <cstdio>
#include <string>

namespace {

struct Quote {
  int status;
  double price;
};

}  // namespace

int main() {
  using namespace std::chrono_literals;
  cb::ManualClock clock;  // a live program would use cb::SteadyClock
  // The balancer profile: open after 5 failures in a row, 30 s cool-down, 3 successful trials close.
  auto created = cb::CircuitBreaker::create(cb::profiles::balancer(), clock);
  if (!created) {
    std::fprintf(stderr, "breaker: %s\n", created.error().message.c_str());
    return 1;
  }
  cb::CircuitBreaker& breaker = *created.value();
  std::string path;
  breaker.subscribe([&](const cb::Transition& t) { path += std::string(cb::to_string(t.to)) + " "; });

  bool pricing_up = false;
  double last_price = 9.5;
  auto pricing = [&] {
    clock.advance(20ms);  // the call takes 20 ms
    return pricing_up ? Quote{200, 10.0} : Quote{503, 0};
  };
  auto classify = [](const Quote& q) { return q.status >= 500 ? cb::Verdict::Failure : cb::Verdict::Success; };
  auto fallback = cb::fallbacks{[&](const cb::Refused&) -> cb::Reply<Quote> {
                                  return cb::Cached<Quote>{{200, last_price}, clock.now()};
                                },
                                [](const cb::Failed<Quote>& f) -> cb::Reply<Quote> {
                                  return cb::FastError{"pricing answered " + std::to_string(f.value.status)};
                                }};

  std::string got;
  for (int i = 0; i < 12; ++i) {
    if (i == 8) {
      clock.advance(30s);  // the cool-down ends, and pricing has recovered meanwhile
      pricing_up = true;
    }
    const cb::Reply<Quote> r = cb::call(breaker, pricing, classify, fallback);
    got += cb::kind_of(r)[0];
    if (const Quote* q = cb::real_answer(r)) last_price = q->price;
  }
  std::printf("replies: %s\ntransitions: %s\n", got.c_str(), path.c_str());
  // 5 failures (error), then refusals answered from the cache, then 3 trials and CLOSED.
  const bool as_promised = got == "eeeeecccaaaa" && path == "OPEN HALF_OPEN CLOSED " && last_price == 10.0;
  std::puts(as_promised ? "as promised" : "NOT as promised");
  return as_promised ? 0 : 1;
}

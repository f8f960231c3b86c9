// cb::call: a callable through the breaker, timed on the breaker's clock, classified, recorded,
// and answered as a Reply<T>, with the fallback taking the causes it says it takes.
#include "cb/breaker/call.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

struct Answer {
  int status = 200;
  std::string body;
};

Verdict by_status(const Answer& a) {
  return a.status >= 500 ? Verdict::Failure : a.status >= 400 ? Verdict::Ignored : Verdict::Success;
}

const auto degrade = [](const Refused& r) -> Reply<Answer> {
  return Degraded<Answer>{{0, "default"}, std::string(to_string(r.decision))};
};

TEST_CASE("call: an answer, timed on the breaker's clock and counted") {
  Harness h(profiles::lab(3s));
  int ran = 0;
  const Reply<Answer> r = call(
      *h.breaker,
      [&] {
        ++ran;
        h.clock.advance(3500ms);  // slower than the lab's 3 s line
        return Answer{200, "hello"};
      },
      by_status, degrade);
  REQUIRE(real_answer(r) != nullptr);
  CHECK(real_answer(r)->body == "hello");
  CHECK(ran == 1);
  const Counters c = h.breaker->status().metrics.counters;
  CHECK(c.successes == 1);
  CHECK(c.slow == 1);  // the elapsed time came from the breaker's clock
}

TEST_CASE("call: refused - the callable never runs and the fallback says why") {
  Harness h(profiles::probe(1, 10s));
  CHECK(h.calls("F") == "F");
  int ran = 0;
  const Reply<Answer> r = call(
      *h.breaker, [&] { return ++ran, Answer{}; }, by_status, degrade);
  CHECK(ran == 0);
  REQUIRE(std::holds_alternative<Degraded<Answer>>(r));
  CHECK(std::get<Degraded<Answer>>(r).why == "refused-open");
}

TEST_CASE("call: a failed answer") {
  Harness h(profiles::balancer());
  auto fail = [] { return Answer{503, "busy"}; };
  SUBCASE("goes to a fallback that takes Failed") {
    const Reply<Answer> r = call(*h.breaker, fail, by_status,
                                 fallbacks{degrade, [](const Failed<Answer>& f) -> Reply<Answer> {
                                             return FastError{"payments said " + std::to_string(f.value.status)};
                                           }});
    REQUIRE(std::holds_alternative<FastError>(r));
    CHECK(std::get<FastError>(r).why == "payments said 503");
  }
  SUBCASE("is still the dependency's answer to a fallback that does not") {
    const Reply<Answer> r = call(*h.breaker, fail, by_status, degrade);
    REQUIRE(real_answer(r) != nullptr);
    CHECK(real_answer(r)->status == 503);
  }
  CHECK(h.breaker->status().metrics.counters.failures == 1);
}

TEST_CASE("call: failures through call trip the breaker like any others") {
  Harness h(profiles::balancer());  // 5 in a row
  for (int i = 0; i < 5; ++i)
    (void)call(
        *h.breaker,
        [] {
          return Answer{500, ""};
        },
        by_status, degrade);
  CHECK(h.state() == State::Open);
  const Reply<Answer> r = call(
      *h.breaker, [] { return Answer{}; }, by_status, degrade);
  CHECK(is_fallback(r));
}

TEST_CASE("call: an exception from the callable is a failure") {
  Harness h(profiles::balancer());
  auto throws = [&]() -> Answer {
    h.clock.advance(2s);
    throw std::runtime_error("connection reset");
  };
  SUBCASE("rethrown as it was when the fallback does not take Threw") {
    CHECK_THROWS_WITH_AS((void)call(*h.breaker, throws, by_status, degrade), "connection reset", std::runtime_error);
  }
  SUBCASE("taken by a fallback that takes Threw") {
    Duration took{};
    const Reply<Answer> r =
        call(*h.breaker, throws, by_status, fallbacks{degrade, [&](const Threw& t) -> Reply<Answer> {
                                                        took = t.elapsed;
                                                        try {
                                                          std::rethrow_exception(t.error);
                                                        } catch (const std::runtime_error& e) {
                                                          return Cached<Answer>{{200, e.what()}, TimePoint{}};
                                                        }
                                                      }});
    REQUIRE(std::holds_alternative<Cached<Answer>>(r));
    CHECK(std::get<Cached<Answer>>(r).value.body == "connection reset");
    CHECK(took == 2s);
  }
  CHECK(h.breaker->status().metrics.counters.failures == 1);
}

TEST_CASE("call: a classify that throws gives the permit back") {
  Harness h(profiles::lab(3s));
  CHECK(h.calls("FFFFF") == "FFFFF");
  h.at(3);  // HALF_OPEN: 3 trial slots
  auto bad_classify = [](const Answer&) -> Verdict { throw std::logic_error("unknown status"); };
  for (int i = 0; i < 5; ++i)
    CHECK_THROWS_AS((void)call(
                        *h.breaker, [] { return Answer{}; }, bad_classify, degrade),
                    std::logic_error);
  // Each took a slot and gave it back: all three are still free.
  CHECK(h.calls("SSS") == "SSS");
  CHECK(h.state() == State::Closed);
  CHECK(h.breaker->status().metrics.counters.released == 5);
}

}  // namespace
}  // namespace cb::testing

// Listeners hear every transition once, in order, outside the lock.
#include <doctest/doctest.h>

#include <stdexcept>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

TEST_CASE("a listener hears from - to - time - reason and generation of each transition") {
  Harness h(profiles::lab(3s));
  h.at(1);
  CHECK(h.calls("SSSFFF") == "SSSFFF");
  h.at(5);
  CHECK(h.calls("SSS") == "SSS");
  REQUIRE(h.transitions.size() == 3);
  const Transition& open = h.transitions[0];
  CHECK(open.from == State::Closed);
  CHECK(open.to == State::Open);
  CHECK(open.at == at_s(1));
  CHECK(open.reason == Reason::FailureRate);
  CHECK(h.transitions[1].at == at_s(4));
  CHECK(h.transitions[1].reason == Reason::CooldownElapsed);
  CHECK(h.transitions[2].reason == Reason::TrialsSucceeded);
  CHECK(h.transitions[1].generation == open.generation + 1);
  CHECK(h.transitions[2].generation == open.generation + 2);
  CHECK(h.breaker->status().metrics.counters.transitions == 3);
}

TEST_CASE("a listener may call back into the breaker") {
  Harness h(profiles::balancer());
  std::vector<State> seen;
  SUBCASE("to read its state") {
    h.breaker->subscribe([&](const Transition&) { seen.push_back(h.breaker->state()); });
    CHECK(h.calls("FFFFF") == "FFFFF");
    CHECK(seen == std::vector<State>{State::Open});
  }
  SUBCASE("to change it: the change is heard after the one being delivered") {
    h.breaker->subscribe([&](const Transition& t) {
      if (t.to == State::Open && t.reason != Reason::ForcedOpen) h.breaker->force_closed();
    });
    CHECK(h.calls("FFFFF") == "FFFFF");
    CHECK(h.path() == "CLOSED->OPEN OPEN->CLOSED");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("a listener that throws does not stop later transitions from being heard") {
  Harness h(profiles::balancer());
  bool thrown = false;
  h.breaker->subscribe([&](const Transition&) {
    if (!thrown) {
      thrown = true;
      throw std::runtime_error("listener failed");
    }
  });
  CHECK_THROWS_AS(h.calls("FFFFF"), std::runtime_error);
  CHECK(h.state() == State::Open);
  h.at(30);
  CHECK(h.state() == State::HalfOpen);
  CHECK(h.path() == "CLOSED->OPEN OPEN->HALF_OPEN");
}

}  // namespace
}  // namespace cb::testing

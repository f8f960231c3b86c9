#include <doctest/doctest.h>

#include "cb/classify/classifier.h"

namespace cb::classify {
namespace {

Verdict http(int status) { return Classifier::http().classify({Origin::Response, status}); }

TEST_CASE("http: 2xx/3xx success - 4xx ignored - 5xx failure") {
  CHECK(http(200) == Verdict::Success);
  CHECK(http(204) == Verdict::Success);
  CHECK(http(302) == Verdict::Success);
  CHECK(http(399) == Verdict::Success);
  CHECK(http(400) == Verdict::Ignored);
  CHECK(http(404) == Verdict::Ignored);
  CHECK(http(422) == Verdict::Ignored);
  CHECK(http(499) == Verdict::Ignored);
  CHECK(http(500) == Verdict::Failure);
  CHECK(http(503) == Verdict::Failure);
  CHECK(http(599) == Verdict::Failure);
  SUBCASE("a final 1xx or a code outside 100-599 is not a real answer") {
    CHECK(http(100) == Verdict::Failure);
    CHECK(http(600) == Verdict::Failure);
    CHECK(http(0) == Verdict::Failure);
  }
}

TEST_CASE("http: every transport failure is a failure") {
  const Classifier c = Classifier::http();
  for (Origin o : {Origin::Timeout, Origin::ConnectRefused, Origin::ConnectionReset, Origin::MalformedResponse}) {
    CAPTURE(to_string(o));
    CHECK(c.classify({o, 0}) == Verdict::Failure);
  }
}

TEST_CASE("the balancer's: a 404 is a success - a 5xx or a transport failure an error") {
  const Classifier c = Classifier::balancer();
  CHECK(c.classify({Origin::Response, 404}) == Verdict::Success);
  CHECK(c.classify({Origin::Response, 100}) == Verdict::Success);
  CHECK(c.classify({Origin::Response, 500}) == Verdict::Failure);
  CHECK(c.classify({Origin::Timeout, 0}) == Verdict::Failure);
  CHECK(c.classify({Origin::MalformedResponse, 0}) == Verdict::Failure);
}

TEST_CASE("the list can be changed: a rule put in front overrides") {
  const Classifier c = Classifier::http().with({Origin::Response, 429, 429, Verdict::Failure});
  CHECK(c.classify({Origin::Response, 429}) == Verdict::Failure);
  CHECK(c.classify({Origin::Response, 428}) == Verdict::Ignored);
  CHECK(c.rules().size() == Classifier::http().rules().size() + 1);
}

TEST_CASE("rules read from text") {
  auto c = Classifier::parse("429=failure, 4xx=ignored 200-399=success timeout=ignored otherwise=failure");
  REQUIRE(c.ok());
  CHECK(c->classify({Origin::Response, 429}) == Verdict::Failure);
  CHECK(c->classify({Origin::Response, 404}) == Verdict::Ignored);
  CHECK(c->classify({Origin::Response, 301}) == Verdict::Success);
  CHECK(c->classify({Origin::Timeout, 0}) == Verdict::Ignored);
  CHECK(c->classify({Origin::Response, 500}) == Verdict::Failure);
  CHECK(c->classify({Origin::ConnectionReset, 0}) == Verdict::Failure);
  SUBCASE("a class range: 2xx-3xx") {
    auto r = Classifier::parse("2xx-3xx=success otherwise=ignored");
    REQUIRE(r.ok());
    CHECK(r->classify({Origin::Response, 399}) == Verdict::Success);
    CHECK(r->classify({Origin::Response, 400}) == Verdict::Ignored);
  }
  SUBCASE("errors name the token") {
    CHECK(Classifier::parse("4xx").error().message == "classification rule '4xx': expected <what>=<verdict>");
    CHECK(Classifier::parse("4xx=bad").error().message.find("'4xx=bad': verdict must be") != std::string::npos);
    CHECK(Classifier::parse("7xx=failure").error().message.find("'7xx=failure': expected a code") != std::string::npos);
    CHECK_FALSE(Classifier::parse("500-400=failure").ok());
    CHECK_FALSE(Classifier::parse("response=failure").ok());
  }
}

}  // namespace
}  // namespace cb::classify

#pragma once
// What counts as a failure is a decision, kept as data: an ordered list of rules from what was
// observed (a status code, or how the transport failed) to a Verdict. It lives beside the
// engine, not in it: the state machine only ever sees Success, Failure or Ignored.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cb/breaker/outcome.h"
#include "cb/result.h"

namespace cb::classify {

// Where an answer came from, in the spirit of Envoy's outlier-detection origins.
enum class Origin : std::uint8_t {
  Response,           // a well-formed status line; `status` holds its code
  Timeout,            // no answer before the caller gave up
  ConnectRefused,     // nobody listening
  ConnectionReset,    // the peer dropped the connection
  MalformedResponse,  // something came back, but not a well-formed status line
};

[[nodiscard]] std::string_view to_string(Origin o) noexcept;

struct Observation {
  Origin origin = Origin::Response;
  int status = 0;  // Origin::Response only
};

// Matches an origin, and for responses a range of codes (inclusive).
struct Rule {
  Origin origin = Origin::Response;
  int status_min = 0;
  int status_max = 999;
  Verdict verdict = Verdict::Failure;
};

class Classifier {
 public:
  // The first rule that matches decides; an observation no rule matches gets `otherwise`.
  Classifier(std::vector<Rule> rules, Verdict otherwise) : rules_(std::move(rules)), otherwise_(otherwise) {}

  [[nodiscard]] Verdict classify(const Observation& o) const noexcept;

  // A copy with `rule` in front of the others, so it overrides them (e.g. 429 as a failure).
  [[nodiscard]] Classifier with(Rule rule) const;

  [[nodiscard]] const std::vector<Rule>& rules() const noexcept { return rules_; }

  // The project's default for HTTP (docs/ENGINE.md): 2xx/3xx success, 4xx ignored (the
  // caller's mistake), 5xx failure; a timeout, a refused or reset connection, a malformed answer,
  // or a final 1xx (which no server may send as an answer) is a failure.
  [[nodiscard]] static Classifier http();
  // The balancer exercise's: an answer that is a well-formed code 100-499 is not an error (a 404 is
  // the caller's mistake and "a success as far as the breaker is concerned"); 5xx and every
  // transport failure are errors.
  [[nodiscard]] static Classifier balancer();

  // Reads rules from text, e.g. "429=failure 4xx=ignored 2xx-3xx=success timeout=failure",
  // with an optional "otherwise=<verdict>". Errors name the token.
  [[nodiscard]] static Result<Classifier> parse(std::string_view text);

 private:
  std::vector<Rule> rules_;
  Verdict otherwise_;
};

}  // namespace cb::classify

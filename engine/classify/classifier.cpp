#include "cb/classify/classifier.h"

#include <array>
#include <charconv>
#include <optional>
#include <utility>

namespace cb::classify {
namespace {

constexpr std::array kOrigins{
    std::pair{Origin::Response, std::string_view{"response"}},
    std::pair{Origin::Timeout, std::string_view{"timeout"}},
    std::pair{Origin::ConnectRefused, std::string_view{"refused"}},
    std::pair{Origin::ConnectionReset, std::string_view{"reset"}},
    std::pair{Origin::MalformedResponse, std::string_view{"malformed"}},
};

constexpr std::array kVerdicts{
    std::pair{Verdict::Success, std::string_view{"success"}},
    std::pair{Verdict::Failure, std::string_view{"failure"}},
    std::pair{Verdict::Ignored, std::string_view{"ignored"}},
};

std::vector<Rule> transport_failures() {
  return {
      {Origin::Timeout, 0, 0, Verdict::Failure},
      {Origin::ConnectRefused, 0, 0, Verdict::Failure},
      {Origin::ConnectionReset, 0, 0, Verdict::Failure},
      {Origin::MalformedResponse, 0, 0, Verdict::Failure},
  };
}

std::optional<int> three_digits(std::string_view s) {
  int v = 0;
  if (s.size() != 3) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "404", "4xx", "200-399", "2xx-3xx" -> an inclusive range of codes.
std::optional<std::pair<int, int>> code_range(std::string_view s) {
  auto one = [](std::string_view part, bool upper) -> std::optional<int> {
    if (part.size() == 3 && part[1] == 'x' && part[2] == 'x' && part[0] >= '1' && part[0] <= '5') {
      const int hundreds = (part[0] - '0') * 100;
      return upper ? hundreds + 99 : hundreds;
    }
    return three_digits(part);
  };
  const auto dash = s.find('-');
  const auto lo = one(s.substr(0, dash), false);
  const auto hi = one(dash == std::string_view::npos ? s : s.substr(dash + 1), true);
  if (!lo || !hi || *lo > *hi) return std::nullopt;
  return std::pair{*lo, *hi};
}

}  // namespace

std::string_view to_string(Origin o) noexcept {
  for (const auto& [e, name] : kOrigins)
    if (e == o) return name;
  return "?";
}

Verdict Classifier::classify(const Observation& o) const noexcept {
  for (const Rule& r : rules_) {
    if (r.origin != o.origin) continue;
    if (o.origin == Origin::Response && (o.status < r.status_min || o.status > r.status_max)) continue;
    return r.verdict;
  }
  return otherwise_;
}

Classifier Classifier::with(Rule rule) const {
  std::vector<Rule> rules;
  rules.reserve(rules_.size() + 1);
  rules.push_back(rule);
  rules.insert(rules.end(), rules_.begin(), rules_.end());
  return Classifier{std::move(rules), otherwise_};
}

Classifier Classifier::http() {
  std::vector<Rule> rules{
      {Origin::Response, 200, 399, Verdict::Success},
      {Origin::Response, 400, 499, Verdict::Ignored},
      {Origin::Response, 500, 599, Verdict::Failure},
  };
  for (const Rule& r : transport_failures()) rules.push_back(r);
  return Classifier{std::move(rules), Verdict::Failure};
}

Classifier Classifier::balancer() {
  std::vector<Rule> rules{
      {Origin::Response, 100, 499, Verdict::Success},
      {Origin::Response, 500, 599, Verdict::Failure},
  };
  for (const Rule& r : transport_failures()) rules.push_back(r);
  return Classifier{std::move(rules), Verdict::Failure};
}

Result<Classifier> Classifier::parse(std::string_view text) {
  std::vector<Rule> rules;
  Verdict otherwise = Verdict::Failure;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto start = text.find_first_not_of(" \t,", pos);
    if (start == std::string_view::npos) break;
    auto end = text.find_first_of(" \t,", start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view token = text.substr(start, end - start);
    pos = end;

    const auto eq = token.find('=');
    if (eq == std::string_view::npos)
      return Error{"classification rule '" + std::string(token) + "': expected <what>=<verdict>"};
    const std::string_view what = token.substr(0, eq);
    const std::string_view verdict_text = token.substr(eq + 1);
    std::optional<Verdict> verdict;
    for (const auto& [v, name] : kVerdicts)
      if (name == verdict_text) verdict = v;
    if (!verdict)
      return Error{"classification rule '" + std::string(token) + "': verdict must be success, failure or ignored"};
    if (what == "otherwise") {
      otherwise = *verdict;
      continue;
    }
    std::optional<Origin> origin;
    for (const auto& [o, name] : kOrigins)
      if (name == what && o != Origin::Response) origin = o;
    if (origin) {
      rules.push_back({*origin, 0, 0, *verdict});
      continue;
    }
    const auto range = code_range(what);
    if (!range)
      return Error{"classification rule '" + std::string(token) +
                   "': expected a code (404), a class (4xx), a range (200-399) or one of "
                   "timeout, refused, reset, malformed"};
    rules.push_back({Origin::Response, range->first, range->second, *verdict});
  }
  return Classifier{std::move(rules), otherwise};
}

}  // namespace cb::classify

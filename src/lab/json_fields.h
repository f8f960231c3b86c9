#pragma once
// Internal: reading the fields of one JSON object of a scenario, with the path for errors, and
// a record of which keys were read so that a misspelt key is an error rather than ignored.

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "cb/decimal_time.h"
#include "cb/result.h"

namespace cb::lab {

using json = nlohmann::json;

// A duration of a scenario (a wait, a cool-down, a timeout) written as `text` at `at`: 0 to 24
// hours. 24 hours is past any lab's and far below where a clock's time point overflows
// ("100000000h" once wrapped it: a wait of 360 million seconds finished in 0.06 s).
inline Result<std::chrono::microseconds> scenario_duration(const std::string& text, const std::string& at) {
  auto d = parse_duration(text);
  if (!d) return Error{at + ": " + d.error().message};
  if (d->count() < 0) return Error{at + ": must not be negative"};
  if (*d > std::chrono::hours(24)) return Error{at + ": '" + text + "' is out of range (0 to 24h)"};
  return *d;
}

// Reads fields of one JSON object, remembering the path for errors and which keys were used,
// so that a misspelt key is an error rather than silently ignored.
class Fields {
 public:
  Fields(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  [[nodiscard]] std::string at(const std::string& key) const { return path_ + (path_.empty() ? "" : ".") + key; }

  Result<std::optional<std::string>> text(const std::string& key) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end()) return std::optional<std::string>{};
    if (!it->is_string()) return Error{at(key) + ": expected a string"};
    return std::optional<std::string>{it->get<std::string>()};
  }
  Result<std::optional<long long>> whole(const std::string& key, long long lo, long long hi) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end()) return std::optional<long long>{};
    if (!it->is_number_integer() || it->get<long long>() < lo || it->get<long long>() > hi)
      return Error{at(key) + ": expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi)};
    return std::optional<long long>{it->get<long long>()};
  }
  Result<std::optional<double>> number(const std::string& key) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end()) return std::optional<double>{};
    if (!it->is_number()) return Error{at(key) + ": expected a number"};
    return std::optional<double>{it->get<double>()};
  }
  Result<std::optional<std::chrono::microseconds>> duration(const std::string& key) {
    auto t = text(key);
    if (!t) return t.error();
    if (!*t) return std::optional<std::chrono::microseconds>{};
    auto d = scenario_duration(**t, at(key));
    if (!d) return d.error();
    return std::optional<std::chrono::microseconds>{*d};
  }
  Result<bool> flag(const std::string& key) {
    used_.insert(key);
    const auto it = j_.find(key);
    if (it == j_.end()) return false;
    if (!it->is_boolean()) return Error{at(key) + ": expected true or false"};
    return it->get<bool>();
  }
  // Marks a key as read (its value is read by the caller directly).
  void use(const std::string& key) { used_.insert(key); }
  // Every key must have been asked for.
  Result<void> no_others() const {
    for (const auto& [key, value] : j_.items())
      if (used_.count(key) == 0) return Error{at(key) + ": not a field here"};
    return {};
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> used_;
};

}  // namespace cb::lab

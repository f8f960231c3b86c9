#include <nlohmann/json.hpp>

#include "cb/grade/artifacts.h"
#include "cb/grade/json_limits.h"
#include "cb/grade/wording.h"

namespace cb::grade {
namespace {

std::string kind_of(const nlohmann::json& v) {
  if (v.is_string()) return "a string";
  if (v.is_number_float()) return "a number written with a decimal point or an exponent";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "true or false";
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

Result<std::int64_t> count_field(const nlohmann::json& o, const char* key, std::int64_t minimum) {
  const auto it = o.find(key);
  if (it == o.end()) return Error{std::string("\"") + key + "\" is missing"};
  if (!it->is_number_integer())
    return Error{std::string("\"") + key + "\" is " + clipped_dump(*it) + " (" + kind_of(*it) +
                 "); expected a whole number"};
  const auto v = it->get<std::int64_t>();
  if (v < minimum)
    return Error{std::string("\"") + key + "\" is " + std::to_string(v) + "; expected " + std::to_string(minimum) +
                 " or more"};
  return v;
}

}  // namespace

Result<StateFile> parse_state_file(std::string_view text) {
  auto parsed = parse_bounded_json(text);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return Error{"expected a JSON object, got " + kind_of(j)};
  std::vector<std::string> missing;
  for (const char* key : {"state", "failures", "window_size", "permitted_in_half_open"})
    if (!j.contains(key)) missing.emplace_back(key);
  if (!missing.empty()) return Error{missing_keys(missing)};
  StateFile out;
  const auto state = j.find("state");
  if (!state->is_string())
    return Error{"\"state\" is " + clipped_dump(*state) + "; expected a string such as \"CLOSED\""};
  out.state = state->get<std::string>();
  auto failures = count_field(j, "failures", 0);
  if (!failures) return failures.error();
  auto window = count_field(j, "window_size", 1);
  if (!window) return window.error();
  auto permitted = count_field(j, "permitted_in_half_open", 0);
  if (!permitted) return permitted.error();
  out.failures = *failures;
  out.window_size = *window;
  out.permitted_in_half_open = *permitted;
  return out;
}

}  // namespace cb::grade

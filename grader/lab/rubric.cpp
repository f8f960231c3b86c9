#include "cb/grade/rubric.h"

#include "cb/hmac_sha256.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "cb/grade/json_limits.h"

namespace cb::grade {
namespace {

bool is_visibility(const std::string& v) {
  return v == "visible" || v == "hidden" || v == "after_due_date" || v == "after_published";
}

// "1".."8" -> the step; "conformance" -> 0; anything else -> -1.
int part_of(const std::string& key) {
  if (key.size() == 1 && key[0] >= '1' && key[0] < '1' + kGradedSteps) return key[0] - '0';
  return key == "conformance" ? 0 : -1;
}

std::string parts_error(const std::string& field, const std::string& key) {
  return "rubric: " + field + ".\"" + key.substr(0, 20) + "\": the parts are steps \"1\" to \"" +
         std::to_string(kGradedSteps) + "\" and \"conformance\"";
}

}  // namespace

Rubric Rubric::equal() {
  Rubric r;
  for (int s = 1; s <= kGradedSteps; ++s) {
    r.points[static_cast<std::size_t>(s)] = 1.0;
    r.visibility[static_cast<std::size_t>(s)] = "visible";
  }
  return r;
}

double Rubric::max_score(bool with_conformance) const {
  double sum = with_conformance ? conformance : 0;
  for (int s = 1; s <= kGradedSteps; ++s) sum += points[static_cast<std::size_t>(s)];
  return sum;
}

bool is_id_field(std::string_view f) {
  return !f.empty() && f.size() <= 40 && std::all_of(f.begin(), f.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

Result<Rubric> Rubric::parse(std::string_view text) {
  auto j = parse_bounded_json(text, 4);
  if (!j) return Error{"rubric: " + j.error().message};
  if (!j->is_object()) return Error{"rubric: expected {\"points\": {\"1\": <points>, ...}, ...}"};
  for (const auto& [key, value] : j->items()) {
    (void)value;
    if (key != "points" && key != "visibility" && key != "stdout_visibility" && key != "seed" && key != "traces" &&
        key != "conformance_timeout" && key != "id_field" && key != "cap_other_numbers" && key != "cap_no_replay" &&
        key != "refuse_prebuilt")
      return Error{"rubric: \"" + key.substr(0, 20) +
                   "\": the fields are points, visibility, stdout_visibility, seed, traces, conformance_timeout, "
                   "id_field, cap_other_numbers, cap_no_replay and refuse_prebuilt"};
  }
  Rubric r = equal();
  r.sha256 = cb::hex(cb::sha256(text));
  if (j->contains("points")) {
    if (!(*j)["points"].is_object()) return Error{"rubric: points: expected {\"1\": <points>, ...}"};
    for (const auto& [key, value] : (*j)["points"].items()) {
      const int part = part_of(key);
      if (part < 0) return Error{parts_error("points", key)};
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
        return Error{"rubric: points.\"" + key + "\": expected a number of points, 0 or more"};
      (part > 0 ? r.points[static_cast<std::size_t>(part)] : r.conformance) = value.get<double>();
    }
  }
  if (j->contains("visibility")) {
    const auto& v = (*j)["visibility"];
    if (!v.is_object()) return Error{"rubric: visibility: expected {\"default\": \"visible\", \"3\": \"hidden\", ...}"};
    // The default first, so a part named beside it wins.
    std::string fallback = "visible";
    if (const auto d = v.find("default"); d != v.end()) {
      if (!d->is_string() || !is_visibility(d->get<std::string>()))
        return Error{"rubric: visibility.default: expected visible, hidden, after_due_date or after_published"};
      fallback = d->get<std::string>();
    }
    for (int s = 1; s <= kGradedSteps; ++s) r.visibility[static_cast<std::size_t>(s)] = fallback;
    r.conformance_visibility = fallback;
    for (const auto& [key, value] : v.items()) {
      if (key == "default") continue;
      const int part = part_of(key);
      if (part < 0) return Error{parts_error("visibility", key)};
      if (!value.is_string() || !is_visibility(value.get<std::string>()))
        return Error{"rubric: visibility.\"" + key + "\": expected visible, hidden, after_due_date or after_published"};
      (part > 0 ? r.visibility[static_cast<std::size_t>(part)] : r.conformance_visibility) = value.get<std::string>();
    }
  }
  if (j->contains("stdout_visibility")) {
    const auto& v = (*j)["stdout_visibility"];
    if (!v.is_string() || !is_visibility(v.get<std::string>()))
      return Error{"rubric: stdout_visibility: expected visible, hidden, after_due_date or after_published"};
    r.stdout_visibility = v.get<std::string>();
  }
  if (j->contains("seed")) {
    const auto& v = (*j)["seed"];
    if (!v.is_number_unsigned()) return Error{"rubric: seed: expected a whole number, 0 or more"};
    r.seed = v.get<std::uint64_t>();
  }
  if (j->contains("traces")) {
    const auto& v = (*j)["traces"];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 100000)
      return Error{"rubric: traces: expected a whole number from 1 to 100000"};
    r.traces = v.get<int>();
  }
  if (j->contains("conformance_timeout")) {
    const auto& v = (*j)["conformance_timeout"];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 1 || v.get<double>() > 86400)
      return Error{"rubric: conformance_timeout: expected a number of seconds from 1 to 86400"};
    r.conformance_timeout = std::chrono::milliseconds{static_cast<std::int64_t>(v.get<double>() * 1000)};
  }
  if (j->contains("id_field")) {
    const auto& v = (*j)["id_field"];
    if (!v.is_string() || !is_id_field(v.get<std::string>()))
      return Error{"rubric: id_field: expected email, sid, folder or a roster's column (letters, digits, _)"};
    r.id_field = v.get<std::string>();
  }
  for (const auto& [key, cap] :
       {std::pair{"cap_other_numbers", &r.cap_other_numbers}, std::pair{"cap_no_replay", &r.cap_no_replay}}) {
    if (!j->contains(key)) continue;
    const auto& v = (*j)[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
      return Error{std::string("rubric: ") + key + ": expected the most points the lab's steps may earn, 0 or more"};
    *cap = v.get<double>();
  }
  if (j->contains("refuse_prebuilt")) {
    const auto& v = (*j)["refuse_prebuilt"];
    auto rule = v.is_string() ? parse_prebuilt(v.get<std::string>()) : Result<Prebuilt>(Error{"not a string"});
    if (!rule) return Error{"rubric: refuse_prebuilt: expected \"harness\" (the default), \"all\" or \"none\""};
    r.prebuilt = *rule;
  }
  return r;
}

}  // namespace cb::grade



#include "cb/grade/artifacts.h"
#include "cb/grade/evidence.h"
#include "cb/grade/lab_spec.h"

#include "cb/flaky/http_get.h"
#include "cb/utc_time.h"
#include "cb/grade/json_limits.h"

namespace cb::grade {
namespace {

using json = nlohmann::json;

Result<RecordEntry> entry_from(const json& e, std::size_t i) {
  const std::string at = "entries[" + std::to_string(i) + "]";
  if (!e.is_object()) return Error{at + ": expected an object"};
  RecordEntry r;
  auto need = [&](const char* key, auto check) -> bool {
    const auto it = e.find(key);
    return it != e.end() && check(*it);
  };
  if (!need("seq", [](const json& v) { return v.is_number_unsigned(); }))
    return Error{at + ".seq: expected a whole number"};
  if (!need("t_ms", [](const json& v) { return v.is_number(); })) return Error{at + ".t_ms: expected a number"};
  if (!need("method", [](const json& v) { return v.is_string(); })) return Error{at + ".method: expected a string"};
  if (!need("path", [](const json& v) { return v.is_string(); })) return Error{at + ".path: expected a string"};
  if (!need("outcome", [](const json& v) { return v.is_string(); })) return Error{at + ".outcome: expected a string"};
  if (!need("counted", [](const json& v) { return v.is_boolean(); }))
    return Error{at + ".counted: expected true or false"};
  if (!need("status", [](const json& v) { return v.is_null() || v.is_number_integer(); }))
    return Error{at + ".status: expected a status code or null"};
  r.seq = e["seq"].get<std::uint64_t>();
  r.t_ms = e["t_ms"].get<double>();
  r.method = e["method"].get<std::string>();
  r.path = e["path"].get<std::string>();
  r.outcome = e["outcome"].get<std::string>();
  r.counted = e["counted"].get<bool>();
  if (e["status"].is_number_integer()) r.status = e["status"].get<int>();
  if (const auto w = e.find("wall"); w != e.end() && w->is_string()) r.wall_us = parse_utc(w->get<std::string>());
  if (const auto c = e.find("count"); c != e.end() && c->is_number_integer()) r.count = c->get<std::int64_t>();
  if (const auto d = e.find("duration_ms"); d != e.end() && d->is_number()) r.duration_ms = d->get<double>();
  return r;
}

}  // namespace

Result<Record> parse_record(std::string_view text) {
  auto parsed = parse_bounded_json(text, 8);
  if (!parsed) return Error{"the server's record is not JSON: " + parsed.error().message};
  const json& j = *parsed;
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array())
    return Error{"the server's record has no \"entries\" array; is this a flaky server?"};
  Record r;
  if (j.contains("epoch") && j["epoch"].is_number_unsigned()) r.epoch = j["epoch"].get<std::uint64_t>();
  if (j.contains("count") && j["count"].is_number_unsigned()) r.count = j["count"].get<std::uint64_t>();
  if (j.contains("gap") && j["gap"].is_boolean()) r.gap = j["gap"].get<bool>();
  const json& entries = j["entries"];
  r.entries.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto e = entry_from(entries[i], i);
    if (!e) return Error{"the server's record: " + e.error().message};
    if (!r.entries.empty() && e->seq <= r.entries.back().seq)
      return Error{"the server's record: entries[" + std::to_string(i) + "].seq does not increase"};
    r.entries.push_back(std::move(*e));
  }
  return r;
}

std::string to_json(const Record& r) {
  json entries = json::array();
  for (const RecordEntry& e : r.entries) {
    json j{{"seq", e.seq},
           {"t_ms", e.t_ms},
           {"method", e.method},
           {"path", e.path},
           {"outcome", e.outcome},
           {"counted", e.counted},
           {"status", e.status ? json(*e.status) : json(nullptr)}};
    if (e.wall_us) j["wall"] = format_utc(*e.wall_us, 6);
    if (e.count) j["count"] = *e.count;
    if (e.duration_ms) j["duration_ms"] = *e.duration_ms;
    entries.push_back(std::move(j));
  }
  return json{{"epoch", r.epoch}, {"count", r.count}, {"gap", r.gap}, {"entries", std::move(entries)}}.dump(1) + "\n";
}

Result<Record> fetch_record(const std::string& server_url, std::chrono::milliseconds timeout,
                            const std::string& admin_token) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!admin_token.empty()) headers.emplace_back("X-CB-Admin", admin_token);
  Record all;
  std::uint64_t since = 0;
  // Pages of 10000 until a short page; at most 100 pages, far beyond any ring the server keeps.
  for (int page = 0; page < 100; ++page) {
    auto res =
        flaky::http_get(server_url, "/admin/record?since=" + std::to_string(since) + "&limit=10000", timeout, headers);
    if (!res) return res.error();
    if (res->status != 200)
      return Error{server_url + "/admin/record answered " + std::to_string(res->status) + "; is this a flaky server?"};
    auto rec = parse_record(res->body);
    if (!rec) return rec.error();
    if (page == 0) {
      all.epoch = rec->epoch;
      all.gap = rec->gap;
    } else if (rec->epoch != all.epoch) {
      return Error{"the server's record was reset while it was being read; grade again"};
    }
    all.count = rec->count;
    const bool more = rec->entries.size() == 10000;
    for (auto& e : rec->entries) all.entries.push_back(std::move(e));
    if (!more) break;
    since = all.entries.back().seq;
  }
  return all;
}

std::optional<std::int64_t> answered_wall_us(const RecordEntry& e) {
  if (!e.wall_us) return std::nullopt;
  return *e.wall_us + static_cast<std::int64_t>(e.duration_ms.value_or(0.0) * 1000.0);
}

std::string record_defect(const Record& r) {
  if (r.gap) return "the server's record lost requests before they were read (its ring overflowed)";
  std::uint64_t want = 1;
  for (const RecordEntry& e : r.entries) {
    if (e.seq != want)
      return "the server's record is missing request" + std::string(e.seq - want > 1 ? "s #" : " #") +
             std::to_string(want) + (e.seq - want > 1 ? "-#" + std::to_string(e.seq - 1) : "") +
             ": it does not hold the whole run";
    ++want;
  }
  return {};
}

namespace {

// The server's own endpoints, whatever the lab sends: its count, and its record and reset.
constexpr std::string_view kCountPath = "/count";
constexpr std::string_view kAdminPrefix = "/admin/";

// The script's phases, in order; a request that belongs to an earlier phase than the one the
// record is in starts a new run.
enum class Phase { Start, Fast, Burst, Trials, Bad };

}  // namespace

LabRun analyse(const Record& record, const LabSpec& spec) {
  LabRun run;
  for (const RecordEntry& e : record.entries) {
    if (e.path == kCountPath) {
      run.count_calls.push_back(&e);
    } else if (e.counted) {
      run.lab.push_back(&e);
    } else if (e.path.rfind(kAdminPrefix, 0) == 0) {
      run.admin.push_back(&e);
    }
  }
  bool in_burst = false;
  bool burst_over = false;
  std::size_t lab_index = 0;
  for (const RecordEntry& e : record.entries) {
    if (burst_over) break;
    if (e.path == spec.script.fail_path && e.counted) {
      in_burst = true;
      run.burst.push_back(&e);
      run.trip = lab_index;
    } else if (in_burst && (e.path == kCountPath || e.counted)) {
      burst_over = true;
    }
    if (e.counted) ++lab_index;
  }
  run.first_burst_500 = run.burst.size();

  Phase phase = Phase::Start;
  for (const RecordEntry* e : run.lab) {
    const bool fast = e->path == spec.script.fast_path;
    const bool fail = e->path == spec.script.fail_path;
    const bool bad = e->path == spec.script.bad_path;
    const bool again = (fail && (phase == Phase::Trials || phase == Phase::Bad)) || (fast && phase == Phase::Bad);
    if (run.runs == 0 || again) {
      ++run.runs;
      if (run.runs == 2) run.second_run_seq = e->seq;
      phase = Phase::Start;
    }
    if (fast)
      phase = phase == Phase::Start || phase == Phase::Fast ? Phase::Fast
              : phase == Phase::Burst                       ? Phase::Trials
                                                            : phase;
    if (fail) phase = Phase::Burst;
    if (bad) phase = Phase::Bad;
  }

  bool seen_500 = false;
  std::optional<std::size_t> first_bad;
  for (std::size_t i = 0; i < run.lab.size(); ++i) {
    const RecordEntry& e = *run.lab[i];
    if (e.path == spec.script.fail_path) {
      seen_500 = true;
      ++run.always500;
      run.last_500 = i;
    } else if (!seen_500) {
      ++(e.path == spec.script.fast_path && e.status == 200 ? run.fast_before_first_500 : run.other_before_first_500);
    }
    if (e.path == spec.script.bad_path) {
      ++run.bad;
      if (e.status == 400) ++run.bad_answered_400;
      if (!first_bad) first_bad = i;
    }
  }
  if (run.last_500) {
    const RecordEntry& opened = *run.lab[*run.last_500];
    const std::size_t next = *run.last_500 + 1;
    if (next < run.lab.size() && (!first_bad || next < *first_bad)) {
      run.gap_after_open_ms = run.lab[next]->t_ms - (opened.t_ms + opened.duration_ms.value_or(0.0));
    }
    for (std::size_t i = next; i < run.lab.size() && (!first_bad || i < *first_bad); ++i)
      run.trials.push_back(run.lab[i]);
  }
  return run;
}

}  // namespace cb::grade

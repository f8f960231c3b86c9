#include <algorithm>
#include <array>
#include <cmath>

#include "cb/grade/artifacts.h"
#include "cb/grade/record.h"
#include "cb/grade/lab_spec.h"

#include "cb/flaky/http_get.h"
#include "cb/utc_time.h"
#include "cb/grade/json_limits.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {
namespace {

using json = nlohmann::json;

// What the flaky server says of a request's end (flaky_server/src/record.cpp).
constexpr std::array<std::string_view, 7> kOutcomes{"pending",     "answered",   "reset", "garbage",
                                                    "client-gone", "hang-limit", "cut"};

bool is_method(const std::string& m) {
  return !m.empty() && m.size() <= 16 && std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// Each field as the server writes it: a record file given with --record may have been written
// by anyone, and one with a t_ms of -5, a status of 99999 or an outcome of "fine" was graded 8/8.
Result<RecordEntry> entry_from(const json& e, std::size_t i) {
  const std::string at = "entries[" + std::to_string(i) + "]";
  if (!e.is_object()) return Error{at + ": expected an object"};
  RecordEntry r;
  auto need = [&](const char* key, auto check) -> bool {
    const auto it = e.find(key);
    return it != e.end() && check(*it);
  };
  auto finite_from_0 = [](const json& v) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
  };
  if (!need("seq", [](const json& v) { return v.is_number_unsigned() && v.get<std::uint64_t>() >= 1; }))
    return Error{at + ".seq: expected a whole number from 1"};
  if (!need("t_ms", finite_from_0)) return Error{at + ".t_ms: expected a number of milliseconds from 0"};
  if (!need("method", [](const json& v) { return v.is_string() && is_method(v.get<std::string>()); }))
    return Error{at + ".method: expected a method in capitals, such as \"GET\""};
  if (!need("path", [](const json& v) { return v.is_string() && v.get<std::string>().size() <= 87; }))
    return Error{at + ".path: expected a path of at most 87 bytes (the server cuts longer ones)"};
  if (!need("outcome", [](const json& v) {
        return v.is_string() && std::find(kOutcomes.begin(), kOutcomes.end(), v.get<std::string>()) != kOutcomes.end();
      }))
    return Error{at + ".outcome: expected one of pending, answered, reset, garbage, client-gone, hang-limit, cut"};
  if (!need("counted", [](const json& v) { return v.is_boolean(); }))
    return Error{at + ".counted: expected true or false"};
  if (!need("status", [](const json& v) {
        return v.is_null() || (v.is_number_integer() && v.get<std::int64_t>() >= 100 && v.get<std::int64_t>() <= 599);
      }))
    return Error{at + ".status: expected a status code from 100 to 599, or null"};
  r.seq = e["seq"].get<std::uint64_t>();
  r.t_ms = e["t_ms"].get<double>();
  r.method = e["method"].get<std::string>();
  r.path = e["path"].get<std::string>();
  r.outcome = e["outcome"].get<std::string>();
  r.counted = e["counted"].get<bool>();
  if (e["status"].is_number_integer()) r.status = e["status"].get<int>();
  if (const auto w = e.find("wall"); w != e.end() && w->is_string()) r.wall_us = parse_utc(w->get<std::string>());
  if (const auto c = e.find("count"); c != e.end()) {
    if (!c->is_number_unsigned()) return Error{at + ".count: expected a whole number from 0"};
    r.count = c->get<std::int64_t>();
  }
  if (const auto d = e.find("duration_ms"); d != e.end() && !d->is_null()) {
    if (!finite_from_0(*d)) return Error{at + ".duration_ms: expected a number of milliseconds from 0, or null"};
    r.duration_ms = d->get<double>();
  }
  return r;
}

// Builds the record from the parser's events, one entry's small tree at a time: a tree of the
// whole record took 470 MB for 300k entries (a --record file may be 64 MiB). The text has been
// checked whole before (depth, duplicate keys, syntax), so only its shape is judged here.
class RecordBuilder final : public nlohmann::json_sax<json> {
 public:
  Record record;
  std::string error;
  bool has_entries = false;
  bool has_epoch = false;
  bool top_is_object = false;

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool v) override { return scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(json(v)); }
  bool string(string_t& v) override { return scalar(json(v)); }
  bool binary(binary_t&) override { return scalar(json(nullptr)); }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 3 && in_entries_) entry_key_ = k;
    return true;
  }
  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 1) top_is_object = true;
    if (in_entries_ && depth_ == 3) entry_ = json::object();
    if (in_entries_ && depth_ == 4) entry_[entry_key_] = json::object();  // a field that is not a scalar
    return true;
  }
  bool end_object() override {
    if (in_entries_ && depth_ == 3 && !finish(entry_)) return false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (depth_ == 2 && top_key_ == "entries") {
      in_entries_ = true;
      has_entries = true;
    }
    if (in_entries_ && depth_ == 3) return finish(json::array());  // an entry that is an array
    if (in_entries_ && depth_ == 4) entry_[entry_key_] = json::array();
    return true;
  }
  bool end_array() override {
    if (depth_ == 2) in_entries_ = false;
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    error = ex.what();
    return false;
  }

 private:
  bool scalar(json v) {
    if (depth_ == 1) {
      if (top_key_ == "epoch" && v.is_number_unsigned() && v.get<std::uint64_t>() >= 1) {
        record.epoch = v.get<std::uint64_t>();
        has_epoch = true;
      }
      if (top_key_ == "count" && v.is_number_unsigned()) record.count = v.get<std::uint64_t>();
      if (top_key_ == "gap" && v.is_boolean()) record.gap = v.get<bool>();
    }
    if (in_entries_ && depth_ == 2) return finish(v);  // an entry that is a scalar
    if (in_entries_ && depth_ == 3) entry_[entry_key_] = std::move(v);
    return true;
  }
  bool finish(const json& e) {
    const std::size_t i = record.entries.size();
    auto entry = entry_from(e, i);
    if (!entry) {
      error = "the server's record: " + entry.error().message;
      return false;
    }
    if (!record.entries.empty() && entry->seq <= record.entries.back().seq) {
      error = "the server's record: entries[" + std::to_string(i) + "].seq does not increase";
      return false;
    }
    record.entries.push_back(std::move(*entry));
    return true;
  }

  int depth_ = 0;
  bool in_entries_ = false;
  std::string top_key_;
  std::string entry_key_;
  json entry_;
};

}  // namespace

Result<Record> parse_record(std::string_view text) {
  if (auto checked = check_bounded_json(text, 8); !checked)
    return Error{"the server's record is not JSON: " + checked.error().message};
  RecordBuilder builder;
  (void)json::sax_parse(text, &builder, json::input_format_t::json, true);
  if (!builder.error.empty()) return Error{builder.error};
  if (!builder.top_is_object || !builder.has_entries)
    return Error{"the server's record has no \"entries\" array; is this a flaky server?"};
  if (!builder.has_epoch)
    return Error{"the server's record has no epoch (a whole number from 1); is this a flaky server?"};
  return std::move(builder.record);
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
    auto res = flaky::http_get(
        server_url, std::string(flaky::path::kAdminRecord) + "?since=" + std::to_string(since) + "&limit=10000",
        timeout, headers);
    if (!res) return res.error();
    if (res->status != 200)
      return Error{server_url + std::string(flaky::path::kAdminRecord) + " answered " + std::to_string(res->status) +
                   "; is this a flaky server?"};
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

// The script's phases, in order; a request that belongs to an earlier phase than the one the
// record is in starts a new run.
enum class Phase { Start, Fast, Burst, Trials, Bad };

}  // namespace

namespace {

// Where the lab's run begins in a kept server's record: at the /count of its step 1, the first
// /count after the last pause of a second or more before the first /always500. A program's run
// makes no such pause before its trip; a person trying the server by hand, or an earlier try,
// comes before one. 0 when nothing lab-like comes before that /count.
std::size_t run_start(const Record& record, const LabSpec& spec) {
  const auto& es = record.entries;
  std::size_t first_500 = es.size();
  for (std::size_t i = 0; i < es.size(); ++i)
    if (es[i].counted && es[i].path == spec.script.fail_path) {
      first_500 = i;
      break;
    }
  std::size_t pause = 0;
  for (std::size_t i = 1; i < first_500; ++i)
    if (es[i].t_ms - es[i - 1].t_ms >= 1000.0) pause = i;
  for (std::size_t i = pause; i < first_500; ++i) {
    if (es[i].path != flaky::path::kCount) continue;
    const bool lab_before = std::any_of(es.begin(), es.begin() + static_cast<std::ptrdiff_t>(i),
                                        [](const RecordEntry& e) { return e.counted; });
    return lab_before ? i : 0;
  }
  return 0;
}

// The seq of step 4's closing /count: the second /count after the first failing call (the
// first is its "before", which ends step 3's burst). None when the run has no such /count.
std::optional<std::uint64_t> step4_end_seq(const Record& record, std::size_t start, const LabSpec& spec) {
  bool failed = false;
  int counts = 0;
  for (std::size_t i = start; i < record.entries.size(); ++i) {
    const RecordEntry& e = record.entries[i];
    if (e.counted && e.path == spec.script.fail_path) failed = true;
    if (failed && e.path == flaky::path::kCount && ++counts == 2) return e.seq;
  }
  return std::nullopt;
}

}  // namespace

LabRun analyse(const Record& record, const LabSpec& spec, bool kept) {
  LabRun run;
  const std::size_t start = kept ? run_start(record, spec) : 0;
  // The server's own endpoints, whatever the lab sends: its count, and its record and reset.
  for (std::size_t i = 0; i < record.entries.size(); ++i) {
    const RecordEntry& e = record.entries[i];
    if (i < start) {
      if (e.counted) ++run.before_run;
      continue;
    }
    if (e.path == flaky::path::kCount) {
      run.count_calls.push_back(&e);
    } else if (e.counted) {
      run.lab.push_back(&e);
    } else if (e.path.rfind(flaky::path::kAdmin, 0) == 0) {
      run.admin.push_back(&e);
    }
  }
  bool in_burst = false;
  bool burst_over = false;
  std::size_t lab_index = 0;
  for (std::size_t i = start; i < record.entries.size(); ++i) {
    const RecordEntry& e = record.entries[i];
    if (burst_over) break;
    if (e.path == spec.script.fail_path && e.counted) {
      in_burst = true;
      run.burst.push_back(&e);
      run.trip = lab_index;
    } else if (in_burst && (e.path == flaky::path::kCount || e.counted)) {
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
    // The wait is measured from where the rules open the breaker (the burst's failure that
    // reaches the rate, or its last if it has fewer): calls that leaked through OPEN after it are
    // step 4's to charge, and do not restart the cool-down. Step 5's first call is the first after
    // step 4 ended: whatever reached the server before step 4's closing /count (its "after"),
    // of any path, step 4 has charged already (s4.before_after).
    const std::size_t rule_trip =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(spec.trip_at, 1)), run.burst.size());
    const RecordEntry& opened = run.burst.empty() ? *run.lab[*run.last_500] : *run.burst[rule_trip - 1];
    std::size_t next = *run.last_500 + 1;
    if (const auto end = step4_end_seq(record, start, spec))
      while (next < run.lab.size() && run.lab[next]->seq < *end) ++next;
    if (next < run.lab.size() && (!first_bad || next < *first_bad)) {
      run.gap_after_open_ms = run.lab[next]->t_ms - (opened.t_ms + opened.duration_ms.value_or(0.0));
    }
    for (std::size_t i = next; i < run.lab.size() && (!first_bad || i < *first_bad); ++i)
      run.trials.push_back(run.lab[i]);
  }
  return run;
}

}  // namespace cb::grade

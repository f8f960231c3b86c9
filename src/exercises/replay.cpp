#include "cb/exercises/replay.h"

#include <nlohmann/json.hpp>

#include "cb/breaker/breaker.h"
#include "cb/breaker/profiles.h"
#include "cb/decimal_time.h"

namespace cb::exercises {
namespace {

using json = nlohmann::json;

// A SAX handler rather than json::parse: it sees each number's own text, so "0.1" becomes
// exactly 100000 us instead of the double nearest 0.1, and it can stop at the first element
// of the wrong shape (or at a bracket bomb) without building a tree.
class TraceReader final : public nlohmann::json_sax<json> {
 public:
  std::vector<TraceCall> calls;
  std::string error;  // set when a handler returns false

  bool null() override { return wrong("null"); }
  bool boolean(bool value) override {
    if (depth_ != 2 || field_ != 1) return wrong(value ? "true" : "false");
    calls.back().ok = value;
    ++field_;
    return true;
  }
  bool number_integer(number_integer_t value) override { return number(std::to_string(value)); }
  bool number_unsigned(number_unsigned_t value) override { return number(std::to_string(value)); }
  bool number_float(number_float_t, const string_t& text) override { return number(text); }
  bool string(string_t& value) override { return wrong("the string \"" + value.substr(0, 20) + "\""); }
  bool binary(binary_t&) override { return wrong("binary data"); }
  bool start_object(std::size_t) override { return wrong("an object"); }
  bool key(string_t&) override { return false; }
  bool end_object() override { return false; }
  bool start_array(std::size_t) override {
    if (depth_ == 0) {
      depth_ = 1;
      return true;
    }
    if (depth_ == 1) {
      depth_ = 2;
      field_ = 0;
      calls.emplace_back();
      return true;
    }
    return wrong("an array");
  }
  bool end_array() override {
    if (depth_ == 2) {
      if (field_ != 2) {
        error = "[" + std::to_string(calls.size() - 1) + "]: expected a pair [t, ok], got " + std::to_string(field_) +
                " element(s)";
        return false;
      }
      depth_ = 1;
      return true;
    }
    depth_ = 0;
    done_ = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    // nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 9: syntax
    // error while parsing ..."; the place and the reason are the useful part.
    error = ex.what();
    if (const auto at = error.find(" at line "); at != std::string::npos) error = error.substr(at + 4);
    return false;
  }

 private:
  bool number(const std::string& text) {
    if (depth_ != 2 || field_ != 0) return wrong("the number " + text);
    auto t = parse_seconds(text);
    if (!t) {
      error = place() + ": t " + t.error().message;
      return false;
    }
    if (std::chrono::abs(*t) > std::chrono::seconds{kMaxReplaySeconds}) {
      error = place() + ": t " + text + " is out of range: expected -" + std::to_string(kMaxReplaySeconds) + " to " +
              std::to_string(kMaxReplaySeconds) + " seconds";
      return false;
    }
    calls.back().t = *t;
    ++field_;
    return true;
  }
  std::string place() const {
    std::string p = "[" + std::to_string(calls.empty() ? 0 : calls.size() - 1) + "]";
    if (depth_ == 2 && field_ < 2) p += "[" + std::to_string(field_) + "]";
    return p;
  }
  bool wrong(const std::string& what) {
    if (depth_ == 0) {
      error = "the trace must be a JSON array of [t, ok] pairs, got " + what;
    } else if (depth_ == 1) {
      error = "[" + std::to_string(calls.size()) + "]: expected a pair [t, ok], got " + what;
    } else if (field_ == 0) {
      error = place() + ": t must be a number of seconds, got " + what;
    } else if (field_ == 1) {
      error = place() + ": ok must be true or false, got " + what;
    } else {
      error = place() + ": expected a pair [t, ok], got a third element " + what;
    }
    return false;
  }
  int depth_ = 0;
  int field_ = 0;
  bool done_ = false;
};

}  // namespace

Result<std::vector<TraceCall>> parse_trace(std::string_view text) {
  TraceReader reader;
  const bool ok = json::sax_parse(text.begin(), text.end(), &reader, nlohmann::detail::input_format_t::json, true);
  if (!ok) {
    if (reader.error.empty()) reader.error = "invalid JSON";
    return Error{reader.error};
  }
  return std::move(reader.calls);
}

Result<std::vector<std::string_view>> replay(int threshold, Duration cooldown, const std::vector<TraceCall>& calls) {
  if (cooldown > std::chrono::seconds{kMaxReplaySeconds})
    return Error{"--cooldown: at most " + std::to_string(kMaxReplaySeconds) + " seconds, got " +
                 format_seconds(cooldown)};
  ManualClock clock;
  auto created = CircuitBreaker::create(profiles::probe(threshold, cooldown), clock);
  if (!created) return created.error();
  CircuitBreaker& breaker = **created;
  std::vector<std::string_view> out;
  out.reserve(calls.size());
  for (const TraceCall& c : calls) {
    clock.set(TimePoint{c.t});
    const Admission a = breaker.try_acquire();
    if (!a) {
      out.emplace_back("rejected");
      continue;
    }
    (void)breaker.record(a.ticket, {c.ok ? Verdict::Success : Verdict::Failure, Duration::zero()});
    out.emplace_back(c.ok ? "ok" : "fail");
  }
  return out;
}

std::string to_json(const std::vector<std::string_view>& outcomes) {
  std::string out = "[";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    out += outcomes[i];
    out += '"';
  }
  out += ']';
  return out;
}

Result<void> check_times_in_order(const std::vector<TraceCall>& calls) {
  for (std::size_t i = 1; i < calls.size(); ++i)
    if (calls[i].t < calls[i - 1].t)
      return Error{"[" + std::to_string(i) + "][0]: t " + format_seconds(calls[i].t) +
                   " is before the call before it (t " + format_seconds(calls[i - 1].t) +
                   "); a trace's times do not go back (--unordered judges each call "
                   "at its own t, as the exercise's reference does)"};
  return {};
}

}  // namespace cb::exercises

#include "cb/flaky/record.h"
#include "cb/utc_time.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cb::flaky {

std::string_view to_string(Outcome o) noexcept {
  switch (o) {
    case Outcome::Pending: return "pending";
    case Outcome::Answered: return "answered";
    case Outcome::Reset: return "reset";
    case Outcome::Garbage: return "garbage";
    case Outcome::ClientGone: return "client-gone";
    case Outcome::HangLimit: return "hang-limit";
    case Outcome::Cut: return "cut";
  }
  return "?";
}

RequestRecord::RequestRecord(std::size_t capacity) : ring_(std::max<std::size_t>(capacity, 1)) {}

std::uint64_t RequestRecord::first_seq_locked() const noexcept {
  const std::uint64_t held = std::min<std::uint64_t>(next_seq_ - 1, ring_.size());
  return next_seq_ - held;
}

Arrival RequestRecord::arrive(std::string_view method, std::string_view path, Kind kind, std::int64_t t_us,
                              std::int64_t wall_us) {
  Entry e;
  e.t_us = t_us;
  e.wall_us = wall_us;
  e.counted = kind == Kind::Lab;
  const auto m = std::min(method.size(), e.method.size() - 1);
  std::copy_n(method.data(), m, e.method.data());
  e.path_truncated = path.size() > e.path.size();
  e.path_length = static_cast<std::uint8_t>(std::min(path.size(), e.path.size()));
  std::copy_n(path.data(), e.path_length, e.path.data());

  std::lock_guard lock(mu_);
  e.seq = next_seq_++;
  if (kind == Kind::Count) e.count_answer = static_cast<std::int64_t>(count_);
  if (kind == Kind::Lab) ++count_;
  ring_[e.seq % ring_.size()] = e;
  return {e.seq, epoch_, e.count_answer};
}

void RequestRecord::complete(const Arrival& a, Outcome outcome, int status, std::int64_t end_us) {
  std::lock_guard lock(mu_);
  if (a.epoch != epoch_) return;
  Entry& e = ring_[a.seq % ring_.size()];
  if (e.seq != a.seq) return;
  e.outcome = outcome;
  e.status = static_cast<std::uint16_t>(std::clamp(status, 0, 999));
  e.duration_us = end_us - e.t_us;
}

std::uint64_t RequestRecord::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

Page RequestRecord::read(std::uint64_t since, std::size_t limit) const {
  std::lock_guard lock(mu_);
  Page p;
  p.epoch = epoch_;
  p.count = count_;
  p.next_seq = next_seq_;
  p.first_seq = first_seq_locked();
  p.dropped = p.first_seq - 1;
  p.capacity = ring_.size();
  // A `since` at or past the newest seq reads nothing (18446744073709551615 + 1 once wrapped to
  // 0 and read the whole record).
  const bool past = since >= next_seq_ - 1;
  p.gap = !past && since + 1 < p.first_seq;
  const std::uint64_t from = past ? next_seq_ : std::max(since + 1, p.first_seq);
  for (std::uint64_t s = from; s < next_seq_ && p.entries.size() < limit; ++s)
    p.entries.push_back(ring_[s % ring_.size()]);
  p.cursor = p.entries.empty() ? std::min(since, next_seq_ - 1) : p.entries.back().seq;
  p.more = p.cursor + 1 < next_seq_;
  return p;
}

std::uint64_t RequestRecord::reset() {
  std::lock_guard lock(mu_);
  next_seq_ = 1;
  count_ = 0;
  return ++epoch_;
}

namespace {

double ms(std::int64_t us) { return static_cast<double>(us) / 1000.0; }

}  // namespace

std::string to_json(const Page& page) {
  nlohmann::json entries = nlohmann::json::array();
  for (const Entry& e : page.entries) {
    nlohmann::json j{
        {"seq", e.seq},
        {"t_ms", ms(e.t_us)},
        {"wall", format_utc(e.wall_us, 6)},
        {"method", std::string(e.method_view())},
        {"path", std::string(e.path_view())},
        {"status", e.status == 0 ? nlohmann::json(nullptr) : nlohmann::json(e.status)},
        {"outcome", std::string(to_string(e.outcome))},
        {"duration_ms", e.duration_us < 0 ? nlohmann::json(nullptr) : nlohmann::json(ms(e.duration_us))},
        {"counted", e.counted},
    };
    if (e.count_answer >= 0) j["count"] = e.count_answer;
    if (e.path_truncated) j["path_truncated"] = true;
    entries.push_back(std::move(j));
  }
  const nlohmann::json out{
      {"epoch", page.epoch},           {"count", page.count},     {"next_seq", page.next_seq},
      {"first_seq", page.first_seq},   {"dropped", page.dropped}, {"gap", page.gap},
      {"cursor", page.cursor},         {"more", page.more},       {"capacity", page.capacity},
      {"entries", std::move(entries)},
  };
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cb::flaky

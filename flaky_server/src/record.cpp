#include "cb/flaky/record.h"
#include "cb/utc_time.h"

#include <algorithm>
#include <charconv>

#include "cb/utf8_text.h"

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

Arrival RequestRecord::arrive(std::string_view method, std::string_view path, Kind kind,
                              const std::function<std::int64_t()>& mono_us, std::int64_t wall_us) {
  Entry e;
  e.wall_us = wall_us;
  e.counted = kind == Kind::Lab;
  const auto m = std::min(method.size(), e.method.size() - 1);
  std::copy_n(method.data(), m, e.method.data());
  e.path_truncated = path.size() > e.path.size();
  e.path_length = static_cast<std::uint8_t>(std::min(path.size(), e.path.size()));
  std::copy_n(path.data(), e.path_length, e.path.data());

  std::lock_guard lock(mu_);
  e.t_us = mono_us();
  e.seq = next_seq_++;
  if (kind == Kind::Count) e.count_answer = static_cast<std::int64_t>(count_);
  if (kind == Kind::Lab) ++count_;
  ring_[e.seq % ring_.size()] = e;
  return {e.seq, epoch_, e.count_answer, e.t_us};
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

// The record is written straight to text, not through a JSON tree: a tree of 10,000 entries
// took some 90 ms and 40 MB to build and dump, the loop serving it waits meanwhile, and every
// reader at once holds one.
void put_string(std::string& out, std::string_view s) {
  out += '"';
  while (!s.empty()) {
    const std::size_t bad = invalid_utf8_at(s);
    const std::string_view good = s.substr(0, bad);
    for (const char c : good) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[u >> 4];
        out += kHex[u & 0xf];
      } else {
        out += c;
      }
    }
    if (bad == std::string_view::npos) break;
    out += "\xef\xbf\xbd";  // U+FFFD for the byte that is not UTF-8
    s.remove_prefix(bad + 1);
  }
  out += '"';
}

void put_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void put_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// Microseconds as milliseconds, exactly: "12.345", "3000.0" (a number with a point, as before).
void put_ms(std::string& out, std::int64_t us) {
  if (us < 0) {
    out += '-';
    us = -us;
  }
  put_int(out, us / 1000);
  out += '.';
  const auto frac = static_cast<int>(us % 1000);
  if (frac == 0) {
    out += '0';
    return;
  }
  char digits[4] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                    static_cast<char>('0' + frac % 10), 0};
  std::string_view d(digits, 3);
  while (d.back() == '0') d.remove_suffix(1);
  out += d;
}

// One JSON object's members, written in order, with the commas between them.
class Members {
 public:
  explicit Members(std::string& out) : out_(out) { out_ += '{'; }
  ~Members() { out_ += '}'; }
  Members(const Members&) = delete;
  Members& operator=(const Members&) = delete;

  std::string& key(std::string_view k) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += k;
    out_ += "\":";
    return out_;
  }
  void whole(std::string_view k, std::uint64_t v) { put_uint(key(k), v); }
  void signed_whole(std::string_view k, std::int64_t v) { put_int(key(k), v); }
  void flag(std::string_view k, bool v) { key(k) += v ? "true" : "false"; }
  void text(std::string_view k, std::string_view v) { put_string(key(k), v); }
  // Microseconds as milliseconds, or null when negative (not known yet).
  void ms_or_null(std::string_view k, std::int64_t us) {
    if (us < 0) {
      key(k) += "null";
    } else {
      put_ms(key(k), us);
    }
  }

 private:
  std::string& out_;
  bool first_ = true;
};

void put_entry(std::string& out, const Entry& e) {
  Members m(out);
  m.whole("seq", e.seq);
  put_ms(m.key("t_ms"), e.t_us);
  m.text("wall", format_utc(e.wall_us, 6));
  m.text("method", e.method_view());
  m.text("path", e.path_view());
  if (e.status == 0) {
    m.key("status") += "null";
  } else {
    m.whole("status", e.status);
  }
  m.text("outcome", to_string(e.outcome));
  m.ms_or_null("duration_ms", e.duration_us);
  m.flag("counted", e.counted);
  if (e.count_answer >= 0) m.signed_whole("count", e.count_answer);
  if (e.path_truncated) m.flag("path_truncated", true);
}

}  // namespace

std::string to_json(const Page& page) {
  std::string out;
  out.reserve(256 + page.entries.size() * 220);
  {
    Members m(out);
    m.whole("capacity", page.capacity);
    m.whole("count", page.count);
    m.whole("cursor", page.cursor);
    m.whole("dropped", page.dropped);
    m.whole("epoch", page.epoch);
    m.whole("first_seq", page.first_seq);
    m.flag("gap", page.gap);
    m.flag("more", page.more);
    m.whole("next_seq", page.next_seq);
    std::string& entries = m.key("entries");
    entries += '[';
    for (std::size_t i = 0; i < page.entries.size(); ++i) {
      if (i > 0) entries += ',';
      put_entry(entries, page.entries[i]);
    }
    entries += ']';
  }
  return out;
}

}  // namespace cb::flaky

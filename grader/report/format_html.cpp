// --format html: one self-contained page (inline SVG and CSS, no script, nothing fetched) with the
// run on one time axis above the checklist. Everything coloured is also labelled: rows are named,
// states carry their names and patterns, verdicts are words, so it reads in grey on paper.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "cb/html_page.h"
#include "cb/grade/format_common.h"
#include "cb/flaky/endpoints.h"

namespace cb::grade {
namespace {

std::string esc(std::string_view s) { return html_escape(s); }

std::string num(double v, int decimals = 1) { return html_number(v, decimals); }

// "+1.25 s", "+3.062 s", "+2 min 05 s": offsets from the start of the axis, to `decimals`.
std::string offset_text(double seconds, int decimals = 2) {
  char buf[48];
  if (seconds < 60)
    std::snprintf(buf, sizeof buf, "+%.*f s", decimals, seconds);
  else
    std::snprintf(buf, sizeof buf, "+%d min %02d s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return buf;
}

std::string span_text(double seconds) {
  char buf[48];
  if (seconds < 120)
    std::snprintf(buf, sizeof buf, "%.*f s", seconds < 10 ? 2 : 1, seconds);
  else
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return buf;
}

const char* verdict(Status s) {
  switch (s) {
    case Status::Pass: return "PASS";
    case Status::Fail: return "FAIL";
    case Status::Error: return "ERROR";
    case Status::Skip: return "SKIP";
  }
  return "?";
}

// The time axis. A lab run is bursts of calls a millisecond apart with idle stretches between
// (the 3 s cool-down, a slow student's pauses): drawn to one linear scale, each burst would be a
// single line. So the axis is cut: every idle stretch longer than a fiftieth of the run (at least
// 250 ms, at most 5 s) becomes a fixed-width gap labelled with its length, and the bursts share the rest of the
// width at one common scale. A run without long pauses stays linear; a 10-minute run with pauses
// keeps its bursts readable.
class Axis {
 public:
  // A gap is 64 px wide, less when there are many: together they take at most half the width.
  static constexpr double kGapWidth = 64;

  Axis(std::vector<std::int64_t> times, double x0, double x1) {
    std::sort(times.begin(), times.end());
    if (times.empty()) times.push_back(0);
    const std::int64_t span = times.back() - times.front();
    const std::int64_t idle = std::clamp<std::int64_t>(span / 50, 250'000, 5'000'000);
    std::vector<Segment> segs{{times.front(), times.front(), false}};
    for (std::size_t i = 1; i < times.size(); ++i) {
      if (times[i] - times[i - 1] > idle) {
        segs.push_back({times[i - 1], times[i], true});
        segs.push_back({times[i], times[i], false});
      } else {
        segs.back().to = times[i];
      }
    }
    std::int64_t active = 0;
    for (const Segment& sg : segs)
      if (!sg.gap) active += sg.to - sg.from;
    // A burst that is one instant still gets some width.
    const std::int64_t least = std::max<std::int64_t>(1000, active / 100);
    active = 0;
    int gaps = 0;
    for (const Segment& sg : segs) {
      if (sg.gap)
        ++gaps;
      else
        active += std::max(least, sg.to - sg.from);
    }
    const double gap_width = gaps == 0 ? 0 : std::min(kGapWidth, (x1 - x0) / 2 / gaps);
    const double per_us = (x1 - x0 - gap_width * gaps) / static_cast<double>(std::max<std::int64_t>(active, 1));
    double x = x0;
    for (Segment sg : segs) {
      sg.x = x;
      sg.width = sg.gap ? gap_width : per_us * static_cast<double>(std::max(least, sg.to - sg.from));
      x += sg.width;
      segs_.push_back(sg);
    }
    per_us_ = per_us;
  }

  struct Segment {
    std::int64_t from;
    std::int64_t to;
    bool gap;
    double x = 0;
    double width = 0;
  };

  [[nodiscard]] double x(std::int64_t t) const {
    for (const Segment& sg : segs_) {
      if (t > sg.to) continue;
      if (t <= sg.from) return sg.x;
      if (sg.gap) return sg.x + sg.width * static_cast<double>(t - sg.from) / static_cast<double>(sg.to - sg.from);
      return sg.x + per_us_ * static_cast<double>(t - sg.from);
    }
    return segs_.back().x + segs_.back().width;
  }
  [[nodiscard]] std::int64_t start() const { return segs_.front().from; }
  [[nodiscard]] std::int64_t end() const { return segs_.back().to; }
  [[nodiscard]] double ms(std::int64_t t) const { return static_cast<double>(t - start()) / 1000.0; }
  [[nodiscard]] const std::vector<Segment>& segments() const { return segs_; }
  [[nodiscard]] double per_us() const { return per_us_; }

 private:
  double per_us_ = 1;
  std::vector<Segment> segs_;
};

struct Row {
  const char* cls;
  const char* label;
  double y;
};
constexpr double kLeft = 150;
constexpr double kRight = 1080;
constexpr double kWidth = 1100;
constexpr Row kRows[] = {{"q2", "answered 2xx/3xx", 96},
                         {"q5", "answered 5xx", 118},
                         {"q4", "answered 4xx", 140},
                         {"qc", flaky::path::kCount.data(), 162},
                         {"qn", "no answer", 184}};
constexpr double kRowHeight = 18;
constexpr double kRefusedY = 206;
constexpr double kBracketY = 236;
constexpr double kAxisY = 262;
constexpr double kHeight = 300;

const Row& row_of(const TimelineRequest& r) {
  if (r.path == flaky::path::kCount) return kRows[3];
  if (!r.status) return kRows[4];
  if (*r.status >= 500) return kRows[1];
  if (*r.status >= 400) return kRows[2];
  return kRows[0];
}

std::string css() {
  return R"(.rowlabel{font-size:11px;fill:#333}.band{stroke:#555;stroke-width:.5}.band-CLOSED{fill:#d9f0d9}
.band-OPEN{fill:url(#hatch)}.band-HALF_OPEN{fill:url(#dots)}.bandlabel{font-size:11px;font-weight:600}
.q2{fill:#2e7d32}.q5{fill:#c62828}.q4{fill:#1565c0}.qc{fill:#757575}.qn{fill:#000}
.refused{stroke:#b71c1c;stroke-width:1.5;fill:none}.bracket{stroke:#333;fill:none;stroke-width:1.2}
.stepline{stroke:#999;stroke-dasharray:3 3}.leader{stroke:#999;fill:none}.steplabel{font-weight:600}.steplabel.fail{fill:#b71c1c}
.steplabel.pass{fill:#1b5e20}.steplabel.error{fill:#6a1b9a}.steplabel.skip{fill:#8d6e00}.axis{stroke:#333}
.gap{fill:#f3f3f3;stroke:#888;stroke-dasharray:2 2}.gaplabel{font-size:10px;fill:#444}.tick{stroke:#333}
.notes li{margin:4px 0}.checks{list-style:none;padding-left:0}.checks li{margin:2px 0}.tag{font-family:monospace;color:#555}
.st{display:inline-block;min-width:3.2em;font-family:monospace;font-weight:600}.st-pass{color:#1b5e20}.st-fail{color:#b71c1c}
.st-skip{color:#8d6e00}.st-error{color:#6a1b9a}.msg{color:#333;margin-left:3.6em})";
}

std::string defs() {
  return R"svg(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)svg"
         R"svg(<rect width="6" height="6" fill="#f6cfcb"/><line x1="0" y1="0" x2="0" y2="6" stroke="#b71c1c" stroke-width="1.5"/></pattern>)svg"
         R"svg(<pattern id="dots" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#fdebbd"/>)svg"
         R"svg(<circle cx="3" cy="3" r="1.1" fill="#8d6e00"/></pattern></defs>)svg";
}

struct Picture {
  std::string svg;
  std::vector<std::string> notes;  // numbered under the picture: failing checks, where they happened
  std::string caption;
};

// The rows' labels, and under everything else the idle stretches the axis is cut at.
void draw_rows(std::string& s, const Axis& axis, const Timeline& tl) {
  s += "<text class=\"rowlabel\" x=\"8\" y=\"" + num(68, 0) + "\">breaker state</text>";
  for (const Row& row : kRows)
    s += "<text class=\"rowlabel\" x=\"8\" y=\"" + num(row.y + 13, 0) + "\">" + row.label + "</text>";
  if (!tl.refused_us.empty() || !tl.refused_groups.empty())
    s += "<text class=\"rowlabel\" x=\"8\" y=\"" + num(kRefusedY + 13, 0) + "\">refused (not sent)</text>";

  // The idle stretches the axis is cut at, under everything else.
  for (const Axis::Segment& sg : axis.segments()) {
    if (!sg.gap) continue;
    const double idle = static_cast<double>(sg.to - sg.from) / 1e6;
    const double inset = std::min(4.0, sg.width / 4);
    s += "<rect class=\"gap\" data-idle-ms=\"" + num(idle * 1000, 3) + "\" x=\"" + num(sg.x + inset) +
         "\" y=\"90\" width=\"" + num(sg.width - 2 * inset) + "\" height=\"" + num(kRefusedY + 18 - 90, 0) +
         "\"><title>nothing happened for " + span_text(idle) + " (drawn shorter)</title></rect>";
    if (sg.width >= 40)  // narrower ones say it on hover
      s += "<text class=\"gaplabel\" x=\"" + num(sg.x + sg.width / 2) + "\" y=\"" + num(kRows[2].y + 4, 0) +
           "\" text-anchor=\"middle\">" + span_text(idle) + "</text><text class=\"gaplabel\" x=\"" +
           num(sg.x + sg.width / 2) + "\" y=\"" + num(kRows[2].y + 16, 0) + "\" text-anchor=\"middle\">idle</text>";
  }
}

// The breaker's states, from transitions.log's stamps.
void draw_states(std::string& s, const Axis& axis, const Timeline& tl, bool stamped) {
  if (stamped) {
    std::int64_t from = axis.start();
    std::string state = tl.transitions.front().from;
    auto band = [&](std::int64_t to) {
      const double x = axis.x(from);
      const double w = std::max(0.5, axis.x(to) - x);
      s += "<rect class=\"band band-" + esc(state) + "\" data-state=\"" + esc(state) + "\" data-from-ms=\"" +
           num(axis.ms(from), 3) + "\" data-to-ms=\"" + num(axis.ms(to), 3) + "\" x=\"" + num(x) +
           "\" y=\"52\" width=\"" + num(w) + "\" height=\"26\"><title>" + esc(state) + " from " +
           offset_text(axis.ms(from) / 1000) + " to " + offset_text(axis.ms(to) / 1000) + " (" +
           span_text(static_cast<double>(to - from) / 1e6) + ")</title></rect>";
      if (w > 8.0 * static_cast<double>(state.size()))
        s += "<text class=\"bandlabel\" x=\"" + num(x + 4) + "\" y=\"69\">" + esc(state) + "</text>";
    };
    for (const TimelineTransition& t : tl.transitions) {
      band(*t.at_us);
      from = *t.at_us;
      state = t.to;
    }
    band(axis.end());
  } else {
    s += "<text class=\"rowlabel\" x=\"" + num(kLeft) + "\" y=\"69\">" +
         (tl.transitions.empty() ? "no " + tl.log_file + " to draw the states from"
                                 : tl.log_file + " has lines without a time stamp: the states cannot be placed") +
         "</text>";
  }
}

// Every request the server saw, in its row. Requests of one row and status that fall in the same
// pixel column are one mark listing all their sequence numbers: a 10-minute record of 10,000
// requests is about 11 per column, which no eye can tell apart, and 10,000 separate rects made
// Chromium take over a second to lay the page out; ~1,000 marks take a fraction of that.
void draw_requests(std::string& s, const Axis& axis, const Timeline& tl) {
  struct Mark {
    const TimelineRequest* first;
    const TimelineRequest* last;
    std::vector<std::uint64_t> seqs;
    std::vector<std::string> paths;
    double x0;
    double x1;
  };
  std::vector<Mark> drawn;
  std::map<std::tuple<const Row*, std::optional<int>, long>, std::size_t> mark_at;
  for (const TimelineRequest& q : tl.requests) {
    const Row& row = row_of(q);
    const double x = axis.x(q.at_us);
    const double x1 = x + std::max(1.5, axis.x(q.at_us + static_cast<std::int64_t>(q.duration_ms * 1000)) - x);
    auto [it, fresh] = mark_at.try_emplace({&row, q.status, std::lround(std::floor(x))}, drawn.size());
    if (fresh) drawn.push_back({&q, &q, {}, {}, x, x1});
    Mark& m = drawn[it->second];
    m.last = &q;
    m.seqs.push_back(q.seq);
    if (std::find(m.paths.begin(), m.paths.end(), q.path) == m.paths.end()) m.paths.push_back(q.path);
    m.x0 = std::min(m.x0, x);
    m.x1 = std::max(m.x1, x1);
  }
  for (const Mark& m : drawn) {
    const TimelineRequest& q = *m.first;
    const Row& row = row_of(q);
    const std::string status = q.status ? std::to_string(*q.status) : "none";
    std::string seqs;
    std::string paths;
    for (std::uint64_t n : m.seqs) seqs += (seqs.empty() ? "" : " ") + std::to_string(n);
    for (const std::string& p : m.paths) paths += (paths.empty() ? "" : ", ") + esc(p);
    const std::string what = paths + ": " + (q.status ? status : "no answer");
    const std::string step = q.step > 0 ? ", step " + std::to_string(q.step) : "";
    const std::string title =
        m.seqs.size() == 1
            ? "#" + seqs + " " + what + " at " + offset_text(axis.ms(q.at_us) / 1000) + step
            : std::to_string(m.seqs.size()) + " requests, #" + std::to_string(m.seqs.front()) + " to #" +
                  std::to_string(m.seqs.back()) + ", " + what + ", " + offset_text(axis.ms(q.at_us) / 1000) + " to " +
                  offset_text(axis.ms(m.last->at_us) / 1000) + (m.last->step == q.step ? step : "");
    s += "<rect class=\"q " + std::string(row.cls) + "\" data-seq=\"" + seqs + "\" data-status=\"" + status +
         "\" x=\"" + num(m.x0) + "\" y=\"" + num(row.y, 0) + "\" width=\"" + num(m.x1 - m.x0) + "\" height=\"" +
         num(kRowHeight, 0) + "\"><title>" + title + "</title></rect>";
  }
  // Refusals a few microseconds apart would draw as one cross: each is its own mark (the hook
  // counts them), and a run of them is labelled with how many.
  for (std::size_t i = 0; i < tl.refused_us.size();) {
    std::size_t j = i;
    while (j + 1 < tl.refused_us.size() && axis.x(tl.refused_us[j + 1]) - axis.x(tl.refused_us[i]) < 8) ++j;
    for (std::size_t k = i; k <= j; ++k) {
      const double x = axis.x(tl.refused_us[k]);
      s += "<path class=\"refused\" data-refused-ms=\"" + num(axis.ms(tl.refused_us[k]), 3) + "\" d=\"M" + num(x - 4) +
           " " + num(kRefusedY + 5, 0) + "l8 8m0 -8l-8 8\"><title>refused at " +
           offset_text(axis.ms(tl.refused_us[k]) / 1000, 4) + ": it never reached the server</title></path>";
    }
    if (j > i)
      s += "<text x=\"" + num(axis.x(tl.refused_us[i]) + 7) + "\" y=\"" + num(kRefusedY + 13, 0) + "\">x" +
           std::to_string(j - i + 1) + "</text>";
    i = j + 1;
  }
  // Refusals known by count alone: one cross between the requests that bound them, with how many.
  for (const Timeline::RefusedGroup& g : tl.refused_groups) {
    const double x = (axis.x(g.from_us) + axis.x(g.to_us)) / 2;
    s += "<g class=\"refused-group\" data-count=\"" + std::to_string(g.count) + "\"><path class=\"refused\" d=\"M" +
         num(x - 4) + " " + num(kRefusedY + 5, 0) + "l8 8m0 -8l-8 8\"/><text x=\"" + num(x + 7) + "\" y=\"" +
         num(kRefusedY + 13, 0) + "\">x" + std::to_string(g.count) + "</text><title>" + std::to_string(g.count) +
         " call(s) refused here, never sent to the server (" + esc(g.source) +
         "): the record cannot say when each was</title></g>";
  }
}

// The cool-down: from the trip to the first trial, by the breaker's stamps where it has them,
// else by the record (the burst's last answer to the first trial's arrival).
void draw_cooldown(std::string& s, const Axis& axis, const Timeline& tl, bool stamped) {
  std::optional<std::int64_t> opened;
  std::optional<std::int64_t> trial;
  if (stamped) {
    for (std::size_t i = 0; i < tl.transitions.size(); ++i) {
      if (tl.transitions[i].to != "OPEN" || tl.transitions[i].from != "CLOSED") continue;
      opened = tl.transitions[i].at_us;
      if (i + 1 < tl.transitions.size() && tl.transitions[i + 1].to == "HALF_OPEN") trial = tl.transitions[i + 1].at_us;
      break;
    }
  }
  if (!opened || !trial) {
    const TimelineRequest* last_burst = nullptr;
    const TimelineRequest* first_trial = nullptr;
    for (const TimelineRequest& q : tl.requests) {
      if (q.step == step(StepRole::Trip)) last_burst = &q;
      if (q.step == step(StepRole::Cooldown) && first_trial == nullptr) first_trial = &q;
    }
    if (last_burst != nullptr && first_trial != nullptr) {
      opened = last_burst->at_us + static_cast<std::int64_t>(last_burst->duration_ms * 1000);
      trial = first_trial->at_us;
    }
  }
  if (opened && trial && *trial > *opened) {
    const double a = axis.x(*opened);
    const double b = axis.x(*trial);
    const double waited = static_cast<double>(*trial - *opened) / 1e6;
    s += "<path class=\"bracket\" data-cooldown-ms=\"" + num(waited * 1000, 3) + "\" d=\"M" + num(a) + " " +
         num(kBracketY - 6, 0) + "v6H" + num(b) + "v-6\"/><text x=\"" + num((a + b) / 2) + "\" y=\"" +
         num(kBracketY + 14, 0) + "\" text-anchor=\"middle\">cool-down " + span_text(waited) +
         " (the setting: " + span_text(tl.wait_ms / 1000) + ")</text>";
  }
}

// The trials: from the first (HALF_OPEN) to the breaker's next decision, with how many calls
// the server saw in between; a breaker that decides on one lucky call shows it here.
void draw_trials(std::string& s, const Axis& axis, const Timeline& tl, bool stamped) {
  if (stamped) {
    for (std::size_t i = 0; i + 1 < tl.transitions.size(); ++i) {
      if (tl.transitions[i].to != "HALF_OPEN") continue;
      const std::int64_t a_us = *tl.transitions[i].at_us;
      // A stamp in whole milliseconds is truncated: the decision came up to one unit after it.
      const std::int64_t b_us = *tl.transitions[i + 1].at_us + tl.transitions[i + 1].resolution_us;
      long trials = 0;
      for (const TimelineRequest& q : tl.requests)
        if (q.path != flaky::path::kCount && q.at_us + 2000 >= a_us && q.at_us <= b_us) ++trials;
      // A close is counted as step 6's check places it, so the page and the checklist agree.
      std::string count = std::to_string(trials);
      if (tl.transitions[i + 1].to == "CLOSED" && tl.trials_closed_after) {
        trials = static_cast<long>(*tl.trials_closed_after);
        count = std::to_string(trials);
        if (tl.trials_closed_at_most && *tl.trials_closed_at_most > *tl.trials_closed_after)
          count += " (or " + std::to_string(*tl.trials_closed_at_most) + ")";
      }
      const double a = axis.x(a_us);
      const double b = std::max(a + 2, axis.x(b_us));
      s += "<path class=\"bracket\" data-trials=\"" + std::to_string(trials) + "\" d=\"M" + num(a) + " " +
           num(kBracketY - 6, 0) + "v6H" + num(b) + "v-6\"/><text x=\"" + num(b + 4) + "\" y=\"" +
           num(kBracketY + 2, 0) + "\">" + count + " trial(s), then " + esc(tl.transitions[i + 1].to) + "</text>";
      break;
    }
  }
}

// The axis, its ticks, and the squeezed idle stretches.
void draw_axis(std::string& s, const Axis& axis) {
  s += "<line class=\"axis\" x1=\"" + num(kLeft) + "\" y1=\"" + num(kAxisY, 0) + "\" x2=\"" + num(kRight) + "\" y2=\"" +
       num(kAxisY, 0) + "\"/>";
  // Ticks: each burst's start, labelled with its offset, and inside a long burst ticks at a
  // round interval at least 90 px apart; each gap says how long it was.
  double step_us = 1000;
  for (double candidate :
       {1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 3e7, 6e7, 1.2e8, 3e8, 6e8}) {
    step_us = candidate;
    if (candidate * axis.per_us() >= 90) break;
  }
  const int decimals = step_us < 1e4 ? 3 : step_us < 1e5 ? 2 : 1;
  double last_label = -1e9;
  auto tick = [&](std::int64_t t, bool label) {
    const double x = axis.x(t);
    s += "<line class=\"tick\" x1=\"" + num(x) + "\" y1=\"" + num(kAxisY, 0) + "\" x2=\"" + num(x) + "\" y2=\"" +
         num(kAxisY + 5, 0) + "\"/>";
    if (!label || x - last_label < 70) return;
    last_label = x;
    s += "<text x=\"" + num(x) + "\" y=\"" + num(kAxisY + 18, 0) + "\" text-anchor=\"middle\">" +
         offset_text(static_cast<double>(t - axis.start()) / 1e6, decimals) + "</text>";
  };
  for (const Axis::Segment& sg : axis.segments()) {
    if (sg.gap) continue;
    tick(sg.from, true);
    const auto step = static_cast<std::int64_t>(step_us);
    for (std::int64_t t = (sg.from / step + 1) * step; t < sg.to; t += step) tick(t, true);
  }
}

// The steps: where each began, its verdict, and a numbered note for each failing check.
void draw_steps(std::string& s, const Axis& axis, const Report& r, std::vector<std::string>& notes) {
  const Timeline& tl = r.timeline;
  std::map<int, std::pair<std::int64_t, std::int64_t>> extent;
  for (const TimelineRequest& q : tl.requests) {
    if (q.step == 0) continue;
    auto [it, fresh] = extent.try_emplace(q.step, q.at_us, q.at_us);
    if (!fresh) it->second.second = q.at_us;
  }
  int note = 0;
  // Where each step is drawn, and its label: a step with nothing in the record (8:
  // transitions.log; every step a program never reached) at the end of the axis.
  std::vector<double> xs;
  std::vector<std::string> texts;
  for (const StepReport& st : r.steps) {
    const auto e = extent.find(st.step);
    xs.push_back(e != extent.end() ? axis.x(e->second.first) : st.step == step(StepRole::Server) ? kLeft : kRight);
    std::string marks;
    for (const Check& c : st.checks) {
      if (c.status != Status::Fail && c.status != Status::Error) continue;
      notes.push_back("Step " + std::to_string(st.step) + ", " + c.id + ": " + c.name +
                      (c.message.empty() ? "" : ". " + c.message));
      marks += " [" + std::to_string(++note) + "]";
    }
    texts.push_back(std::to_string(st.step) + " " + verdict(st.status) + marks);
  }
  std::vector<double> row_end(3, -1e9);
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepReport& st = r.steps[i];
    const double x = xs[i];
    const std::string cls = to_string(st.status);
    // Steps drawn on one line (those a program never reached, all at the end) share one label:
    // stacked one by one they ran off the picture's edge.
    if (i > 0 && xs[i - 1] == x) {
      s += "<g class=\"step\" data-step=\"" + std::to_string(st.step) + "\" data-status=\"" + cls + "\"></g>";
      continue;
    }
    std::string text = texts[i];
    for (std::size_t j = i + 1; j < r.steps.size() && xs[j] == x; ++j) text += " · " + texts[j];
    // Labels in three rows, each beside its own line: right of it in the first row where it does
    // not run into the last label there, else left of it where that is free. Only when neither
    // is free anywhere does it start further right, and then a leader joins it to its line: a
    // label that merely sat by the next step's line was read as that step's ("6 FAIL" by step 7).
    const double width = 7.5 * static_cast<double>(text.size());  // bold 11px, generously
    const bool near_end = x + width > kRight + 15;  // labelled to the left of its line, not off the picture
    const double right = near_end ? x - 2 - width : x + 2;
    const double left = x - 2 - width;
    double lx = right;
    std::size_t row = 0;
    while (row < row_end.size() && right < row_end[row] + 4) ++row;
    if (row == row_end.size() && left >= kLeft) {
      row = 0;
      while (row < row_end.size() && left < row_end[row] + 4) ++row;
      lx = left;
    }
    bool leader = false;
    if (row == row_end.size()) {
      row = static_cast<std::size_t>(std::min_element(row_end.begin(), row_end.end()) - row_end.begin());
      lx = std::min(row_end[row] + 4, kWidth - 4 - width);  // never past the picture's edge
      leader = true;
    }
    row_end[row] = std::max(row_end[row], lx + width);
    const double y = 14 + 13.0 * static_cast<double>(row);
    // Left of its line, a label ends at the line (the width is a generous guess).
    const bool ends_at_line = !leader && lx == left;
    s += "<g class=\"step\" data-step=\"" + std::to_string(st.step) + "\" data-status=\"" + cls +
         "\"><line class=\"stepline\" x1=\"" + num(x) + "\" y1=\"" + num(y + 3, 0) + "\" x2=\"" + num(x) + "\" y2=\"" +
         num(kAxisY, 0) + "\"/>" +
         (leader ? "<path class=\"leader\" d=\"M" + num(x) + " " + num(y + 3, 0) + "H" + num(lx) + "\"/>" : "") +
         "<text class=\"steplabel " + cls + "\" x=\"" + num(ends_at_line ? x - 2 : lx) + "\" y=\"" + num(y, 0) + "\"" +
         (ends_at_line ? " text-anchor=\"end\"" : "") + ">" + text + "</text></g>";
  }
}

Picture picture(const Report& r) {
  const Timeline& tl = r.timeline;
  std::vector<std::int64_t> times;
  for (const TimelineRequest& q : tl.requests) {
    times.push_back(q.at_us);
    times.push_back(q.at_us + static_cast<std::int64_t>(q.duration_ms * 1000));
  }
  const bool stamped = !tl.transitions.empty() && std::all_of(tl.transitions.begin(), tl.transitions.end(),
                                                              [](const TimelineTransition& t) { return t.at_us; });
  if (stamped)
    for (const TimelineTransition& t : tl.transitions) times.push_back(*t.at_us);
  times.insert(times.end(), tl.refused_us.begin(), tl.refused_us.end());
  Picture out;
  if (times.empty()) {
    out.caption = "Nothing to draw: no server record and no stamped " + tl.log_file + ".";
    return out;
  }
  const Axis axis(times, kLeft, kRight);
  std::string s =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + num(kWidth, 0) + " " + num(kHeight, 0) +
      "\" role=\"img\" aria-labelledby=\"pic-title\"><title id=\"pic-title\">The run on one time axis: the breaker's "
      "states, every request the server saw, and the steps</title>" +
      defs();

  draw_rows(s, axis, tl);
  draw_states(s, axis, tl, stamped);
  draw_requests(s, axis, tl);
  draw_cooldown(s, axis, tl, stamped);
  draw_trials(s, axis, tl, stamped);
  draw_axis(s, axis);
  draw_steps(s, axis, r, out.notes);
  s += "</svg>";
  out.svg = std::move(s);
  const double total = static_cast<double>(axis.end() - axis.start()) / 1e6;
  const auto gaps =
      std::count_if(axis.segments().begin(), axis.segments().end(), [](const Axis::Segment& g) { return g.gap; });
  out.caption =
      std::to_string(tl.requests.size()) + " request(s) the server saw over " + span_text(total) +
      (gaps == 0 ? ", to scale."
                 : ". The axis is cut at " + std::to_string(gaps) +
                       " idle stretch(es), each drawn short and labelled with its length; the "
                       "bursts between share one scale.") +
      (!tl.refused_us.empty() ? " Refused calls are the lab's own count: a refusal never reaches the server."
       : !tl.refused_groups.empty()
           ? " Refused calls are drawn where the record and the files place them, by count: a refusal never "
             "reaches the server, so the record cannot say when each was."
           : "") +
      (stamped && tl.transitions.front().resolution_us >= 1000
           ? " " + tl.log_file + "'s stamps are in whole milliseconds, so a state may seem to change up to 1 ms early."
           : "") +
      " Hover a mark for its details.";
  return out;
}

std::string legend(const Report& r) {
  std::string out = "<ul class=\"legend\">";
  auto item = [&](const std::string& style, const std::string& text) {
    out += "<li><span class=\"sw\" style=\"" + style + "\"></span>" + text + "</li>";
  };
  item("background:#d9f0d9", "CLOSED");
  item("background:repeating-linear-gradient(45deg,#b71c1c 0 2px,#f6cfcb 2px 6px)", "OPEN (hatched)");
  item("background:radial-gradient(#8d6e00 1px,#fdebbd 1.5px) 0 0/6px 6px", "HALF_OPEN (dotted)");
  item("background:#2e7d32", "2xx/3xx");
  item("background:#c62828", "5xx");
  item("background:#1565c0", "4xx");
  item("background:#757575", std::string(flaky::path::kCount));
  item("background:#000", "no answer");
  if (!r.timeline.refused_us.empty() || !r.timeline.refused_groups.empty())
    item("border-color:#b71c1c;background:#fff", "× refused");
  return out + "</ul>";
}

std::string checklist(const Report& r) {
  std::string out;
  for (const StepReport& st : r.steps) {
    const std::string cls = to_string(st.status);
    out += "<h3 class=\"step-head\" data-step=\"" + std::to_string(st.step) + "\">Step " + std::to_string(st.step) +
           ": " + esc(st.title) + " <span class=\"verdict-" + cls + "\">" + verdict(st.status) + "</span> " +
           points(st.score) + "/" + points(st.max_score) + "</h3><ul class=\"checks\">";
    for (const Check& c : st.checks) {
      const std::string cs = to_string(c.status);
      out += "<li data-check=\"" + esc(c.id) + "\" data-status=\"" + cs + "\"><span class=\"st st-" + cs + "\">" +
             (c.status == Status::Pass    ? "ok"
              : c.status == Status::Fail  ? "FAIL"
              : c.status == Status::Error ? "ERR"
                                          : "skip") +
             "</span>" + esc(c.name) + " <span class=\"tag\">[" + esc(c.id) + "]</span>";
      if (!c.message.empty()) out += "<div class=\"msg\">" + esc(c.message) + "</div>";  // a pass only notes a doubt
      if (c.status == Status::Fail && !c.expected.is_null())
        out += "<div class=\"msg\">expected " + esc(shown(c.expected)) + ", got " + esc(shown(c.actual)) + "</div>";
      out += "</li>";
    }
    out += "</ul>";
  }
  return out;
}

}  // namespace

std::string render_html(const Report& r) {
  const std::string score = points(r.score) + "/" + points(r.max_score);
  // Whose it is, as a person names it: the student, or the folder (not the path it was graded at).
  std::string folder = r.dir;
  while (folder.size() > 1 && (folder.back() == '/' || folder.ends_with("/."))) folder.pop_back();
  if (const auto slash = folder.rfind('/'); slash != std::string::npos && slash + 1 < folder.size())
    folder = folder.substr(slash + 1);
  const std::string name = r.dir.empty() && r.conformance ? "conformance of " + r.conformance->traces.command
                           : r.student.empty()            ? folder
                                                          : r.student + " (" + folder + ")";
  const std::string title = name + ": " + score + " - the circuit-breaker lab";
  const std::string cls = to_string(r.status);
  std::string out;
  out += "<h1>The circuit-breaker lab: " + esc(name) + "</h1>";
  if (!r.dir.empty()) out += "<p class=\"meta\">Graded at " + esc(r.dir) + ".</p>";
  out += "<p class=\"meta\">Score <b>" + score + "</b>, <span class=\"verdict-" + cls + "\">" + verdict(r.status) +
         "</span>. ";
  out += r.server.empty() ? esc("Files only: " + r.evidence_note) + "."
                          : "Evidence: " + esc(r.server) + ", record epoch " + std::to_string(r.evidence.epoch) + ", " +
                                std::to_string(r.evidence.requests) + " request(s).";
  if (!r.numbers.empty()) out += " Graded on " + esc(r.numbers) + ".";
  if (r.program) out += " " + esc(program_line(*r.program));
  if (r.sandbox) out += " " + esc(sandbox_line(*r.sandbox));
  out += "</p>";
  for (const std::string& n : r.notes) out += "<p class=\"verdict-error\">" + esc(n) + "</p>";
  if (!r.headline.empty()) out += "<p class=\"headline verdict-fail\">" + esc(r.headline) + "</p>";
  if (!r.steps.empty()) {
    const Picture pic = picture(r);
    out += "<figure>" + pic.svg + "<figcaption>" + esc(pic.caption) + "</figcaption></figure>" + legend(r);
    if (!pic.notes.empty()) {
      out += "<h2>What failed, and where</h2><ol class=\"notes\">";
      for (const std::string& n : pic.notes) out += "<li>" + esc(n) + "</li>";
      out += "</ol>";
    }
    out += "<h2>The checklist</h2><section class=\"checklist\">" + checklist(r) + "</section>";
  }
  if (r.conformance) {
    const ConformancePart& c = *r.conformance;
    out += "<h2>Conformance <span class=\"verdict-" + std::string(to_string(c.status)) + "\">" + verdict(c.status) +
           "</span> " + points(c.score) + "/" + points(c.max_score) + "</h2><pre>" + esc(conformance_lines(c)) +
           "</pre>";
  }
  if (!r.run_output.empty())
    out += "<h2>Your program's output (the end of it)</h2><pre>" + esc(r.run_output) + "</pre>";
  return html_page(title, out, css());
}

}  // namespace cb::grade

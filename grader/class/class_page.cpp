#include "cb/grade/class_page.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "cb/atomic_file.h"
#include "cb/grade/format_common.h"
#include "cb/html_page.h"

namespace cb::grade {
namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// A submission's folder name as a relative link: every byte but the unreserved ones escaped, so
// a name like "#1" or "a?b" still leads to its own folder.
std::string link_to(const std::string& name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0 || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15U];
    }
  }
  return out + "/report.html";
}

// A message as a line of a list: its first 200 characters, cut at a word.
std::string brief(const std::string& text) {
  if (text.size() <= 200) return text;
  const auto space = text.rfind(' ', 200);
  return text.substr(0, space == std::string::npos ? 200 : space) + " ...";
}

std::string who(const BatchRow& r) { return r.student.empty() ? r.submission : r.student; }

std::string student_link(const BatchRow& r) {
  if (!r.report) return esc(who(r));
  return "<a href=\"" + esc(link_to(r.submission)) + "\">" + esc(who(r)) + "</a>";
}

std::string percent(std::size_t n, std::size_t of) {
  return of == 0 ? "-" : html_number(100.0 * static_cast<double>(n) / static_cast<double>(of), 0) + "%";
}

std::string bar(std::size_t n, std::size_t of, const char* cls) {
  const double w = of == 0 ? 0 : 100.0 * static_cast<double>(n) / static_cast<double>(of);
  return "<span class=\"bar\"><span class=\"" + std::string(cls) + "\" style=\"width:" + html_number(w, 1) +
         "%\"></span></span>";
}

const StepReport* step_of(const Report& r, int n) {
  for (const StepReport& s : r.steps)
    if (s.step == n) return &s;
  return nullptr;
}

std::string status_cell(const std::string& status, const std::string& title = "") {
  const std::string shown = status.empty() ? "-" : status;
  return "<td class=\"st st-" + esc(status) + "\" data-v=\"" + esc(shown) + "\"" +
         (title.empty() ? "" : " title=\"" + esc(title) + "\"") + ">" + esc(shown) + "</td>";
}

// Who failed what: a check id or a conformance rule, with its title and the students it hit.
struct Hit {
  std::string title;
  std::vector<const BatchRow*> students;
};

std::string ranked(const std::map<std::string, Hit>& hits, std::size_t graded) {
  std::vector<std::pair<std::string, const Hit*>> order;
  for (const auto& [id, hit] : hits) order.emplace_back(id, &hit);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->students.size() > b.second->students.size(); });
  std::string out =
      "<table class=\"ranked\"><tr><th>failed</th><th class=\"l\">what</th><th class=\"l\">students</th></tr>";
  for (const auto& [id, hit] : order) {
    std::string names;
    for (const BatchRow* r : hit->students) names += (names.empty() ? "" : ", ") + student_link(*r);
    out += "<tr><td>" + std::to_string(hit->students.size()) + " (" + percent(hit->students.size(), graded) +
           ")</td><td class=\"l\"><code>" + esc(id) + "</code> " + esc(hit->title) + "</td><td class=\"l\">" + names +
           "</td></tr>";
  }
  return out + "</table>";
}

constexpr const char* kCss =
    R"(.bar{display:inline-block;width:160px;height:10px;background:#eee;vertical-align:middle;margin-left:6px}
.bar span{display:block;height:100%}.ok{background:#2e7d32}.bad{background:#c62828}.dist{background:#1565c0}
td.l,th.l{text-align:left}.st{font-family:monospace}.st-pass{color:#1b5e20}.st-fail{color:#b71c1c;font-weight:600}
.st-error,.st-not_graded{color:#6a1b9a}.st-skip,.st-empty,.st-superseded,.st-no_submission{color:#8d6e00}.ranked td{vertical-align:top}
.everyone th{cursor:pointer;position:sticky;top:0}.everyone td{white-space:nowrap}.everyone td.l{white-space:normal}
.cards{display:flex;flex-wrap:wrap;gap:8px 24px;margin:8px 0}.cards div{font-size:13px}.cards b{font-size:18px;display:block}
.hist td{border:none;padding:1px 4px;text-align:left}.hist td.n{text-align:right;color:#444})";

// Sorts the table by the column clicked (again: the other way), numbers as numbers.
constexpr const char* kSortScript =
    R"(document.querySelectorAll('table.everyone th').forEach(function(th,i){th.addEventListener('click',function(){)"
    R"(var t=th.closest('table'),b=t.tBodies[0],rows=Array.from(b.rows),d=th.dataset.dir==='1'?-1:1;th.dataset.dir=d===1?'1':'-1';)"
    R"(rows.sort(function(x,y){var a=x.cells[i].dataset.v||x.cells[i].textContent,c=y.cells[i].dataset.v||y.cells[i].textContent;)"
    R"(var p=parseFloat(a),q=parseFloat(c);return(!isNaN(p)&&!isNaN(q)?p-q:a.localeCompare(c))*d;});)"
    R"(rows.forEach(function(r){b.appendChild(r);});});});)"
    // #sort=N opens the page sorted by column N (a link to the class sorted by score, say).
    R"(var m=/^#sort=(\d+)$/.exec(location.hash),h=document.querySelectorAll('table.everyone th');)"
    R"(if(m&&h[+m[1]])h[+m[1]].click();)";

// The score distribution: one bar per whole score.
std::string scores_section(const std::vector<double>& scores, double max_score) {
  std::string body;
  std::map<long, std::size_t> by_score;
  for (double s : scores) ++by_score[std::lround(std::floor(s))];
  std::size_t most = 1;
  for (const auto& [score, n] : by_score) most = std::max(most, n);
  body += "<h2>Scores</h2><table class=\"hist\">";
  for (long s = std::lround(max_score); s >= 0; --s) {
    const std::size_t n = by_score.count(s) != 0 ? by_score[s] : 0;
    body += "<tr><td class=\"n\">" + std::to_string(s) + "</td><td>" + bar(n, most, "dist") + "</td><td>" +
            std::to_string(n) + "</td></tr>";
  }
  body += "</table>";

  return body;
}

// A word of a title with its numbers as N ("5th" -> "Nth", "3.5" -> "N", "(2" -> "(N").
std::string numbers_as_n(const std::string& word) {
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    if (std::isdigit(static_cast<unsigned char>(word[i])) == 0) {
      out += word[i++];
      continue;
    }
    while (i < word.size() && (std::isdigit(static_cast<unsigned char>(word[i])) != 0 || word[i] == '.')) ++i;
    out += 'N';
    for (const char* ordinal : {"st", "nd", "rd", "th"})
      if (word.compare(i, 2, ordinal) == 0) {
        out += "th";
        i += 2;
        break;
      }
  }
  return out;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// One title for a step whose students had numbers of their own: the words they share, and N
// where their numbers differ ("N calls to /always500 open it on the Nth failure"), never one
// student's numbers as if they were everyone's.
std::string shared_title(const std::set<std::string>& titles) {
  if (titles.size() <= 1) return titles.empty() ? std::string() : *titles.begin();
  std::vector<std::vector<std::string>> all;
  for (const std::string& t : titles) all.push_back(words_of(t));
  std::string out;
  for (std::size_t i = 0; i < all.front().size(); ++i) {
    bool same = true;
    for (const auto& w : all) same = same && w.size() == all.front().size() && w[i] == all.front()[i];
    if (!same && std::any_of(all.begin(), all.end(), [&all](const auto& w) { return w.size() != all.front().size(); }))
      return numbers_as_n(*titles.begin()) + " (each student's own numbers)";
    out += (i == 0 ? "" : " ") + (same ? all.front()[i] : numbers_as_n(all.front()[i]));
  }
  return out;
}

// Each step and the conformance part: how many passed.
std::string steps_section(const std::vector<BatchRow>& rows) {
  std::string body;
  body += "<h2>Steps</h2><table><tr><th>step</th><th class=\"l\">title</th><th>passed</th><th class=\"l\"></th></tr>";
  for (int n = 1; n <= kGradedSteps; ++n) {
    std::size_t ok = 0, judged = 0;
    std::set<std::string> titles;
    for (const BatchRow& r : rows)
      if (r.report)
        if (const StepReport* s = step_of(*r.report, n)) {
          ++judged;
          ok += s->status == Status::Pass ? 1U : 0U;
          titles.insert(s->title);
        }
    if (judged == 0) continue;
    body += "<tr><td>" + std::to_string(n) + "</td><td class=\"l\">" + esc(shared_title(titles)) + "</td><td>" +
            std::to_string(ok) + "/" + std::to_string(judged) + " (" + percent(ok, judged) + ")</td><td class=\"l\">" +
            bar(ok, judged, "ok") + "</td></tr>";
  }
  std::size_t c_ok = 0, c_judged = 0;
  for (const BatchRow& r : rows)
    if (r.report && r.report->conformance) {
      ++c_judged;
      c_ok += r.report->conformance->status == Status::Pass ? 1U : 0U;
    }
  if (c_judged > 0)
    body += "<tr><td>C</td><td class=\"l\">Conformance: the breaker on generated traces</td><td>" +
            std::to_string(c_ok) + "/" + std::to_string(c_judged) + " (" + percent(c_ok, c_judged) +
            ")</td><td class=\"l\">" + bar(c_ok, c_judged, "ok") + "</td></tr>";
  body += "</table>";

  return body;
}

// What failed, most students first: the programs that never ran the lab once, then each check
// and conformance rule, and the runs on another student's numbers.
std::string failures_section(const std::vector<BatchRow>& rows, std::size_t graded) {
  std::string body;
  std::size_t c_judged = 0;
  for (const BatchRow& r : rows) c_judged += r.report && r.report->conformance ? 1U : 0U;
  std::map<std::string, Hit> checks;
  std::map<std::string, Hit> rules;
  std::vector<const BatchRow*> copies;
  std::vector<const BatchRow*> never_ran;
  for (const BatchRow& r : rows) {
    if (!r.report) continue;
    // A program that never called the server failed every check for one reason, its own: it is
    // named once, not in every check's count.
    if (!r.report->headline.empty()) {
      never_ran.push_back(&r);
      continue;
    }
    for (const StepReport& s : r.report->steps)
      for (const Check& c : s.checks)
        if (c.status == Status::Fail) {
          Hit& h = checks[c.id];
          h.title = c.name;
          h.students.push_back(&r);
          if (c.id == "s1.numbers") copies.push_back(&r);
        }
    if (const auto& c = r.report->conformance; c && c->status != Status::Pass) {
      if (c->rules.empty()) {
        Hit& h = rules[c->rule];
        h.title = brief(c->message);
        h.students.push_back(&r);
      }
      for (const ConformanceRule& rule : c->rules) {
        Hit& h = rules[rule.rule];
        if (h.title.empty()) h.title = brief(rule.message);
        h.students.push_back(&r);
      }
    }
  }
  if (!never_ran.empty()) {
    body += "<h2>Programs that never called the server</h2><ul>";
    for (const BatchRow* r : never_ran) body += "<li>" + student_link(*r) + ": " + esc(r->report->headline) + "</li>";
    body += "</ul>";
  }
  if (!checks.empty())
    body += "<h2>Checks that failed, by how many students</h2><p class=\"meta\">Of the programs that ran the lab.</p>" +
            ranked(checks, graded - never_ran.size());
  if (!rules.empty()) body += "<h2>Conformance rules broken, by how many students</h2>" + ranked(rules, c_judged);

  // Runs on numbers that are not the student's own.
  if (!copies.empty()) {
    body += "<h2>Runs on another student's numbers</h2><ul>";
    for (const BatchRow* r : copies) {
      std::string said;
      for (const StepReport& s : r->report->steps)
        for (const Check& c : s.checks)
          if (c.id == "s1.numbers") said = c.message;
      body += "<li>" + student_link(*r) + ": " + esc(said) + "</li>";
    }
    body += "</ul>";
  }

  return body;
}

// Everyone, in a table the page's script sorts.
std::string everyone_section(const std::vector<BatchRow>& rows) {
  std::string body;
  const bool variants =
      std::any_of(rows.begin(), rows.end(), [](const BatchRow& r) { return r.report && !r.report->student.empty(); });
  body +=
      "<h2>Every student</h2><p class=\"meta\">Click a column's head to sort by it.</p><table class=\"everyone\">"
      "<thead><tr><th class=\"l\">student</th>";
  if (variants) body += "<th class=\"l\">numbers</th>";
  body += "<th>score</th>";
  for (int n = 1; n <= kGradedSteps; ++n) body += "<th>" + std::to_string(n) + "</th>";
  body += "<th>conformance</th><th>seconds</th><th class=\"l\">sandbox</th></tr></thead><tbody>";
  for (const BatchRow& r : rows) {
    body += "<tr><td class=\"l\" data-v=\"" + esc(who(r)) + "\">" + student_link(r) + "</td>";
    if (!r.report) {
      body +=
          std::string(variants ? "<td class=\"l\"></td>" : "") + "<td data-v=\"-1\">0/" + points(r.max_score) + "</td>";
      for (int n = 1; n <= kGradedSteps; ++n) body += status_cell("");
      body += status_cell(to_string(r.status), r.error) + "<td></td><td></td></tr>";
      continue;
    }
    const Report& rep = *r.report;
    if (variants) body += "<td class=\"l\">" + esc(rep.student.empty() ? "" : rep.numbers) + "</td>";
    body +=
        "<td data-v=\"" + html_number(rep.score, 2) + "\">" + points(rep.score) + "/" + points(rep.max_score) + "</td>";
    for (int n = 1; n <= kGradedSteps; ++n) {
      const StepReport* s = step_of(rep, n);
      std::string first;
      if (s != nullptr)
        for (const Check& c : s->checks)
          if (first.empty() && c.status == s->status && s->status != Status::Pass) first = c.id + ": " + c.message;
      body += status_cell(s != nullptr ? to_string(s->status) : "", first);
    }
    body += rep.conformance ? status_cell(to_string(rep.conformance->status), rep.conformance->rule) : status_cell("");
    const double seconds = (rep.program ? rep.program->seconds : 0) + (rep.conformance ? rep.conformance->seconds : 0);
    body += "<td data-v=\"" + html_number(seconds, 2) + "\">" + html_number(seconds, 1) + "</td><td class=\"l\">" +
            esc(rep.sandbox ? rep.sandbox->containment : "") + "</td></tr>";
  }
  body += "</tbody></table>";
  return body;
}

}  // namespace

std::string class_page_html(const ClassPage& page) {
  const std::vector<BatchRow>& rows = page.rows;
  std::size_t graded = 0, passed = 0, empty = 0, not_graded = 0, errors = 0, graders = 0, superseded = 0, absent = 0;
  std::vector<double> scores;
  double max_score = 0;
  std::string grader, spec;
  std::set<std::uint64_t> seeds;
  for (const BatchRow& r : rows) {
    empty += r.status == RowStatus::Empty ? 1U : 0U;
    errors += r.status == RowStatus::Error ? 1U : 0U;
    not_graded += r.status == RowStatus::NotGraded ? 1U : 0U;
    superseded += r.status == RowStatus::Superseded ? 1U : 0U;
    absent += r.status == RowStatus::NoSubmission ? 1U : 0U;
    graders += !r.report && r.fault == Fault::Grader ? 1U : 0U;
    max_score = std::max(max_score, r.report ? r.report->max_score : r.max_score);
    if (!r.report) continue;
    ++graded;
    passed += r.report->passed ? 1U : 0U;
    scores.push_back(r.report->score);
    grader = r.report->grader_version;
    spec = r.report->lab_spec_sha256.substr(0, 12);
    if (r.report->conformance) seeds.insert(r.report->conformance->traces.seed);
  }
  std::sort(scores.begin(), scores.end());
  double mean = 0;
  for (double s : scores) mean += s;
  if (!scores.empty()) mean /= static_cast<double>(scores.size());
  const double median = scores.empty() ? 0 : scores[scores.size() / 2];

  std::string body = "<h1>" + esc(page.title) + ": " + std::to_string(rows.size()) + " submissions</h1>";
  body += "<p class=\"meta\">Graded by cb-grade " + esc(grader) + " on lab spec " + esc(spec);
  if (seeds.size() == 1) body += ", conformance seed " + std::to_string(*seeds.begin());
  body += ". Each name leads to that student's own report.</p>";
  body += "<div class=\"cards\"><div><b>" + std::to_string(graded) + "</b>graded</div><div><b>" +
          std::to_string(passed) + "</b>full marks</div><div><b>" + html_number(mean, 1) + " / " + points(max_score) +
          "</b>mean score</div><div><b>" + points(median) + "</b>median</div>";
  if (empty > 0) body += "<div><b>" + std::to_string(empty) + "</b>empty</div>";
  if (absent > 0) body += "<div><b>" + std::to_string(absent) + "</b>no submission</div>";
  // The grader's own failures apart: nothing the students did, and --resume grades them.
  if (errors + not_graded > graders)
    body += "<div><b>" + std::to_string(errors + not_graded - graders) + "</b>not graded</div>";
  if (graders > 0) body += "<div><b>" + std::to_string(graders) + "</b>the grader failed</div>";
  if (superseded > 0) body += "<div><b>" + std::to_string(superseded) + "</b>handed in again</div>";
  body += "</div>";

  body += scores_section(scores, max_score);
  body += steps_section(rows);
  body += failures_section(rows, graded);
  // What could not be graded, and why.
  if (empty + absent + errors + not_graded > graders) {
    body += "<h2>Not graded</h2><ul>";
    for (const BatchRow& r : rows)
      if (!r.report && r.fault != Fault::Grader && r.status != RowStatus::Superseded)
        body += "<li><b>" + esc(r.submission) + "</b> (" + to_string(r.status) + "): " + esc(r.error) + "</li>";
    body += "</ul>";
  }
  if (graders > 0) {
    body += "<h2>Not graded: the grader's failure, not the students'</h2><p>Tried " + std::to_string(kGradingTries) +
            " times each and failed each time through the grader or the machine; nothing is charged to these "
            "students. <code>cb-grade --batch ... --resume</code> grades them again.</p><ul>";
    for (const BatchRow& r : rows)
      if (!r.report && r.fault == Fault::Grader)
        body += "<li><b>" + esc(r.submission) + "</b>: " + esc(r.error) + "</li>";
    body += "</ul>";
  }

  // A student's earlier hand-in: not a failure of anyone's, but the instructor should know which
  // folder the grade is of.
  if (superseded > 0) {
    body +=
        "<h2>Handed in again</h2><p>The last a student hands in is graded (by the newest file each folder "
        "holds); these earlier ones are not.</p><ul>";
    for (const BatchRow& r : rows)
      if (r.status == RowStatus::Superseded)
        body += "<li><b>" + esc(r.submission) + "</b> (" + esc(r.student) + "): " + esc(r.error) + "</li>";
    body += "</ul>";
  }
  body += everyone_section(rows);
  return html_page_with_script("Class: " + page.title, body, kCss, kSortScript);
}

Result<void> write_class_page(const std::string& dir, const ClassPage& page) {
  return write_file_atomically(dir + "/index.html", class_page_html(page));
}

}  // namespace cb::grade

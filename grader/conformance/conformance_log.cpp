#include "cb/grade/conformance_log.h"

#include "cb/hmac_sha256.h"

namespace cb::grade::conformance {
namespace {

constexpr const char* kFormat = "cb-grade conformance answers 1";
// A trace's stderr is kept to its end, as the report shows it; more would only grow the file.
constexpr std::size_t kMaxStderr = 4096;

std::string key_of(const Trace& t, bool alone = false) {
  std::string input = settings_line(t.settings) + "\n";
  for (const Call& c : t.calls) input += call_line(c) + "\n";
  return (alone ? "alone " : "") + cb::hex(cb::sha256(input));
}

// Two letters an answer: p/r (permitted, rejected) and C/O/H (the state), "pC rO pH".
std::string encode(const std::vector<Answer>& answers) {
  std::string out;
  for (const Answer& a : answers) {
    if (!out.empty()) out += ' ';
    out += a.decision == Decision::Permitted ? 'p' : 'r';
    out += a.state == State::Closed ? 'C' : a.state == State::Open ? 'O' : 'H';
  }
  return out;
}

Result<std::vector<Answer>> decode(const std::string& text, const std::string& where) {
  std::vector<Answer> out;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    if (i + 2 > text.size() || (text[i] != 'p' && text[i] != 'r') ||
        (text[i + 1] != 'C' && text[i + 1] != 'O' && text[i + 1] != 'H') || (i + 2 < text.size() && text[i + 2] != ' '))
      return Error{where + ": expected answers like \"pC rO pH\", at character " + std::to_string(i)};
    Answer a;
    a.decision = text[i] == 'p' ? Decision::Permitted : Decision::Rejected;
    a.state = text[i + 1] == 'C' ? State::Closed : text[i + 1] == 'O' ? State::Open : State::HalfOpen;
    out.push_back(a);
  }
  return out;
}

// A true/false field that may be absent (false).
bool flag(const nlohmann::json& j, const char* key) {
  const auto f = j.find(key);
  return f != j.end() && f->is_boolean() && f->get<bool>();
}

}  // namespace

AnswerLog::AnswerLog(const AnswerLog& other) {
  const std::lock_guard lock(other.mu_);
  by_input_ = other.by_input_;
  missed_ = other.missed_;
  processes_ = other.processes_;
}

AnswerLog& AnswerLog::operator=(const AnswerLog& other) {
  if (this == &other) return *this;
  std::scoped_lock lock(mu_, other.mu_);
  by_input_ = other.by_input_;
  missed_ = other.missed_;
  processes_ = other.processes_;
  return *this;
}

Program AnswerLog::recorded(Program program, bool alone) {
  return [this, alone, program = std::move(program)](const Trace& trace) {
    Replies replies = program(trace);
    Kept kept{replies.answers, replies.problem,   replies.stderr_tail, replies.shared,
              replies.open,    replies.timed_out, replies.in_flight};
    if (kept.stderr_tail.size() > kMaxStderr) kept.stderr_tail.erase(0, kept.stderr_tail.size() - kMaxStderr);
    const std::lock_guard lock(mu_);
    // The first answer to a trace is the one its verdict was given on; the same trace asked again
    // later (shrinking starts from it) keeps it, so a regrade, asking in the same order, gets the
    // same answers with the same circumstances.
    by_input_.emplace(key_of(trace, alone), std::move(kept));
    return replies;
  };
}

Programs AnswerLog::recording(Programs programs) {
  Programs out;
  out.run = recorded(std::move(programs.run), false);
  if (programs.alone) out.alone = recorded(std::move(programs.alone), true);
  out.processes = [this, processes = std::move(programs.processes)] {
    const int n = processes ? processes() : 0;
    const std::lock_guard lock(mu_);
    processes_ = n;
    return n;
  };
  return out;
}

Program AnswerLog::replayed(bool alone, bool explore) {
  return [this, alone, explore](const Trace& trace) {
    const std::string key = key_of(trace, alone);
    const std::lock_guard lock(mu_);
    const auto found = by_input_.find(key);
    if (found == by_input_.end() && explore) {
      Replies unkept;
      unkept.problem = "no kept answer to this experiment";
      unkept.unkept = true;
      return unkept;
    }
    if (found == by_input_.end()) {
      missed_.insert(key);
      return Replies(model_answers(trace.settings, trace.calls));
    }
    Replies r(found->second.answers);
    r.problem = found->second.problem;
    r.stderr_tail = found->second.stderr_tail;
    r.shared = found->second.shared;
    r.open = found->second.open;
    r.timed_out = found->second.timed_out;
    r.in_flight = found->second.in_flight;
    return r;
  };
}

Programs AnswerLog::replaying() {
  Programs out;
  out.run = replayed(false, false);
  out.explore = replayed(false, true);
  // Whether the first grade ran traces alone at all: a log of a program that answered every
  // trace in a process of its own holds none.
  bool any_alone = false;
  {
    const std::lock_guard lock(mu_);
    for (const auto& [key, kept] : by_input_)
      any_alone = any_alone || key.rfind("alone ", 0) == 0 || kept.shared || kept.open;
  }
  if (any_alone) out.alone = replayed(true, false);
  out.processes = [this] {
    const std::lock_guard lock(mu_);
    return processes_;
  };
  return out;
}

bool AnswerLog::holds(const Trace& trace) const {
  const std::lock_guard lock(mu_);
  return by_input_.count(key_of(trace)) > 0;
}

std::size_t AnswerLog::size() const {
  const std::lock_guard lock(mu_);
  return by_input_.size();
}

std::size_t AnswerLog::missed() const {
  const std::lock_guard lock(mu_);
  return missed_.size();
}

nlohmann::json AnswerLog::to_json() const {
  const std::lock_guard lock(mu_);
  nlohmann::json replies = nlohmann::json::array();
  for (const auto& [key, kept] : by_input_) {
    const bool alone = key.rfind("alone ", 0) == 0;
    nlohmann::json r{{"input_sha256", alone ? key.substr(6) : key}, {"answers", encode(kept.answers)}};
    if (alone) r["alone"] = true;
    if (kept.shared) r["shared"] = true;
    if (kept.open) r["open"] = true;
    if (kept.timed_out) r["timed_out"] = true;
    if (kept.in_flight) r["in_flight"] = true;
    if (!kept.problem.empty()) r["problem"] = kept.problem;
    if (!kept.stderr_tail.empty()) r["stderr"] = kept.stderr_tail;
    replies.push_back(std::move(r));
  }
  return {{"format", kFormat}, {"processes", processes_}, {"replies", std::move(replies)}};
}

Result<AnswerLog> AnswerLog::from_json(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    return Error{name + ": format: expected \"" + std::string(kFormat) + "\""};
  const auto replies = j.find("replies");
  if (replies == j.end() || !replies->is_array()) return Error{name + ": replies: expected an array"};
  AnswerLog log;
  if (const auto p = j.find("processes"); p != j.end() && p->is_number_integer()) log.processes_ = p->get<int>();
  for (std::size_t i = 0; i < replies->size(); ++i) {
    const nlohmann::json& r = (*replies)[i];
    const std::string where = name + ": replies[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("input_sha256") || !r["input_sha256"].is_string() || !r.contains("answers") ||
        !r["answers"].is_string())
      return Error{where + ": expected {\"input_sha256\": ..., \"answers\": ...}"};
    auto answers = decode(r["answers"].get<std::string>(), where + ".answers");
    if (!answers) return answers.error();
    Kept kept{std::move(*answers), {}, {}, flag(r, "shared"), flag(r, "open"), flag(r, "timed_out"),
              flag(r, "in_flight")};
    if (const auto p = r.find("problem"); p != r.end() && p->is_string()) kept.problem = p->get<std::string>();
    if (const auto e = r.find("stderr"); e != r.end() && e->is_string()) kept.stderr_tail = e->get<std::string>();
    const std::string key = (flag(r, "alone") ? "alone " : "") + r["input_sha256"].get<std::string>();
    log.by_input_.insert_or_assign(key, std::move(kept));
  }
  return log;
}

}  // namespace cb::grade::conformance

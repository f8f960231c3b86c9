#include "cb/grade/conformance_log.h"

#include "cb/hmac_sha256.h"

namespace cb::grade::conformance {
namespace {

constexpr const char* kFormat = "cb-grade conformance answers 1";
// A trace's stderr is kept to its end, as the report shows it; more would only grow the file.
constexpr std::size_t kMaxStderr = 4096;

std::string key_of(const Trace& t) {
  std::string input = settings_line(t.settings) + "\n";
  for (const Call& c : t.calls) input += call_line(c) + "\n";
  return cb::hex(cb::sha256(input));
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

}  // namespace

AnswerLog::AnswerLog(const AnswerLog& other) {
  const std::lock_guard lock(other.mu_);
  by_input_ = other.by_input_;
  missed_ = other.missed_;
}

Program AnswerLog::recording(Program program) {
  return [this, program = std::move(program)](const Trace& trace) {
    Replies replies = program(trace);
    Kept kept{replies.answers, replies.problem, replies.stderr_tail};
    if (kept.stderr_tail.size() > kMaxStderr) kept.stderr_tail.erase(0, kept.stderr_tail.size() - kMaxStderr);
    const std::lock_guard lock(mu_);
    by_input_.insert_or_assign(key_of(trace), std::move(kept));
    return replies;
  };
}

Program AnswerLog::replaying() {
  return [this](const Trace& trace) {
    const std::string key = key_of(trace);
    const std::lock_guard lock(mu_);
    const auto found = by_input_.find(key);
    if (found == by_input_.end()) {
      missed_.insert(key);
      return Replies(model_answers(trace.settings, trace.calls));
    }
    Replies r(found->second.answers);
    r.problem = found->second.problem;
    r.stderr_tail = found->second.stderr_tail;
    return r;
  };
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
    nlohmann::json r{{"input_sha256", key}, {"answers", encode(kept.answers)}};
    if (!kept.problem.empty()) r["problem"] = kept.problem;
    if (!kept.stderr_tail.empty()) r["stderr"] = kept.stderr_tail;
    replies.push_back(std::move(r));
  }
  return {{"format", kFormat}, {"replies", std::move(replies)}};
}

Result<AnswerLog> AnswerLog::from_json(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    return Error{name + ": format: expected \"" + std::string(kFormat) + "\""};
  const auto replies = j.find("replies");
  if (replies == j.end() || !replies->is_array()) return Error{name + ": replies: expected an array"};
  AnswerLog log;
  for (std::size_t i = 0; i < replies->size(); ++i) {
    const nlohmann::json& r = (*replies)[i];
    const std::string where = name + ": replies[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("input_sha256") || !r["input_sha256"].is_string() || !r.contains("answers") ||
        !r["answers"].is_string())
      return Error{where + ": expected {\"input_sha256\": ..., \"answers\": ...}"};
    auto answers = decode(r["answers"].get<std::string>(), where + ".answers");
    if (!answers) return answers.error();
    Kept kept{std::move(*answers), {}, {}};
    if (const auto p = r.find("problem"); p != r.end() && p->is_string()) kept.problem = p->get<std::string>();
    if (const auto e = r.find("stderr"); e != r.end() && e->is_string()) kept.stderr_tail = e->get<std::string>();
    log.by_input_.insert_or_assign(r["input_sha256"].get<std::string>(), std::move(kept));
  }
  return log;
}

}  // namespace cb::grade::conformance

#include "cb/exercises/script.h"

#include "cb/bounded_file.h"

#include <istream>
#include <ostream>

#include "cb/breaker/profiles.h"
#include "cb/decimal_time.h"
#include "cb/exercises/replay.h"

namespace cb::exercises {
namespace {

constexpr std::string_view kSpace = " \t\r";

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const auto b = s.find_first_not_of(kSpace, pos);
    if (b == std::string_view::npos) break;
    auto e = s.find_first_of(kSpace, b);
    if (e == std::string_view::npos) e = s.size();
    out.push_back(s.substr(b, e - b));
    pos = e;
  }
  return out;
}

std::optional<int> status_code(std::string_view s) {
  if (s.size() != 3) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const int code = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
  if (code < 100 || code > 599) return std::nullopt;
  return code;
}

// "HTTP/1.1", "HTTP/1.0", "HTTP/2": the protocol token of a status line.
bool http_version(std::string_view s) {
  if (s.substr(0, 5) != "HTTP/") return false;
  s.remove_prefix(5);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (s.size() == 1) return digit(s[0]);
  return s.size() == 3 && digit(s[0]) && s[1] == '.' && digit(s[2]);
}

std::vector<std::string> invalid(std::string reason) { return {"INVALID " + std::move(reason)}; }

}  // namespace

classify::Observation parse_answer(std::string_view answer) {
  using classify::Origin;
  answer = trim(answer);
  if (auto code = status_code(answer)) return {Origin::Response, *code};
  const auto words = split(answer);
  if (words.size() >= 2 && http_version(words[0])) {
    // Only single spaces are well-formed between the version, the code and the reason.
    const std::string_view after_version = answer.substr(words[0].size());
    if (after_version.size() > 1 && after_version[0] == ' ' && after_version[1] != ' ') {
      if (auto code = status_code(words[1])) return {Origin::Response, *code};
    }
  }
  if (answer == "TIMEOUT") return {Origin::Timeout, 0};
  if (answer == "RESET") return {Origin::ConnectionReset, 0};
  if (answer == "REFUSED") return {Origin::ConnectRefused, 0};
  return {Origin::MalformedResponse, 0};
}

struct ScriptInterpreter::Backend {
  std::string name;
  std::unique_ptr<CircuitBreaker> breaker;
};

ScriptInterpreter::ScriptInterpreter() : classifier_(classify::Classifier::balancer()) {}
ScriptInterpreter::~ScriptInterpreter() = default;

std::vector<std::string> ScriptInterpreter::execute(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.front() == '#') return {};
  const auto words = split(line);
  const std::string_view command = words.front();
  const std::vector<std::string_view> args(words.begin() + 1, words.end());
  if (command == "POOL") return pool(args);
  if (command == "NOW") return now(args);
  if (command == "CALL") return call(trim(line.substr(command.size())));
  if (command == "STATUS") return status(args);
  return invalid("unknown command '" + std::string(command) + "' (expected POOL, NOW, CALL or STATUS)");
}

std::vector<std::string> ScriptInterpreter::pool(const std::vector<std::string_view>& args) {
  if (args.empty()) return invalid("POOL needs at least one backend name");
  std::vector<Backend> fresh;
  for (const auto name : args) {
    for (const auto& b : fresh)
      if (b.name == name) return invalid("POOL names backend '" + std::string(name) + "' twice");
    auto breaker = CircuitBreaker::create(profiles::balancer(), clock_);
    if (!breaker) return invalid(breaker.error().message);  // only if the profile itself were broken
    fresh.push_back(Backend{std::string(name), std::move(breaker).value()});
  }
  backends_ = std::move(fresh);
  return {"OK"};
}

std::vector<std::string> ScriptInterpreter::now(const std::vector<std::string_view>& args) {
  if (args.size() != 1) return invalid("NOW takes one number of seconds");
  auto t = parse_seconds(args[0]);
  if (!t) return invalid("NOW: " + t.error().message);
  // As a trace's times: a time past this plus a cool-down would overflow the clock.
  if (std::chrono::abs(*t) > std::chrono::seconds{kMaxReplaySeconds})
    return invalid("NOW: " + std::string(args[0]) + " is out of range: expected -" + std::to_string(kMaxReplaySeconds) +
                   " to " + std::to_string(kMaxReplaySeconds) + " seconds");
  clock_.set(TimePoint{*t});
  return {"OK"};
}

std::vector<std::string> ScriptInterpreter::call(std::string_view rest) {
  const auto words = split(rest);
  if (words.size() < 2) return invalid("CALL takes a backend and an answer");
  if (backends_.empty()) return invalid("CALL before POOL: there are no backends yet");
  const std::string_view name = words[0];
  Backend* backend = nullptr;
  for (auto& b : backends_)
    if (b.name == name) backend = &b;
  if (backend == nullptr) return invalid("CALL to unknown backend '" + std::string(name) + "'");

  const Admission admission = backend->breaker->try_acquire();
  if (!admission) return {"SHORT"};
  // The answer is what the backend did; the breaker hears it, and OK/ERROR reports it.
  const Verdict verdict = classifier_.classify(parse_answer(rest.substr(name.size())));
  (void)backend->breaker->record(admission.ticket, {verdict, Duration::zero()});
  return {verdict == Verdict::Failure ? "ERROR" : "OK"};
}

std::vector<std::string> ScriptInterpreter::status(const std::vector<std::string_view>& args) {
  if (!args.empty()) return invalid("STATUS takes no arguments");
  if (backends_.empty()) return invalid("STATUS before POOL: there are no backends yet");
  std::vector<std::string> out;
  out.reserve(backends_.size());
  for (const auto& b : backends_) out.push_back(b.name + " " + std::string(to_string(b.breaker->state())));
  return out;
}

Result<void> run_script(std::istream& in, std::ostream& out, bool interactive) {
  ScriptInterpreter interpreter;
  std::string line;
  for (long n = 1;; ++n) {
    const LineRead got = read_line(in, line, kMaxScriptLine);
    if (got == LineRead::End) break;
    if (got == LineRead::TooLong) {
      out.flush();
      return Error{"line " + std::to_string(n) + ": longer than " + std::to_string(kMaxScriptLine) + " bytes"};
    }
    for (const auto& answer : interpreter.execute(line)) out << answer << '\n';
    if (interactive) out.flush();
  }
  out.flush();
  return {};
}

}  // namespace cb::exercises

#pragma once
// The balancer exercise: a load balancer's breakers driven by commands, one line at a time.
//   POOL <b1> <b2> ...        a `balancer` breaker per backend, all CLOSED        -> OK
//   NOW <seconds>             sets the clock                                     -> OK
//   CALL <backend> <answer>   one call through that backend's breaker            -> OK | ERROR | SHORT
//   STATUS                    one line "<backend> <state>" per backend, in pool order
// A line it cannot understand answers "INVALID <reason>" and the script goes on. Blank lines
// and lines starting with '#' are not commands and answer nothing.

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cb/breaker/breaker.h"
#include "cb/classify/classifier.h"
#include "cb/result.h"

namespace cb::exercises {

// How a CALL's answer reads: a three-digit code 100-599, alone or in an HTTP status line
// ("HTTP/1.1 503 Service Unavailable"); TIMEOUT, RESET, REFUSED or anything else is not a
// well-formed answer.
[[nodiscard]] classify::Observation parse_answer(std::string_view answer);

class ScriptInterpreter {
 public:
  ScriptInterpreter();
  ~ScriptInterpreter();
  ScriptInterpreter(const ScriptInterpreter&) = delete;
  ScriptInterpreter& operator=(const ScriptInterpreter&) = delete;

  // The answer lines for one input line (none for a blank line or a comment).
  [[nodiscard]] std::vector<std::string> execute(std::string_view line);

 private:
  struct Backend;
  std::vector<std::string> pool(const std::vector<std::string_view>& args);
  std::vector<std::string> now(const std::vector<std::string_view>& args);
  std::vector<std::string> call(std::string_view rest);
  std::vector<std::string> status(const std::vector<std::string_view>& args);

  ManualClock clock_;
  classify::Classifier classifier_;
  std::vector<Backend> backends_;
};

// No command comes near this; a longer line (an input without newlines: /dev/zero) ends the run.
inline constexpr std::size_t kMaxScriptLine = 4096;

// Runs every line of `in`, writing the answers to `out`; flushes after each line when
// `interactive`, so a person typing sees each answer at once. Errors: a line longer than
// kMaxScriptLine, named by its number (what came before it is answered).
[[nodiscard]] Result<void> run_script(std::istream& in, std::ostream& out, bool interactive);

}  // namespace cb::exercises

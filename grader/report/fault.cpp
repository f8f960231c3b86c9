#include "cb/grade/fault.h"

namespace cb::grade {

const char* to_string(Fault f) noexcept {
  switch (f) {
    case Fault::None: return "";
    case Fault::Student: return "student";
    case Fault::Program: return "program";
    case Fault::Grader: return "grader";
  }
  return "";
}

std::string not_graded_after(const std::vector<std::string>& tries) {
  return "not graded: " + (tries.empty() ? std::string() : tries.back()) + " (tried " + std::to_string(tries.size()) +
         " times)";
}

Fault fault_from(const std::string& text) noexcept {
  for (const Fault f : {Fault::Student, Fault::Program, Fault::Grader})
    if (text == to_string(f)) return f;
  return Fault::None;
}

}  // namespace cb::grade

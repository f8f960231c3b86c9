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

Fault fault_from(const std::string& text) noexcept {
  for (const Fault f : {Fault::Student, Fault::Program, Fault::Grader})
    if (text == to_string(f)) return f;
  return Fault::None;
}

}  // namespace cb::grade

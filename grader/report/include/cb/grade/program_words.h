#pragma once
// Why a program stopped, in its own words, from the end of its output: what a student reads first
// when the program failed as a program (the kind `program` of fault.h). The tools say it in
// different places: a compiler's first error (javac and gcc close with a count, "1 error"), an
// exception or a panic with the file and line it was raised at (Python's traceback ends with it,
// Java's and Node's begin with it, Go's panic names the frame below it).

#include <string>
#include <string_view>

namespace cb::grade {

// One line: "breaker.py, line 12: NameError: name 'x' is not defined", "Breaker.java:12: error:
// ';' expected", "panic: runtime error: index out of range [3] with length 3 (breaker.go:41)";
// failing those, the last line that is not blank; empty for no output.
[[nodiscard]] std::string program_words(std::string_view output);

}  // namespace cb::grade

// A program's own words for why it stopped, as each toolchain of the kits writes them.
#include <doctest/doctest.h>

#include "cb/grade/program_words.h"

namespace cb::grade {
namespace {

TEST_CASE("program words: a compiler's first error, not its closing count") {
  CHECK(program_words("Breaker.java:12: error: ';' expected\n        int x = 1\n                 ^\n"
                      "Lab.java:3: error: cannot find symbol\n2 errors\n") == "Breaker.java:12: error: ';' expected");
  CHECK(program_words(
            "In file included from lab.cpp:3:\n/box/src/breaker.h: In member function 'void f()':\n"
            "/box/src/breaker.h:41:5: error: 'windw' was not declared in this scope\n   41 |     windw.push(1);\n"
            "      |     ^~~~~\nmake: *** [Makefile:4: lab] Error 1\n") ==
        "breaker.h:41:5: error: 'windw' was not declared in this scope");
  CHECK(program_words(
            "# command-line-arguments\n./breaker.go:17:2: undefined: windw\n./breaker.go:20:9: too many errors\n") ==
        "breaker.go:17:2: undefined: windw");
}

TEST_CASE("program words: an exception or a panic, at the file and line that raised it") {
  CHECK(
      program_words("step 1 ok\nTraceback (most recent call last):\n  File \"/box/src/lab.py\", line 80, in <module>\n"
                    "    main()\n  File \"/box/src/breaker.py\", line 12, in record\n    self.windw.append(ok)\n"
                    "AttributeError: 'Breaker' object has no attribute 'windw'\n") ==
      "breaker.py, line 12: AttributeError: 'Breaker' object has no attribute 'windw'");
  CHECK(program_words("Exception in thread \"main\" java.lang.NullPointerException: Cannot read the array length\n"
                      "\tat Breaker.record(Breaker.java:33)\n\tat Lab.main(Lab.java:90)\n") ==
        "java.lang.NullPointerException: Cannot read the array length (Breaker.java:33)");
  CHECK(
      program_words(
          "/box/src/breaker.js:21\n    this.windw.push(ok);\n               ^\n\n"
          "TypeError: Cannot read properties of undefined (reading 'push')\n"
          "    at Breaker.record (/box/src/breaker.js:21:16)\n    at main (/box/src/lab.js:70:5)\n\nNode.js v18.19.0\n") ==
      "TypeError: Cannot read properties of undefined (reading 'push') (breaker.js:21)");
  CHECK(
      program_words("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n"
                    "main.(*Breaker).Record(...)\n\t/box/src/breaker.go:41\nmain.main()\n\t/box/src/lab.go:88 +0x1d4\n"
                    "exit status 2\n") == "panic: runtime error: index out of range [3] with length 3 (breaker.go:41)");
}

TEST_CASE("program words: anything else is its last line that is not blank") {
  CHECK(program_words("sh: 0: cannot open runn.sh: No such file\n\n") == "sh: 0: cannot open runn.sh: No such file");
  CHECK(program_words("") == "");
  CHECK(program_words("all good\r\n  \n") == "all good");
}

TEST_CASE("program words: a script with Windows line endings is named as the cause, its \\r shown") {
  const std::string hint =
      " (a script of yours has Windows line endings: each line's \\r became part of a name; save run.sh and the "
      "files it runs with LF endings)";
  CHECK(program_words("node:internal/modules/cjs/loader:1080\n  throw err;\n\nError: Cannot find module "
                      "'/box/replay.js\r'\n    at Module._resolveFilename (node:internal:1077:15)\n") ==
        "Error: Cannot find module '/box/replay.js\\r'" + hint);
  CHECK(program_words("run.sh: 1: python3\r: not found\n") == "run.sh: 1: python3\\r: not found" + hint);
  CHECK(program_words("python3: can't open file '/box/b.py\\r': [Errno 2] No such file or directory\n") ==
        "python3: can't open file '/box/b.py\\r': [Errno 2] No such file or directory" + hint);
  CHECK(program_words("run.sh: line 2: $'\\r': command not found\n") ==
        "run.sh: line 2: $'\\r': command not found" + hint);
  // Output that merely ends its lines in CRLF is no script's fault.
  CHECK(program_words(
            "Traceback (most recent call last):\r\n  File \"b.py\", line 3, in <module>\r\nKeyError: 'x'\r\n") ==
        "b.py, line 3: KeyError: 'x'");
}

}  // namespace
}  // namespace cb::grade

# Writes OUT, a C++ source that returns the text of IN (scenarios/lab.json), so cb-grade grades
# with the lab it was built with and stays one static binary. Run at build time; the build
# re-runs it when the spec changes.
#   cmake -DIN=lab.json -DOUT=file.cpp -P embed_lab_spec.cmake
file(READ ${IN} text)
string(FIND "${text}" ")cbspec\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )cbspec\"")
endif()
file(WRITE ${OUT}.new "// Generated from scenarios/lab.json by cmake/embed_lab_spec.cmake: edit the spec, not this.
#include \"cb/grade/lab_spec.h\"

namespace cb::grade {

std::string_view embedded_lab_spec_text() noexcept {
  return R\"cbspec(${text})cbspec\";
}

}  // namespace cb::grade
")
# Rewritten only when it changed, so an unrelated build does not recompile it.
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)

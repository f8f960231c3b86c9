# Writes OUT, a C++ source whose function FUNC (in namespace NS, declared in HEADER) returns the
# text of IN, so a program carries the file it was built with (cb-grade the lab spec, the fleet
# its Redis functions) and stays one binary. Run at build time; the build re-runs it when IN
# changes.
#   cmake -DIN=file -DOUT=file.cpp -DNS=cb::x -DFUNC=name -DHEADER=cb/x.h -P embed_text.cmake
file(READ ${IN} text)
string(FIND "${text}" ")cbtext\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )cbtext\"")
endif()
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT}.new "// Generated from ${name} by cmake/embed_text.cmake: edit that file, not this.
#include \"${HEADER}\"

namespace ${NS} {

std::string_view ${FUNC}() noexcept {
  return R\"cbtext(${text})cbtext\";
}

}  // namespace ${NS}
")
# Rewritten only when it changed, so an unrelated build does not recompile it.
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)

# Writes OUT, a C++ source holding every file of the starter kits under KITS (one directory per
# language), so `cb-lab init` needs nothing but its own binary. Run at build time; the build
# re-runs it when a kit file changes.
#   cmake -DKITS=dir -DOUT=file.cpp -P embed_kits.cmake
file(GLOB langs RELATIVE ${KITS} ${KITS}/*)
list(SORT langs)
set(body "")
foreach(lang ${langs})
  if(NOT IS_DIRECTORY ${KITS}/${lang})
    continue()
  endif()
  file(GLOB names RELATIVE ${KITS}/${lang} ${KITS}/${lang}/*)
  list(SORT names)
  foreach(name ${names})
    # A kit is files with a kind in their name (breaker.py, run.sh, go.mod). What running a kit
    # in the checkout leaves beside them is not part of it: a folder (Python's __pycache__, Java's
    # .classes, Go's .gocache), a hidden stamp (.built) or a program built (C++'s lab, Go's kit).
    if(IS_DIRECTORY ${KITS}/${lang}/${name} OR name MATCHES "^\\." OR NOT name MATCHES "\\.")
      continue()
    endif()
    file(READ ${KITS}/${lang}/${name} text)
    string(FIND "${text}" ")cbkit\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${KITS}/${lang}/${name} contains the raw-string delimiter )cbkit\"")
    endif()
    set(exec false)
    if(name MATCHES "\\.sh$")
      set(exec true)
    endif()
    string(APPEND body "      {\"${lang}\", \"${name}\", ${exec}, R\"cbkit(${text})cbkit\"},\n")
  endforeach()
endforeach()
file(WRITE ${OUT}.new "// Generated from kits/ by cmake/embed_kits.cmake: edit the kit files, not this.
#include \"cb/kit_files.h\"

namespace cb {

const std::vector<KitFile>& kit_files() {
  static const std::vector<KitFile> files{
${body}  };
  return files;
}

}  // namespace cb
")
# Rewritten only when it changed, so an unrelated build does not recompile it.
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)

# Warnings live on a private interface target: our own targets link it PRIVATE, so the flags
# never leak to anything that links our libraries.
add_library(cb_warnings INTERFACE)
add_library(cb::warnings ALIAS cb_warnings)
target_compile_options(cb_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${CB_WARNINGS_AS_ERRORS}>:-Werror>)

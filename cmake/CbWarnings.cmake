# Warnings live on a private interface target: our own targets link it PRIVATE, so the flags
# never leak to anything that links our libraries.
add_library(cb_warnings INTERFACE)
add_library(cb::warnings ALIAS cb_warnings)
target_compile_options(cb_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${CB_WARNINGS_AS_ERRORS}>:-Werror>)
# GCC 12's optimizer warns inside libstdc++'s own headers on code that is right: -Wrestrict on
# `"'" + std::string(...)` (GCC bug 105329), -Wmaybe-uninitialized on a moved std::string in an
# optional (bug 105562) and -Wnull-dereference in <streambuf>. They appear only when inlining at
# -O2/-O3, so a Release build on Debian 12 (or a GitHub runner's GCC 12) drops these three; the
# Debug build, where CI's warnings are errors, keeps them all.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(cb_warnings INTERFACE
    $<$<NOT:$<CONFIG:Debug>>:-Wno-restrict -Wno-maybe-uninitialized -Wno-null-dereference>)
endif()
# Clang checks which lock guards what (cb/thread_safety.h's annotations); the thread-safety
# preset makes a finding an error, and CI builds the engine and the fleet with it.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(cb_warnings INTERFACE -Wthread-safety
    $<$<BOOL:${CB_THREAD_SAFETY_AS_ERRORS}>:-Werror=thread-safety>)
endif()

# CB_SANITIZE applies to everything we build, tests included, so a sanitizer sees the whole program.
if(CB_SANITIZE)
  string(REPLACE "," ";" _cb_sans "${CB_SANITIZE}")
  foreach(_san IN LISTS _cb_sans)
    if(NOT _san MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "CB_SANITIZE: unknown sanitizer '${_san}' (expected address, undefined, thread or leak)")
    endif()
  endforeach()
  if("thread" IN_LIST _cb_sans AND "address" IN_LIST _cb_sans)
    message(FATAL_ERROR "CB_SANITIZE: thread and address cannot be combined")
  endif()
  add_compile_options(-fsanitize=${CB_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${CB_SANITIZE})
endif()

# Fuzzing instruments everything for coverage, with ASan and UBSan to turn bugs into crashes;
# only the fuzz targets link libFuzzer's main (grader/fuzz/CMakeLists.txt).
if(CB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "CB_FUZZ needs clang (libFuzzer): use the fuzz preset")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

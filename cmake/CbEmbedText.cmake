# cb_embed_text(IN file OUT file.cpp NS cb::x FUNC name HEADER cb/x.h COMMENT "...")
# A build step that writes OUT, a C++ source whose function FUNC returns the text of IN
# (cmake/embed_text.cmake), re-run when IN changes: a program carries the file it was built with.
function(cb_embed_text)
  cmake_parse_arguments(ARG "" "IN;OUT;NS;FUNC;HEADER;COMMENT" "" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUT}
    COMMAND ${CMAKE_COMMAND} -DIN=${ARG_IN} -DOUT=${ARG_OUT} -DNS=${ARG_NS} -DFUNC=${ARG_FUNC} -DHEADER=${ARG_HEADER}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${ARG_IN} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "${ARG_COMMENT}")
endfunction()

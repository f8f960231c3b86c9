# Run after a test program is built (tests/CMakeLists.txt, cb_add_test_program): gives its cases
# of doctest's suite "unit" the CTest label `unit`. doctest_discover_tests' own ADD_LABELS asks
# the program once per case with the case's name as a filter, which loses every case whose name
# has a comma; asking once for the whole suite loses none.
#   -D EXE=program -D PREFIX=name. -D OUT=file to include
execute_process(COMMAND "${EXE}" --list-test-cases --test-suite=unit --no-version
                OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list-test-cases --test-suite=unit: exit ${rc}")
endif()
string(REPLACE "\n" ";" lines "${listed}")
set(script "")
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^=+$" OR line MATCHES "^\\[doctest\\] ")
    continue()
  endif()
  string(APPEND script "set_tests_properties([==[${PREFIX}${line}]==] PROPERTIES LABELS unit)\n")
endforeach()
file(WRITE "${OUT}" "${script}")

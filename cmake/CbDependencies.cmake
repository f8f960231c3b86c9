# Every dependency is a Debian package (scripts/install-deps installs them); nothing is vendored
# or downloaded at build time. A missing one stops here with the package to install.
find_package(PkgConfig REQUIRED)

macro(cb_require_package pkg debian)
  find_package(${pkg} ${ARGN} QUIET)
  if(NOT ${pkg}_FOUND)
    message(FATAL_ERROR "${pkg} not found: install the Debian package ${debian} (scripts/install-deps does it)")
  endif()
endmacro()

cb_require_package(nlohmann_json nlohmann-json3-dev 3.11)
cb_require_package(CLI11 libcli11-dev)

find_package(Threads REQUIRED)

# The fleet's shared breaker (fleet/): hiredis 0.14 from Debian 12, optional unless CB_FLEET=ON.
set(CB_FLEET_ENABLED OFF)
if(NOT CB_FLEET STREQUAL "OFF")
  pkg_check_modules(HIREDIS IMPORTED_TARGET hiredis)
  if(HIREDIS_FOUND)
    set(CB_FLEET_ENABLED ON)
  elseif(CB_FLEET STREQUAL "ON")
    message(FATAL_ERROR "hiredis not found through pkg-config: install libhiredis-dev (scripts/install-deps does it)")
  else()
    message(STATUS "hiredis not found: building without the fleet's shared breaker (libhiredis-dev adds it)")
  endif()
endif()

# The grader's system-call filter for the programs it runs (sandbox/).
pkg_check_modules(SECCOMP IMPORTED_TARGET libseccomp)
if(NOT SECCOMP_FOUND)
  message(FATAL_ERROR "libseccomp not found through pkg-config: install libseccomp-dev (scripts/install-deps does it)")
endif()

if(CB_BUILD_TESTS)
  cb_require_package(doctest doctest-dev)
  # The tests' HTTP client: a second implementation to check the programs' own HTTP against.
  pkg_check_modules(CPPHTTPLIB IMPORTED_TARGET cpp-httplib)
  if(NOT CPPHTTPLIB_FOUND)
    message(FATAL_ERROR "cpp-httplib not found through pkg-config: install libcpp-httplib-dev (scripts/install-deps does it)")
  endif()
  include(doctest)  # doctest_discover_tests
endif()
if(CB_BUILD_BENCH)
  cb_require_package(benchmark libbenchmark-dev)
endif()

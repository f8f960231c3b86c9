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

# The grader's system-call filter for the programs it runs (grader/sandbox).
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

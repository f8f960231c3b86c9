# `cmake --install` installs the breaker engine for other C++ projects: its headers, the static
# library libcbbreaker.a, a CMake package (find_package(cbbreaker) gives cb::breaker) and a
# pkg-config file (cbbreaker.pc). Only the engine: the lab's programs need the project's files
# around them and are run from the checkout. examples/consumer/ builds against the result, and a
# test does that on every run (tests/package/).
include(CMakePackageConfigHelpers)

set(CB_ENGINE_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/cbbreaker")

install(TARGETS cb_breaker cb_result EXPORT cbbreakerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/breaker/include/cb/breaker DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cb)
install(FILES ${PROJECT_SOURCE_DIR}/support/include/cb/result.h ${PROJECT_SOURCE_DIR}/support/include/cb/thread_safety.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cb)
install(EXPORT cbbreakerTargets NAMESPACE cb:: DESTINATION ${CB_ENGINE_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cbbreakerConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/cbbreakerConfig.cmake
                              INSTALL_DESTINATION ${CB_ENGINE_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cbbreakerConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cbbreakerConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/cbbreakerConfigVersion.cmake
        DESTINATION ${CB_ENGINE_CMAKEDIR})

# Relocatable: the prefix is found from where the .pc file is (lib/pkgconfig -> ../..), so
# `cmake --install --prefix DIR` works for any DIR.
string(REGEX REPLACE "[^/]+" ".." CB_PC_TO_PREFIX "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
configure_file(${CMAKE_CURRENT_LIST_DIR}/cbbreaker.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cbbreaker.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cbbreaker.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

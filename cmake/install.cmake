# Installation: libraries, headers, the CLI, its man page, a pkg-config file
# (tailbone.pc) and a CMake package (find_package(tailbone)).
#
#   cmake --install build [--prefix /usr/local]
#
# Layout (GNUInstallDirs):
#   bin/tailbone
#   include/tailbone/*.h
#   lib/libtailbone.so.0.1.0, libtailbone.so.0, libtailbone.so, libtailbone.a,
#   lib/libtailbone_runtime.a           (the runtime alone: pose, skinning, spring)
#   lib/pkgconfig/tailbone.pc           (pkg-config tailbone)
#   lib/cmake/tailbone/tailboneConfig.cmake, …Version.cmake, …Targets.cmake
#   share/man/man1/tailbone.1
# Both the .pc file and the CMake package are relocatable: they find the
# prefix from their own location, so a staged install (--prefix or DESTDIR)
# works as well as the final one.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(tailbone_shared PROPERTIES EXPORT_NAME tailbone)
set_target_properties(tailbone_static PROPERTIES EXPORT_NAME tailbone_static)
set_target_properties(tailbone_runtime PROPERTIES EXPORT_NAME runtime)

install(TARGETS tailbone_runtime tailbone_static tailbone_shared EXPORT tailboneTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tailbone RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/tailbone DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

# CMake package: tailbone::tailbone (shared), tailbone::tailbone_static,
# tailbone::runtime (the runtime alone, no I/O, no JSON).
set(TB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tailbone)
install(EXPORT tailboneTargets NAMESPACE tailbone:: DESTINATION ${TB_CMAKE_DIR})
configure_package_config_file(cmake/tailboneConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tailboneConfig.cmake INSTALL_DESTINATION ${TB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tailboneConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tailboneConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tailboneConfigVersion.cmake DESTINATION ${TB_CMAKE_DIR})

# pkg-config: prefix found from the .pc file's own folder (lib/pkgconfig).
file(RELATIVE_PATH TB_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TB_PC_TO_PREFIX "${TB_PC_TO_PREFIX}")
string(STRIP "${TB_PC_LIBS_PRIVATE}" TB_PC_LIBS_PRIVATE)
configure_file(cmake/tailbone.pc.in ${CMAKE_CURRENT_BINARY_DIR}/tailbone.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tailbone.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Man page, generated from the commands' --help texts by scripts/man.sh.
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/man.sh $<TARGET_FILE:tailbone> ${PROJECT_VERSION}
          > ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1.tmp ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1
  DEPENDS tailbone ${CMAKE_CURRENT_SOURCE_DIR}/scripts/man.sh
  COMMENT "Generating the man page tailbone.1 from the --help texts")
add_custom_target(man ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The consumer test: install into a staging prefix, then build and run a
# tiny program against it with find_package(tailbone) and with pkg-config.
if(TB_TESTS AND NOT TB_SANITIZE)
  add_test(NAME install_consumer
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/consumer/run.sh ${CMAKE_CURRENT_BINARY_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/tests/tmp/install_consumer)
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
  add_test(NAME man_page COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tests/consumer/man_check.sh
           ${CMAKE_CURRENT_BINARY_DIR}/tailbone.1 $<TARGET_FILE:tailbone>)
  set_tests_properties(man_page PROPERTIES SKIP_RETURN_CODE 77)
endif()

# Install rules of the Saltus package (`cmake --install build --prefix P`):
#   P/bin/saltus                                  the command line (tools/main.cc)
#   P/include/saltus/{saltus,engine,contact,integrators,events,tools}/*.h
#                                                 the headers, all under include/saltus/ so
#                                                 that nothing lands in a generic folder; the
#                                                 exported targets add P/include/saltus to the
#                                                 include path, so #include "saltus/saltus.h"
#   P/lib/libsaltus_*.a                           static libraries (their install(TARGETS ...
#                                                 EXPORT saltusTargets) lines are in each
#                                                 folder's CMakeLists.txt)
#   P/lib/cmake/saltus/                           saltusConfig.cmake, saltusConfigVersion.cmake
#                                                 and the exported targets (saltus::), so that an
#                                                 outside project can find_package(saltus)
#   P/${SALTUS_PYTHON_INSTALL_DIR}/saltus*.so     the Python module and its stubs saltus.pyi
#   P/share/saltus/examples/, P/share/saltus/plots/   scenes, sets and the compare plot script
#                                                 (found by the installed `saltus compare`)
#   P/share/doc/saltus/                           README.md and docs/
# tests/package installs into a scratch prefix and uses all of it.
include(CMakePackageConfigHelpers)
set(SALTUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/saltus)
set(SALTUS_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/saltus)

foreach(dir engine contact integrators events timestepping tools saltus)
  file(GLOB headers ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  install(FILES ${headers} DESTINATION ${SALTUS_INSTALL_INCLUDEDIR}/${dir})
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  PATTERN "api" EXCLUDE PATTERN "Doxyfile" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/saltus/examples PATTERN "CMakeLists.txt" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/tools/plots/compare_plots.py
  DESTINATION ${CMAKE_INSTALL_DATADIR}/saltus/plots)

install(TARGETS saltus_options EXPORT saltusTargets)
install(EXPORT saltusTargets NAMESPACE saltus:: DESTINATION ${SALTUS_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/saltusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/saltusConfig.cmake INSTALL_DESTINATION ${SALTUS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/saltusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/saltusConfig.cmake
  ${PROJECT_BINARY_DIR}/saltusConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/SaltusSiconos.cmake
  DESTINATION ${SALTUS_INSTALL_CMAKEDIR})

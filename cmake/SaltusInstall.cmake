# Install rules of the Saltus package: headers, static libraries (their install(TARGETS ...
# EXPORT saltusTargets) lines are in each folder's CMakeLists.txt), the exported targets under
# the saltus:: namespace, and saltusConfig.cmake + saltusConfigVersion.cmake so that an outside
# project can find_package(saltus) (tests/package checks that).
include(CMakePackageConfigHelpers)
set(SALTUS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/saltus)

foreach(dir engine contact integrators events timestepping tools)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir}
    FILES_MATCHING PATTERN "*.h")
endforeach()

install(TARGETS saltus_options EXPORT saltusTargets)
install(EXPORT saltusTargets NAMESPACE saltus:: DESTINATION ${SALTUS_INSTALL_CMAKEDIR})

if(SALTUS_WITH_HDF5)
  set(SALTUS_CONFIG_HDF5 "find_dependency(HDF5 COMPONENTS C)")
else()
  set(SALTUS_CONFIG_HDF5 "")
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/saltusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/saltusConfig.cmake INSTALL_DESTINATION ${SALTUS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/saltusConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/saltusConfig.cmake
  ${PROJECT_BINARY_DIR}/saltusConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/SaltusSiconos.cmake
  DESTINATION ${SALTUS_INSTALL_CMAKEDIR})

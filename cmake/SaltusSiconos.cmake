# Siconos Numerics without its CMake package: Debian's siconos-config.cmake requires the whole
# Siconos install, rejects version requests and forces C++11, so we find the header and the
# library directly. Its headers carry their own extern "C".
find_path(SICONOS_NUMERICS_INCLUDE_DIR siconos/numerics/LCP_Solvers.h REQUIRED)
find_library(SICONOS_NUMERICS_LIBRARY siconos_numerics REQUIRED)
if(NOT TARGET saltus::siconos_numerics)
  add_library(saltus::siconos_numerics UNKNOWN IMPORTED)
  set_target_properties(saltus::siconos_numerics PROPERTIES
    IMPORTED_LOCATION "${SICONOS_NUMERICS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES
      "${SICONOS_NUMERICS_INCLUDE_DIR}/siconos;${SICONOS_NUMERICS_INCLUDE_DIR}/siconos/numerics")
endif()

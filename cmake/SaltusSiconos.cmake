# Siconos Numerics without its CMake package: Debian's siconos-config.cmake requires the whole
# Siconos install, rejects version requests and forces C++11, so we find the header and the
# library directly. Its headers carry their own extern "C".
#   saltus::siconos_numerics_headers  the headers only: saltus::contact loads the library on
#                                     first use (contact/siconos_loader.cc) by the soname in
#                                     SALTUS_SICONOS_NUMERICS_SONAME, so that a run that solves
#                                     no contact problem with Siconos does not pay for loading it
#                                     and its dependencies (docs/benchmarks.md, "Start-up")
#   saltus::siconos_numerics          headers and library, for programs that call it directly
find_path(SICONOS_NUMERICS_INCLUDE_DIR siconos/numerics/LCP_Solvers.h REQUIRED)
find_library(SICONOS_NUMERICS_LIBRARY siconos_numerics REQUIRED)
set(_saltus_siconos_includes
  "${SICONOS_NUMERICS_INCLUDE_DIR}/siconos;${SICONOS_NUMERICS_INCLUDE_DIR}/siconos/numerics")
if(NOT TARGET saltus::siconos_numerics_headers)
  add_library(saltus::siconos_numerics_headers INTERFACE IMPORTED)
  set_target_properties(saltus::siconos_numerics_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_saltus_siconos_includes}")
endif()
if(NOT TARGET saltus::siconos_numerics)
  add_library(saltus::siconos_numerics UNKNOWN IMPORTED)
  set_target_properties(saltus::siconos_numerics PROPERTIES
    IMPORTED_LOCATION "${SICONOS_NUMERICS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${_saltus_siconos_includes}")
endif()
# The soname (libsiconos_numerics.so.7 on Debian 12) that the dynamic loader resolves, so that
# the library found at configure time and the one loaded at run time have the same ABI version.
get_filename_component(_saltus_siconos_real "${SICONOS_NUMERICS_LIBRARY}" REALPATH)
find_program(SALTUS_OBJDUMP NAMES objdump HINTS "${CMAKE_OBJDUMP}")
execute_process(COMMAND "${SALTUS_OBJDUMP}" -p "${_saltus_siconos_real}"
  OUTPUT_VARIABLE _saltus_siconos_dynamic ERROR_QUIET)
string(REGEX MATCH "SONAME +([^\n ]+)" _saltus_match "${_saltus_siconos_dynamic}")
set(SALTUS_SICONOS_NUMERICS_SONAME "${CMAKE_MATCH_1}")
if(NOT SALTUS_SICONOS_NUMERICS_SONAME)
  message(FATAL_ERROR "Siconos Numerics: no soname found by objdump -p in ${_saltus_siconos_real}")
endif()

# Installs the build tree into a scratch prefix and uses all of it, as a new user would:
#   1. nothing outside P/include/saltus/ among the headers;
#   2. the installed `saltus` command: --version, a run of a shipped example, and the shipped
#      compare sets found from P/share/saltus;
#   3. `import saltus` from P's Python folder, and a short simulation (check_module.py);
#   4. an outside CMake project (project/) built against the installed package and run;
#   5. `pip install --no-build-isolation .` into a scratch folder, reusing this build tree
#      (SALTUS_CMAKE_BUILD_DIR, setup.py), and `import saltus` from there.
# Variables: BUILD_DIR, SOURCE_DIR, WORK_DIR, PYTHON (may be empty: steps 3 and 5 are skipped),
# PYTHON_DIR (the module's folder relative to the prefix).
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. Headers only under include/saltus/.
file(GLOB top RELATIVE ${prefix}/include ${prefix}/include/*)
if(NOT top STREQUAL "saltus")
  message(FATAL_ERROR "include/ holds ${top}; expected only saltus/")
endif()
foreach(header saltus/saltus.h engine/mechanical_system.h events/simulation.h tools/scene.h)
  if(NOT EXISTS ${prefix}/include/saltus/${header})
    message(FATAL_ERROR "missing include/saltus/${header}")
  endif()
endforeach()

# 2. The command line from the prefix.
run(${prefix}/bin/saltus --version)
if(NOT run_output MATCHES "^saltus [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ")
  message(FATAL_ERROR "saltus --version printed: ${run_output}")
endif()
run(${prefix}/bin/saltus run ${prefix}/share/saltus/examples/bouncing_ball.yaml --t-end 0.5
    --out ${WORK_DIR}/run)
if(NOT EXISTS ${WORK_DIR}/run/summary.json)
  message(FATAL_ERROR "saltus run wrote no summary.json")
endif()
execute_process(COMMAND ${prefix}/bin/saltus compare --set no_such_set
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "known: .*joints")
  message(FATAL_ERROR "the installed compare did not list its shipped sets: ${err}")
endif()
if(NOT EXISTS ${prefix}/share/saltus/plots/compare_plots.py OR
   NOT EXISTS ${prefix}/share/doc/saltus/README.md)
  message(FATAL_ERROR "plots script or docs not installed")
endif()

# 3. The Python module from the prefix.
set(check_python ${SOURCE_DIR}/tests/package/check_module.py)
if(PYTHON)
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${PYTHON_DIR} ${PYTHON} ${check_python}
      ${prefix} ${prefix}/share/saltus/examples/bouncing_ball.yaml)
endif()

# 4. An outside CMake project.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/project -B ${WORK_DIR}/build
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
run(${WORK_DIR}/build/package_user)

# 5. pip install . (the files setup.py reads, copied so that the source tree stays clean).
if(PYTHON)
  set(src ${WORK_DIR}/pip_source)
  file(MAKE_DIRECTORY ${src})
  file(COPY ${SOURCE_DIR}/setup.py ${SOURCE_DIR}/pyproject.toml ${SOURCE_DIR}/README.md
            ${SOURCE_DIR}/CMakeLists.txt DESTINATION ${src})
  # Top-level folders as in the source tree: setuptools' package discovery must not take them
  # for packages (a flat layout with several is refused).
  file(MAKE_DIRECTORY ${src}/engine ${src}/saltus)
  run(${CMAKE_COMMAND} -E env SALTUS_CMAKE_BUILD_DIR=${BUILD_DIR} PIP_NO_INDEX=1
      ${PYTHON} -m pip install --no-build-isolation --no-deps --quiet --target ${WORK_DIR}/pip
      ${src})
  run(${CMAKE_COMMAND} -E env PYTHONPATH=${WORK_DIR}/pip ${PYTHON} ${check_python}
      ${WORK_DIR}/pip ${prefix}/share/saltus/examples/bouncing_ball.yaml)
endif()

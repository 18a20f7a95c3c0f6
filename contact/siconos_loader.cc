#include "contact/siconos_loader.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>

// The Siconos declarations become hidden in this translation unit, so that the definitions below
// are too (contact/siconos_loader.h).
#pragma GCC visibility push(hidden)
#include <FrictionContactProblem.h>
#include <LinearComplementarityProblem.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <NumericsVerbose.h>
#include <RollingFrictionContactProblem.h>
#include <SolverOptions.h>
#pragma GCC visibility pop

namespace saltus::contact {
namespace {

std::atomic<bool> loaded{false};

// Siconos' dense stages (fc3d PROX: an LU of W + σI, m = 3 n_c ≤ 900, per Newton iteration) call
// LAPACK through the BLAS it was linked with; Debian's default is OpenBLAS built with pthreads,
// which runs dgetrf on as many threads as there are cores and has its idle workers spin in
// sched_yield. At these sizes the threads do not pay, and on a loaded machine the spinning is
// system time: on the frictional 100-sphere pile (Moreau–Jean, 0 → 0.6 s) perf put 57 % of the
// samples in OpenBLAS and 15 % in the kernel's sched_yield (docs/time-stepping.md). So one BLAS
// thread, set through OpenBLAS' own call when the loaded BLAS is OpenBLAS (a reference BLAS or
// another implementation has no such symbol and is left as it is). The setting is per process:
// it also applies to other users of OpenBLAS in it (e.g. numpy in the Python module).
void SingleThreadedBlas(void* handle) {
  using SetThreads = void(int);
  void* symbol = dlsym(handle, "openblas_set_num_threads");
  if (symbol != nullptr) reinterpret_cast<SetThreads*>(symbol)(1);
}

void* Library() {
  static std::once_flag once;
  static void* handle = nullptr;
  static std::string error;
  std::call_once(once, [] {
    handle = dlopen(SALTUS_SICONOS_NUMERICS_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* message = dlerror();
      error = std::string("Siconos Numerics (") + SALTUS_SICONOS_NUMERICS_SONAME +
              ") could not be loaded: " + (message != nullptr ? message : "unknown error");
    }
    loaded = handle != nullptr;
    if (handle != nullptr) SingleThreadedBlas(handle);
  });
  if (handle == nullptr) throw std::runtime_error(error);
  return handle;
}

// The function `name` of the loaded library, as a pointer of the type of its declaration.
template <class Function>
Function* Resolve(Function* /*declaration*/, const char* name) {
  void* symbol = dlsym(Library(), name);
  if (symbol == nullptr) {
    throw std::runtime_error(std::string("Siconos Numerics (") + SALTUS_SICONOS_NUMERICS_SONAME +
                             ") has no function " + name);
  }
  return reinterpret_cast<Function*>(symbol);
}

}  // namespace

bool SiconosNumericsLoaded() { return loaded; }

void LoadSiconosNumerics() { Library(); }

}  // namespace saltus::contact

using saltus::contact::Resolve;

// Each forwarder resolves its function once (a thread-safe static) and calls it.
#define SALTUS_SICONOS_FORWARD(name) static auto* const real = Resolve(&name, #name)

extern "C" {

int linearComplementarity_driver(LinearComplementarityProblem* problem, double* z, double* w,
                                 SolverOptions* options) {
  SALTUS_SICONOS_FORWARD(linearComplementarity_driver);
  return real(problem, z, w, options);
}

int fc3d_driver(FrictionContactProblem* problem, double* reaction, double* velocity,
                SolverOptions* options) {
  SALTUS_SICONOS_FORWARD(fc3d_driver);
  return real(problem, reaction, velocity, options);
}

int rolling_fc3d_driver(RollingFrictionContactProblem* problem, double* reaction, double* velocity,
                        SolverOptions* options) {
  SALTUS_SICONOS_FORWARD(rolling_fc3d_driver);
  return real(problem, reaction, velocity, options);
}

SolverOptions* solver_options_create(int solver_id) {
  SALTUS_SICONOS_FORWARD(solver_options_create);
  return real(solver_id);
}

void solver_options_delete(SolverOptions* options) {
  SALTUS_SICONOS_FORWARD(solver_options_delete);
  real(options);
}

RawNumericsMatrix* NM_create(NM_types storage, int size0, int size1) {
  SALTUS_SICONOS_FORWARD(NM_create);
  return real(storage, size0, size1);
}

void NM_triplet_alloc(NumericsMatrix* matrix, CS_INT nzmax) {
  SALTUS_SICONOS_FORWARD(NM_triplet_alloc);
  real(matrix, nzmax);
}

void NM_entry(NumericsMatrix* matrix, int i, int j, double value) {
  SALTUS_SICONOS_FORWARD(NM_entry);
  real(matrix, i, j, value);
}

NumericsMatrix* NM_free(NumericsMatrix* matrix) {
  SALTUS_SICONOS_FORWARD(NM_free);
  return real(matrix);
}

void numerics_set_verbose(int mode) {
  SALTUS_SICONOS_FORWARD(numerics_set_verbose);
  real(mode);
}

}  // extern "C"

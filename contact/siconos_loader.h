// Siconos Numerics is loaded on first use, not at program start.
//
// saltus::contact calls ten functions of Siconos Numerics (its LCP and friction-contact drivers,
// solver options and sparse matrices: contact/complementarity.cc). siconos_loader.cc defines those
// ten C functions inside the Saltus libraries, with hidden visibility so that no other library can
// bind to them: each loads libsiconos_numerics by its soname (dlopen) on the first call to any of
// them, looks up the real function once (dlsym) and forwards to it. A run that never solves a
// contact problem with Siconos — a bouncing ball, a mechanism without contacts — therefore does
// not load Siconos and the ~25 libraries it depends on (MUMPS, Scotch, OpenBLAS, gfortran).
// A missing or incompatible library is reported by a std::runtime_error naming the soname and the
// loader's message, at the first call.
#pragma once

namespace saltus::contact {

// Whether Siconos Numerics has been loaded into this process (by a call through the loader).
bool SiconosNumericsLoaded();

// Loads Siconos Numerics now, as the first call through the loader would (a no-op once loaded):
// for a program that must not pay the loading inside a timed region (bench/). Throws
// std::runtime_error as that first call would.
void LoadSiconosNumerics();

}  // namespace saltus::contact

// Generated contact scenes (issue 4): the YAML text of spatial scenes whose size is a
// parameter, for `saltus generate` and the benchmarks.
//
// SpherePileYaml(n): n spheres (radius 0.05 m, mass 0.1 kg, J = 2/5 m r^2) released at rest on a
// grid (5 x 5 per layer, spacing 0.12 m, layers 0.12 m apart from z = 0.1 m, each centre
// shifted by a deterministic offset of at most 1 cm so that no two columns are exactly
// aligned) into an open box of inner half width 0.3 m: the floor z = 0 and four wall planes
// x = +-0.3, y = +-0.3, all fixed to the ground. Newton restitution e = 0.5, frictionless.
// Contact rows: every sphere pair and every sphere with each of the 5 planes (the scene's
// default "all pairs"): n (n - 1) / 2 + 5 n rows.
#pragma once

#include <string>

namespace saltus::tools {

// Throws std::invalid_argument for n < 1. `t_end` (s, > 0) is the simulated time.
std::string SpherePileYaml(int n, double t_end = 2.0);

}  // namespace saltus::tools

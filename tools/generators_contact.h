// Generated contact scenes (issue 4): the YAML text of spatial scenes whose size is a
// parameter, for `saltus generate` and the benchmarks.
//
// SpherePileYaml(n): n spheres (radius 0.05 m, mass 0.1 kg, J = 2/5 m r^2) released at rest on a
// square grid of k x k spheres per layer, spacing 0.12 m, layers 0.12 m apart from z = 0.1 m,
// each centre shifted by a deterministic offset of at most 1 cm so that no two columns are
// exactly aligned, into an open box of inner half width k · 0.06 m: the floor z = 0 and four
// wall planes x = ±k·0.06, y = ±k·0.06, all fixed to the ground. Newton restitution e = 0.5,
// frictionless.
//
// Layout for large n (SpherePileLayout): k = max(5, ceil(sqrt(n / 4))), so the box footprint
// grows with n and the pile is at most 4 layers deep (top layer at z ≤ 0.46 m, impact speeds
// ≤ sqrt(2 g 0.41) ≈ 2.8 m/s whatever n): n ≤ 100 keeps the 5 x 5 grid in the 0.6 m box
// (the checked-in examples/spatial/sphere_pile_20.yaml); n = 1000 gives a 16 x 16 grid, 3.9
// layers, in a 1.92 m box. A fixed 0.6 m box would make n = 1000 a 40-layer column 4.8 m tall
// whose top spheres land at 9.7 m/s on a pile already resting: every sphere of the column
// takes part in the impacts of every layer above it (docs/scene-format.md, "Generated scenes").
//
// Contact rows: every sphere pair and every sphere with each of the 5 planes (the scene's
// default "all pairs"): n (n - 1) / 2 + 5 n rows.
#pragma once

#include <string>

namespace saltus::tools {

// Largest n of SpherePileYaml (issue 4: "N a parameter, up to 1000").
constexpr int kMaxPileSpheres = 1000;

struct SpherePileLayout {
  int per_row = 5;          // k: spheres per row and per column of a layer
  int layers = 1;           // ceil(n / k²)
  double half_width = 0.3;  // inner half width of the box (m) = k · spacing / 2
};

// Throws std::invalid_argument for n < 1 or n > kMaxPileSpheres.
SpherePileLayout PileLayout(int n);

// Throws std::invalid_argument for n outside [1, kMaxPileSpheres]. `t_end` (s, > 0) is the
// simulated time.
std::string SpherePileYaml(int n, double t_end = 2.0);

}  // namespace saltus::tools

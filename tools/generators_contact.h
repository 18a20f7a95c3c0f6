// Generated contact scenes (issue 4): the YAML text of spatial scenes whose size is a
// parameter, for `saltus generate` and the benchmarks.
//
// SpherePileYaml(n): n spheres (radius 0.05 m, mass 0.1 kg, J = 2/5 m r^2) released at rest on a
// square grid of k x k spheres per layer, spacing 0.12 m, layers 0.12 m apart from z = 0.1 m,
// each centre shifted by a deterministic offset of at most 1 cm so that no two columns are
// exactly aligned, into an open box of inner half width w = k · 0.06 m + 0.0125 m, the grid
// centred in it: the floor z = 0 and four wall planes x = ±w, y = ±w, all fixed to the ground.
// Newton restitution e = 0.5, frictionless.
// The box width 2w = (1.2 k + 0.25) diameters is never a whole number of diameters, so no
// straight row of spheres fits exactly between two walls. Without the 0.0125 m (2w = 6
// diameters for k = 5) the piles settle into such rows: six spheres on the floor wedged between
// wall_xm and wall_xp with all seven gaps closed are a straight chain that any transverse load
// must compress (a toggle: the self-stress of the chain makes W = G M⁻¹ Gᵀ singular up to the
// squared misalignment, ~2e-12 of its largest eigenvalue, and the acceleration problem needs
// forces ~ m g / misalignment or has no solution at all once rounded). The seeded piles N = 50
// stopped there (docs/time-stepping.md).
//
// Layout for large n (SpherePileLayout): k = max(5, ceil(sqrt(n / 4))), so the box footprint
// grows with n and the pile is at most 4 layers deep (top layer at z ≤ 0.46 m, impact speeds
// ≤ sqrt(2 g 0.41) ≈ 2.8 m/s whatever n): n ≤ 100 keeps the 5 x 5 grid in the 0.625 m box
// (the checked-in examples/spatial/sphere_pile_20.yaml); n = 1000 gives a 16 x 16 grid, 3.9
// layers, in a 1.945 m box. A fixed 0.6 m box would make n = 1000 a 40-layer column 4.8 m tall
// whose top spheres land at 9.7 m/s on a pile already resting: every sphere of the column
// takes part in the impacts of every layer above it (docs/scene-format.md, "Generated scenes").
//
// Contact rows: every sphere pair and every sphere with each of the 5 planes (the scene's
// default "all pairs"): n (n - 1) / 2 + 5 n rows.
//
// Seeded piles (`saltus generate sphere_pile --n N --seed S`): the offsets of the centres from
// their grid points and the initial velocities are drawn from std::mt19937_64 seeded with S,
// six draws per sphere in sphere order: dx, dy, dz, then vx, vy, vz, each draw x mapped to
// u = (x >> 11) · 2⁻⁵³ ∈ [0, 1) (the same on every platform), offsets (2u − 1) · 1 cm and
// velocities (2u − 1) · kSeedVelocity m/s per component (angular velocities zero). The offsets
// keep the bound of the unseeded layout (≤ 1 cm per coordinate), so no two spheres and no sphere
// and wall overlap at the start. Without a seed the pile is the historical one (golden-ratio
// offsets, released at rest; examples/spatial/sphere_pile_20.yaml).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace saltus::tools {

// Largest n of SpherePileYaml (issue 4: "N a parameter, up to 1000").
constexpr int kMaxPileSpheres = 1000;

struct SpherePileLayout {
  int per_row = 5;             // k: spheres per row and per column of a layer
  int layers = 1;              // ceil(n / k²)
  double half_width = 0.3125;  // inner half width of the box (m) = k · spacing / 2 + 0.0125
};

// Throws std::invalid_argument for n < 1 or n > kMaxPileSpheres.
SpherePileLayout PileLayout(int n);

// Largest initial velocity component of a seeded pile (m/s).
constexpr double kSeedVelocity = 0.5;

// Contact laws of a generated pile beyond the frictionless default (`saltus generate sphere_pile
// --friction MU --rolling-friction L`): the simulation-wide keys `friction: μ` (Coulomb, every
// pair) and `rolling_friction: μ_R` (a length in m, docs/friction.md "Rolling and spinning
// resistance": |rolling torque| ≤ μ_R λ_N; every pair has a sphere, so every pair gets it),
// written into the scene's `simulation:` section when set. Rolling resistance needs μ > 0 and
// the Moreau–Jean integrator (the scene's dopri5 refuses it at the key's line: run with
// `--integrator moreau_jean --step H`).
struct PileContactLaw {
  std::optional<double> friction;          // μ ≥ 0, finite
  std::optional<double> rolling_friction;  // μ_R ≥ 0 (m), finite; needs friction > 0
};

// Throws std::invalid_argument for n outside [1, kMaxPileSpheres], or a contact law value that is
// negative or not finite, or rolling_friction without friction > 0. `t_end` (s, > 0) is the
// simulated time; `seed` jitters positions and velocities (see "Seeded piles").
std::string SpherePileYaml(int n, double t_end = 2.0,
                           std::optional<std::uint64_t> seed = std::nullopt,
                           const PileContactLaw& law = {});

}  // namespace saltus::tools

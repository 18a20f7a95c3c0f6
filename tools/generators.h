// Scene generators: spatial benchmark mechanisms whose size N is a parameter, returned as scene
// YAML text (docs/scene-format.md, `dimension: 3`) that LoadSceneFile / ParseScene read back.
// `saltus generate NAME --n N [--seed S] [--out FILE]` prints or writes them (tools/cli.h).
//
//   n_chain        Haug's N-link chain (half-implicit seed; code: github uwsbel/
//                  sbel-reproducibility, 2022/HalfImplicit_JCND/SimEngineMBD/example_models/
//                  N_pendulum.py; /work/shared/BENCHMARKS.md): N steel bars of 2 m, 0.05 m square
//                  section, density 7800 (m = 39 kg; about the long axis m w²/6, transverse
//                  m (w² + L²)/12), hanging along −z from the origin, joined by spherical joints
//                  (the first to the ground), gravity 9.81·(0.07169162, 0.68473815, 0.72525442)
//                  (the source's tilted unit vector). Each bar spins about its own axis at a rate
//                  drawn uniformly in [−10, 10] rad/s (the source does not seed it): the k-th
//                  draw of std::mt19937_64 seeded with `seed` (default 1) maps to
//                  −10 + 20·(x >> 11)·2⁻⁵³, so the scene is the same on every platform.
//                  Topology: N bodies, N joints, no loop, 3N rows, 3N degrees of freedom.
//   excited_chain  Chain of N mathematical pendulums with a harmonically excited suspension
//                  point (Arnold, Fuchs, Führer, "Efficient corrector iteration for DAE time
//                  integration in multibody dynamics", Sec. 4.2.1, seeds/arnold-efficient-
//                  corrector-iteration.txt): point masses m = 1 kg on massless rods l = 1 m,
//                  gravity −9.81 y, suspension point x(t) = 2 + 0.3 sin ωt, y(t) = 0.2 sin ωt with
//                  ω = 2π·0.05 rad/s (the paper's "ω = 0.05 Hz"). The suspension moves on the
//                  straight line through (2, 0, 0) along (0.3, 0.2, 0), so it is a body on a
//                  prismatic joint with the ground whose slide is driven (sine profile,
//                  amplitude √0.13 m). Pendulum k is a body whose frame is at its upper pivot and
//                  whose centre of mass is 1 m below it; revolute joints about z (the motion is
//                  planar, as in the paper, with N angle coordinates). A point mass has no
//                  inertia, a spatial body needs one: 1e-6 kg m² about the centre of mass, a
//                  relative change of 1e-6 against m l² = 1 kg m². The chain starts hanging
//                  straight down and translating with the suspension's initial velocity, so all
//                  α_i(0) = 0 and α̇_i(0) = 0. Topology: N + 1 bodies, N + 1 joints, 1 driver,
//                  5N + 6 rows, N degrees of freedom.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/generators_contact.h"

namespace saltus::tools {

// The names GenerateScene accepts, in order.
const std::vector<std::string>& GeneratorNames();

// Scene YAML of generator `name` with size n (N ≥ 1 and N ≤ kMaxGeneratedBodies) and random seed
// (n_chain: default 1; sphere_pile: jittered positions and velocities, none without a seed,
// tools/generators_contact.h; excited_chain ignores it). The text starts with a comment saying
// how it was generated. `law`: sphere_pile's friction and rolling resistance
// (tools/generators_contact.h, PileContactLaw). Throws std::invalid_argument naming the generator,
// the bad size or value, or a contact law given to another generator than sphere_pile.
std::string GenerateScene(const std::string& name, int n,
                          std::optional<std::uint64_t> seed = std::nullopt,
                          const PileContactLaw& law = {});

constexpr int kMaxGeneratedBodies = 100000;

std::string NChainScene(int n, std::uint64_t seed = 1);
std::string ExcitedChainScene(int n);

// The spin rates of n_chain (rad/s), k-th entry for bar k + 1, as described above.
std::vector<double> NChainSpinRates(int n, std::uint64_t seed);

}  // namespace saltus::tools

// The N-link chain of /work/shared/BENCHMARKS.md, built in code for the sparse-algebra test and
// bench/n_chain_scaling.cc: N bars 2 m long, 0.05 m square section, 39 kg (7800 kg/m³), joined by
// spherical joints, the first to the ground at the origin, hanging along −z; each spins about its
// own axis at a rate drawn uniformly in [−10, 10] rad/s (std::mt19937 with the given seed: the
// source does not seed it); gravity 9.81 · (0.07169162, 0.68473815, 0.72525442) m/s².
// Body frames at the centres of mass; the initial state is consistent (ω ∥ bar axis, joints on it).
#pragma once

#include <memory>
#include <random>
#include <string>

#include "engine/spatial_model.h"

namespace saltus::engine::testing {

// com ≠ 0 (tests only) moves each centre of mass off the body frame (body coordinates), which
// couples translation and rotation in M (non-constant 6 × 6 blocks; an off-axis com also couples
// the spin about the bar axis, which the joint rows alone do not touch).
inline std::shared_ptr<SpatialMultibodySystem> MakeNChain(
    int n, unsigned seed = 1, const Eigen::Vector3d& com = Eigen::Vector3d::Zero()) {
  constexpr double kLength = 2.0, kSide = 0.05, kMass = 39.0;
  SpatialModelBuilder builder;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> rate(-10.0, 10.0);
  const double i_perp = kMass * (kLength * kLength + kSide * kSide) / 12.0;  // box, about x and y
  const double i_axis = kMass * (2.0 * kSide * kSide) / 12.0;                // about the axis z
  for (int i = 0; i < n; ++i) {
    SpatialBody body;
    body.name = "bar" + std::to_string(i);
    body.mass = kMass;
    body.inertia = Eigen::Vector3d(i_perp, i_perp, i_axis).asDiagonal();
    body.com = com;
    body.position = Eigen::Vector3d(0.0, 0.0, -kLength * (i + 0.5));
    body.angular_velocity = Eigen::Vector3d(0.0, 0.0, rate(rng));
    builder.AddBody(body);
    SpatialJoint joint;
    joint.name = "ball" + std::to_string(i);
    joint.type = SpatialJointType::kSpherical;
    joint.body_a = i == 0 ? kGround : i - 1;
    joint.body_b = i;
    joint.point_a = i == 0 ? Eigen::Vector3d::Zero() : Eigen::Vector3d(0.0, 0.0, -0.5 * kLength);
    joint.point_b = Eigen::Vector3d(0.0, 0.0, 0.5 * kLength);
    builder.AddJoint(joint);
  }
  builder.SetGravity(9.81 * Eigen::Vector3d(0.07169162, 0.68473815, 0.72525442));
  return std::make_shared<SpatialMultibodySystem>(builder.Build());
}

}  // namespace saltus::engine::testing

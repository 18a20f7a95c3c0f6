// Where the force of a unilateral contact row acts, for output (the contact points and force
// arrows of `saltus run --vtk` and --hdf5, tools/contact_forces.h).
//
// The witness points x_a on side a and x_b on side b are the closest points of the two shapes
// (x_b − x_a = g n, g the gap, n the unit normal from a to b); at contact (g = 0) they coincide.
// The contact point is their midpoint; the normal force of the row on body b is +λ n, on body a
// −λ n (Haddouni et al. 2017, eq. 1: G_αᵀ λ_α with G_α = ∂g_α/∂q along n).
#pragma once

#include <Eigen/Dense>

namespace saltus::contact {

struct ContactSite {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();    // world; planar contacts have z = 0
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  // world, unit, from side a to side b
  int body_a = -1, body_b = -1;                       // engine::kGround (−1) for the ground
  // First velocity column of each side's body (its translational velocity, world frame; 3 per
  // planar body, 6 per spatial body), −1 for the ground: the translational part of any row's
  // G on that body is the direction of that row's force on it.
  int column_a = -1, column_b = -1;
};

}  // namespace saltus::contact

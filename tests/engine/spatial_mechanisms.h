// Spatial benchmark mechanisms shared by the spatial tests (header-only test helpers).
//
// Rods have their body frame at the centre of mass with world-aligned axes at the initial
// configuration; a rod of mass m, length L and square section w along body axis k has
// J_kk = m w²/6 and the two transverse moments m (L² + w²)/12.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <string>

#include "engine/rotation.h"
#include "engine/spatial_model.h"

namespace saltus::engine::testing {

inline SpatialBody Rod(const std::string& name, double m, double L, double w, int axis,
                       const Eigen::Vector3d& centre) {
  SpatialBody body;
  body.name = name;
  body.mass = m;
  body.inertia = Eigen::Matrix3d::Identity() * m * (L * L + w * w) / 12.0;
  body.inertia(axis, axis) = m * w * w / 6.0;
  body.position = centre;
  return body;
}

inline SpatialJoint Revolute(const std::string& name, int a, int b, const Eigen::Vector3d& pa,
                             const Eigen::Vector3d& pb, const Eigen::Vector3d& axis) {
  SpatialJoint joint;
  joint.name = name;
  joint.type = SpatialJointType::kRevolute;
  joint.body_a = a;
  joint.body_b = b;
  joint.point_a = pa;
  joint.point_b = pb;
  joint.axis_a = joint.axis_b = axis;
  return joint;
}

// IFToMM A02 with N = 2 ("double four-bar"): three vertical cranks of 1 m pivoted on the ground
// at x = 0, 1, 2 and two horizontal couplers of 1 m joining their tops; bars 1 kg (thin: square
// section 0.01 m); gravity −9.81 ŷ; revolutes about z. Initial velocity: the top of the first
// crank (B0) moves at 1 m/s along +x, i.e. every crank turns at −1 rad/s and the couplers
// translate. Planar, modelled with spatial bodies: 35 rows, rank 29 (redundant), 1 DOF.
inline std::shared_ptr<SpatialMultibodySystem> DoubleFourBar() {
  SpatialModelBuilder builder;
  const double w = 0.01;
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ();
  int crank[3], coupler[2];
  for (int k = 0; k < 3; ++k) {
    SpatialBody body = Rod("crank" + std::to_string(k), 1.0, 1.0, w, 1, {1.0 * k, 0.5, 0.0});
    body.velocity = {0.5, 0.0, 0.0};
    body.angular_velocity = {0.0, 0.0, -1.0};
    crank[k] = builder.AddBody(body);
  }
  for (int k = 0; k < 2; ++k) {
    SpatialBody body = Rod("coupler" + std::to_string(k), 1.0, 1.0, w, 0, {k + 0.5, 1.0, 0.0});
    body.velocity = {1.0, 0.0, 0.0};
    coupler[k] = builder.AddBody(body);
  }
  for (int k = 0; k < 3; ++k) {
    builder.AddJoint(Revolute("O" + std::to_string(k), kGround, crank[k], {1.0 * k, 0.0, 0.0},
                              {0.0, -0.5, 0.0}, z));
  }
  for (int k = 0; k < 2; ++k) {
    builder.AddJoint(Revolute("B" + std::to_string(k) + "L", crank[k], coupler[k], {0.0, 0.5, 0.0},
                              {-0.5, 0.0, 0.0}, z));
    builder.AddJoint(Revolute("B" + std::to_string(k + 1) + "R", coupler[k], crank[k + 1],
                              {0.5, 0.0, 0.0}, {0.0, 0.5, 0.0}, z));
  }
  builder.SetGravity({0.0, -9.81, 0.0});
  return std::make_shared<SpatialMultibodySystem>(builder.Build());
}

// An orthogonal Bricard linkage (6R, equal links a = 1 m, twists 90°, offsets 0), the
// redundant mechanism of IFToMM A04: the loop runs along six edges of the unit cube,
// O(0,0,0) → P1(1,0,0) → P2(1,1,0) → P3(1,1,1) → P4(0,1,1) → P5(0,0,1) → O, the ground being
// the link O–P1 and the five rods (1 kg, 1 m, 0.1 m square section) the others. Each revolute
// axis is perpendicular to its two links (the cross product of the incoming and outgoing edge).
// Released at rest under gravity −9.81 ŷ. 30 rows, rank 29, 1 DOF. (The IFToMM library's
// drawing uses its own coordinates; this is the same linkage type and dimensions.)
inline std::shared_ptr<SpatialMultibodySystem> Bricard() {
  const Eigen::Vector3d P[6] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {0, 1, 1}, {0, 0, 1}};
  SpatialModelBuilder builder;
  int rod[5];
  for (int k = 0; k < 5; ++k) {
    const Eigen::Vector3d from = P[k + 1], to = P[(k + 2) % 6];
    Eigen::Index axis = 0;
    (to - from).cwiseAbs().maxCoeff(&axis);
    rod[k] = builder.AddBody(Rod("rod" + std::to_string(k + 1), 1.0, 1.0, 0.1,
                                 static_cast<int>(axis), 0.5 * (from + to)));
  }
  for (int k = 0; k < 6; ++k) {
    // Joint at vertex P[k] between the link ending there and the link starting there.
    const Eigen::Vector3d in = P[k] - P[(k + 5) % 6], out = P[(k + 1) % 6] - P[k];
    const int a = k == 0 ? rod[4] : (k == 1 ? kGround : rod[k - 2]);
    const int b = k == 0 ? kGround : rod[k - 1];
    auto centre_of = [&](int body) {
      return body == kGround ? Eigen::Vector3d::Zero()
                             : Eigen::Vector3d(0.5 * (P[body + 1] + P[(body + 2) % 6]));
    };
    builder.AddJoint(Revolute("R" + std::to_string(k), a, b, P[k] - centre_of(a),
                              P[k] - centre_of(b), in.cross(out)));
  }
  builder.SetGravity({0.0, -9.81, 0.0});
  return std::make_shared<SpatialMultibodySystem>(builder.Build());
}

}  // namespace saltus::engine::testing

// Shapes, poses and a two-body model shared by the spatial contact tests.
#pragma once

#include <Eigen/Geometry>
#include <memory>

#include "contact/shapes.h"
#include "engine/spatial_model.h"

namespace saltus::contact::testing {

inline Eigen::Isometry3d Pose(const Eigen::Vector3d& p,
                              const Eigen::Matrix3d& R = Eigen::Matrix3d::Identity()) {
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  X.linear() = R;
  X.translation() = p;
  return X;
}

inline Eigen::Matrix3d Rz(double a) {
  return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix();
}
inline Eigen::Matrix3d Rx(double a) {
  return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix();
}

// A four-sided pyramid surface (apex up): faces, edges of dihedral angle < 90° and vertices.
inline TriangleMesh Pyramid() {
  TriangleMesh m;
  m.vertices = {
      {-0.2, -0.2, 0.0}, {0.2, -0.2, 0.0}, {0.2, 0.2, 0.0}, {-0.2, 0.2, 0.0}, {0.0, 0.0, 0.12}};
  m.triangles = {{0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
  return m;
}

// The cube [−s, s]³ as a convex mesh (12 triangles, outward).
inline TriangleMesh Cube(double s) {
  TriangleMesh m;
  for (int i = 0; i < 8; ++i) {
    m.vertices.emplace_back((i & 1) ? s : -s, (i & 2) ? s : -s, (i & 4) ? s : -s);
  }
  m.triangles = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
  return m;
}

// Two free bodies "a" and "b" (unit masses, diagonal inertias), b's centre of mass at com_b.
inline std::shared_ptr<const engine::SpatialModel> TwoFreeBodies(
    const Eigen::Vector3d& com_b = Eigen::Vector3d::Zero()) {
  engine::SpatialModelBuilder builder;
  engine::SpatialBody a, b;
  a.name = "a";
  b.name = "b";
  a.inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
  b.inertia = Eigen::Vector3d(0.05, 0.02, 0.03).asDiagonal();
  b.com = com_b;
  builder.AddBody(a);
  builder.AddBody(b);
  return builder.Build();
}

}  // namespace saltus::contact::testing

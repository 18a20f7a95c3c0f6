// Rotations of spatial bodies: unit quaternions and the exponential map.
//
// A unit quaternion Q = (w, x, y, z) (scalar first, as stored in q) gives the rotation matrix
// R(Q) that maps body-frame vectors to the world frame. With the body-frame angular velocity ω
// the kinematics is Q̇ = ½ Q ⊗ (0, ω), and the exact flow for constant ω over a time h is
//
//   Q(h) = Q ⊗ exp(h ω / 2),   exp(φ/2 · n) = (cos(φ/2), sin(φ/2) n),  φ = h‖ω‖, n = ω/‖ω‖
//
// (the exponential map of SO(3) lifted to unit quaternions; e.g. Hairer, Lubich & Wanner,
// Geometric Numerical Integration, 2nd ed., Sec. IV.8 and VII.5). The product of two unit
// quaternions is unit up to round-off, so positions updated through the exponential map keep
// ‖Q‖ = 1 to a few ε per update without renormalization.
#pragma once

#include <Eigen/Dense>

namespace saltus::engine {

// [a]× such that [a]× b = a × b.
Eigen::Matrix3d Skew(const Eigen::Vector3d& a);

// R(Q) for a unit quaternion Q = (w, x, y, z) (4); Q is used as given (not normalized).
Eigen::Matrix3d QuaternionToRotation(const Eigen::Vector4d& Q);

// The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method; w ≥ 0).
Eigen::Vector4d RotationToQuaternion(const Eigen::Matrix3d& R);

// Hamilton product a ⊗ b of quaternions (w, x, y, z).
Eigen::Vector4d QuaternionMultiply(const Eigen::Vector4d& a, const Eigen::Vector4d& b);

// exp(θ/2) for a rotation vector θ (3): (cos(‖θ‖/2), sin(‖θ‖/2) θ/‖θ‖), with the series of
// sin(x/2)/x near 0 so that it is accurate to round-off for every θ.
Eigen::Vector4d QuaternionExp(const Eigen::Vector3d& theta);

// The rotation vector θ of a unit quaternion, ‖θ‖ ∈ [0, π] (inverse of QuaternionExp).
Eigen::Vector3d QuaternionLog(const Eigen::Vector4d& Q);

}  // namespace saltus::engine

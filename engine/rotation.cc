#include "engine/rotation.h"

#include <cmath>

namespace saltus::engine {

Eigen::Matrix3d Skew(const Eigen::Vector3d& a) {
  Eigen::Matrix3d S;
  S << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return S;
}

Eigen::Matrix3d QuaternionToRotation(const Eigen::Vector4d& Q) {
  const double w = Q(0), x = Q(1), y = Q(2), z = Q(3);
  Eigen::Matrix3d R;
  R << 1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
      2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
      2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y);
  return R;
}

Eigen::Vector4d RotationToQuaternion(const Eigen::Matrix3d& R) {
  // Shepperd: pick the largest of 4w², 4x², 4y², 4z² to divide by.
  const double trace = R.trace();
  Eigen::Vector4d Q;
  if (trace >= R(0, 0) && trace >= R(1, 1) && trace >= R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + trace);  // 4w
    Q << 0.25 * s, (R(2, 1) - R(1, 2)) / s, (R(0, 2) - R(2, 0)) / s, (R(1, 0) - R(0, 1)) / s;
  } else if (R(0, 0) >= R(1, 1) && R(0, 0) >= R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(0, 0) - R(1, 1) - R(2, 2));  // 4x
    Q << (R(2, 1) - R(1, 2)) / s, 0.25 * s, (R(0, 1) + R(1, 0)) / s, (R(0, 2) + R(2, 0)) / s;
  } else if (R(1, 1) >= R(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + R(1, 1) - R(0, 0) - R(2, 2));  // 4y
    Q << (R(0, 2) - R(2, 0)) / s, (R(0, 1) + R(1, 0)) / s, 0.25 * s, (R(1, 2) + R(2, 1)) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + R(2, 2) - R(0, 0) - R(1, 1));  // 4z
    Q << (R(1, 0) - R(0, 1)) / s, (R(0, 2) + R(2, 0)) / s, (R(1, 2) + R(2, 1)) / s, 0.25 * s;
  }
  if (Q(0) < 0.0) Q = -Q;
  return Q / Q.norm();
}

Eigen::Vector4d QuaternionMultiply(const Eigen::Vector4d& a, const Eigen::Vector4d& b) {
  return {a(0) * b(0) - a(1) * b(1) - a(2) * b(2) - a(3) * b(3),
          a(0) * b(1) + a(1) * b(0) + a(2) * b(3) - a(3) * b(2),
          a(0) * b(2) - a(1) * b(3) + a(2) * b(0) + a(3) * b(1),
          a(0) * b(3) + a(1) * b(2) - a(2) * b(1) + a(3) * b(0)};
}

Eigen::Vector4d QuaternionExp(const Eigen::Vector3d& theta) {
  const double phi = theta.norm();
  // Below φ = 1e-3 the series are exact to round-off and spare the trigonometric calls (a body
  // that does not turn, e.g. a frictionless sphere, takes this path at every stage):
  //   sin(φ/2)/φ = 1/2 − φ²/48 + φ⁴/3840   (next term φ⁶/645120 < 2e-24),
  //   cos(φ/2)   = 1 − φ²/8 + φ⁴/384        (next term φ⁶/46080 < 3e-23).
  Eigen::Vector4d Q;
  if (phi < 1e-3) {
    const double phi2 = phi * phi;
    Q(0) = 1.0 - phi2 / 8.0 + phi2 * phi2 / 384.0;
    Q.tail<3>() = (0.5 - phi2 / 48.0 + phi2 * phi2 / 3840.0) * theta;
  } else {
    Q(0) = std::cos(0.5 * phi);
    Q.tail<3>() = (std::sin(0.5 * phi) / phi) * theta;
  }
  return Q;
}

Eigen::Vector3d QuaternionLog(const Eigen::Vector4d& Q_in) {
  const Eigen::Vector4d Q = Q_in(0) < 0.0 ? Eigen::Vector4d(-Q_in) : Q_in;
  const double s = Q.tail<3>().norm();
  if (s == 0.0) return Eigen::Vector3d::Zero();
  const double phi = 2.0 * std::atan2(s, Q(0));
  return (phi / s) * Q.tail<3>();
}

}  // namespace saltus::engine

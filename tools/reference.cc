#include "tools/reference.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "engine/spatial_model.h"
#include "tools/json_writer.h"

namespace saltus::tools {

namespace {

// t_k lies on the grid k·Δ when |t_k/Δ − round(t_k/Δ)| ≤ this (relative round-off of the grid
// and of %.17g text).
constexpr double kGridTolerance = 1e-6;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) {
    while (!field.empty() && (field.back() == '\r' || field.back() == ' ')) field.pop_back();
    while (!field.empty() && field.front() == ' ') field.erase(field.begin());
    fields.push_back(field);
  }
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

bool ParseNumber(const std::string& text, double* x) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, *x);
  return !text.empty() && ec == std::errc() && end == last && std::isfinite(*x);
}

// Index of the position coordinate called `name`, or -1.
int PositionIndex(const engine::MechanicalSystem& system, const std::string& name) {
  for (int i = 0; i < system.nq(); ++i) {
    if (system.PositionName(i) == name) return i;
  }
  return -1;
}

}  // namespace

std::vector<double> ReferenceTimes(double t_end, double step) {
  if (!(step > 0) || !std::isfinite(t_end) || t_end < 0) {
    throw std::invalid_argument("reference times: step must be > 0 and t_end >= 0");
  }
  std::vector<double> times;
  for (long k = 0;; ++k) {
    const double t = static_cast<double>(k) * step;
    if (t > t_end + 1e-9 * step) break;
    times.push_back(t);
  }
  return times;
}

ReferenceSolution LoadReferenceFile(const std::string& path, const engine::MechanicalSystem& system,
                                    double t_end, double step) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the reference file");
  const auto fail = [&](int line, const std::string& what) {
    return std::invalid_argument(path + ":" + std::to_string(line) + ": " + what);
  };
  ReferenceSolution ref;
  ref.how = "file " + path;
  std::string line;
  if (!std::getline(in, line)) throw fail(1, "empty reference file (expected a header t,...)");
  const std::vector<std::string> header = SplitCsv(line);
  if (header.size() < 2 || header[0] != "t") {
    throw fail(1, "the header must be t followed by position names (e.g. t,ball.y)");
  }
  for (std::size_t j = 1; j < header.size(); ++j) {
    const int column = PositionIndex(system, header[j]);
    if (column < 0) {
      throw fail(1, "column '" + header[j] + "' is not a position coordinate of the scene");
    }
    if (std::find(ref.columns.begin(), ref.columns.end(), column) != ref.columns.end()) {
      throw fail(1, "column '" + header[j] + "' is given twice");
    }
    ref.names.push_back(header[j]);
    ref.columns.push_back(column);
  }
  std::vector<std::vector<double>> rows;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> fields = SplitCsv(line);
    if (fields.size() != header.size()) {
      throw fail(number, "expected " + std::to_string(header.size()) + " values, got " +
                             std::to_string(fields.size()));
    }
    std::vector<double> row(fields.size());
    for (std::size_t j = 0; j < fields.size(); ++j) {
      if (!ParseNumber(fields[j], &row[j])) {
        throw fail(number, "'" + fields[j] + "' is not a finite number");
      }
    }
    if (!ref.times.empty() && !(row[0] > ref.times.back())) {
      throw fail(number, "times must be increasing");
    }
    if (row[0] < 0) throw fail(number, "time " + FormatDouble(row[0]) + " is negative");
    if (row[0] > t_end * (1 + 1e-12)) continue;  // past the simulated span (t_end overridden)
    ref.times.push_back(row[0]);
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw fail(number, "no reference values");
  if (step <= 0) {
    if (rows.size() < 2) throw fail(number, "one row: give the grid step (reference: step)");
    step = ref.times[1] - ref.times[0];
  }
  ref.step = step;
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double ratio = ref.times[k] / step;
    if (std::abs(ratio - std::round(ratio)) > kGridTolerance) {
      throw fail(static_cast<int>(k) + 2, "time " + FormatDouble(ref.times[k]) +
                                              " is not on the grid k*" + FormatDouble(step));
    }
  }
  ref.values.resize(static_cast<Eigen::Index>(rows.size()),
                    static_cast<Eigen::Index>(ref.names.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    for (std::size_t j = 0; j < ref.names.size(); ++j) {
      ref.values(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = rows[k][j + 1];
    }
  }
  return ref;
}

std::vector<std::string> AnalyticReferenceNames() {
  return {"bouncing_disk", "free_body", "slider_crank", "spinning_top"};
}

namespace {

// The bouncing disk (header comment). Normal coordinate s (gap) and its rate at t.
struct Bounce {
  double s0, sdot0, a, e;
  // Gap at time t ≥ 0.
  double Gap(double t) const {
    double t0 = 0, s = s0, sdot = sdot0;
    for (int impact = 0; impact < 100000; ++impact) {
      // Root of s + sdot τ + a τ²/2 = 0 with τ > 0 (a < 0, s ≥ 0).
      const double disc = sdot * sdot - 2 * a * s;
      const double tau = (-sdot - std::sqrt(disc)) / a;
      if (t <= t0 + tau) {
        const double dt = t - t0;
        return s + sdot * dt + 0.5 * a * dt * dt;
      }
      t0 += tau;
      const double sdot_minus = sdot + a * tau;
      sdot = -e * sdot_minus;
      s = 0;
      // Flights shorter than round-off on t: the disk is at rest (accumulation point reached).
      if (2 * sdot / -a <= 1e-15 * std::max(1.0, t0)) return 0;
    }
    return 0;
  }
};

ReferenceSolution BouncingDisk(const Scene& scene, const engine::MechanicalSystem& system,
                               double step) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("scene '" + scene.name +
                                 "': analytic reference bouncing_disk: " + why);
  };
  if (scene.bodies.size() != 1 || !scene.joints.empty() || !scene.springs.empty() ||
      !scene.loads.empty() || scene.contacts.size() != 1) {
    throw bad("needs one body, one contact and no joints or forces");
  }
  const contact::PlanarContact& c = scene.contacts[0];
  if (c.body_a != engine::kGround) throw bad("the contact's line must be the ground (body_a)");
  double radius = 0;
  if (c.type == contact::PlanarContactType::kDiskLine) {
    radius = c.radius_b;
    if (!c.point_b.isZero()) throw bad("the disk must be centred on the body (point_b = 0)");
  } else if (c.type == contact::PlanarContactType::kPointLine) {
    if (!c.point_b.isZero()) throw bad("the contact point must be the body's centre");
  } else {
    throw bad("the contact must be disk_line or point_line");
  }
  const Eigen::Vector2d n = c.normal_a.normalized();
  const double a = n.dot(scene.gravity);
  if (!(a < 0)) throw bad("gravity must push the body towards the line");
  const engine::PlanarBody& body = scene.bodies[0];
  const Eigen::Vector2d p0 = body.q0.head<2>();
  const Eigen::Vector2d v0 = body.v0.head<2>();
  const double e = c.restitution >= 0 ? c.restitution : scene.options.restitution;
  Bounce bounce{n.dot(p0 - c.point_a) - radius, n.dot(v0), a, e};
  if (bounce.s0 < 0) throw bad("the disk starts below the line");
  if (bounce.s0 == 0 && bounce.sdot0 <= 0) throw bad("the disk starts at rest on the line");

  ReferenceSolution ref;
  ref.step = step;
  ref.how = "analytic bouncing_disk";
  ref.times = ReferenceTimes(scene.t_end, step);
  const int base = 0;  // the only body's coordinates are q[0..2]
  for (int i = 0; i < 3; ++i) {
    ref.names.push_back(system.PositionName(base + i));
    ref.columns.push_back(base + i);
  }
  ref.values.resize(static_cast<Eigen::Index>(ref.times.size()), 3);
  const Eigen::Vector2d g_tangent = scene.gravity - a * n;
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double t = ref.times[k];
    const Eigen::Vector2d free = p0 + v0 * t + 0.5 * g_tangent * t * t;
    const Eigen::Vector2d tangent_part = free - n * n.dot(free);
    const Eigen::Vector2d p = tangent_part + n * (n.dot(c.point_a) + radius + bounce.Gap(t));
    const auto row = static_cast<Eigen::Index>(k);
    ref.values(row, 0) = p.x();
    ref.values(row, 1) = p.y();
    ref.values(row, 2) = body.q0[2] + body.v0[2] * t;
  }
  return ref;
}

// ---- Spatial closed forms ------------------------------------------------------------------

using Quaternion = Eigen::Quaterniond;

// Rotation by `angle` about the unit `axis`, as a quaternion continuous in `angle` (w =
// cos(angle/2) is not flipped to w ≥ 0, so that it follows an integrated quaternion through full
// turns).
Quaternion AxisAngle(const Eigen::Vector3d& axis, double angle) {
  const double half = 0.5 * angle;
  return {std::cos(half), std::sin(half) * axis.x(), std::sin(half) * axis.y(),
          std::sin(half) * axis.z()};
}

// Index of spatial body b's first position coordinate in q: the model's offset, since a
// flexible body carries 7 + m positions (7 * b holds only when every body before b is rigid).
int BodyQStart(const engine::MechanicalSystem& system, int b) {
  const auto* spatial = dynamic_cast<const engine::SpatialMultibodySystem*>(&system);
  if (spatial == nullptr) throw std::logic_error("reference: not a spatial multibody system");
  return spatial->model().QOffset(b);
}

// The grid and the seven coordinates (x, y, z, qw, qx, qy, qz) of the listed bodies.
ReferenceSolution SpatialGrid(const engine::MechanicalSystem& system,
                              const std::vector<int>& bodies, double t_end, double step,
                              std::string how) {
  ReferenceSolution ref;
  ref.step = step;
  ref.how = std::move(how);
  ref.times = ReferenceTimes(t_end, step);
  for (int b : bodies) {
    const int start = BodyQStart(system, b);
    for (int i = 0; i < 7; ++i) {
      ref.names.push_back(system.PositionName(start + i));
      ref.columns.push_back(start + i);
    }
  }
  ref.values.resize(static_cast<Eigen::Index>(ref.times.size()),
                    static_cast<Eigen::Index>(ref.names.size()));
  return ref;
}

void SetPose(ReferenceSolution* ref, std::size_t k, int slot, const Eigen::Vector3d& r,
             const Quaternion& q) {
  const auto row = static_cast<Eigen::Index>(k);
  const Eigen::Index c = 7 * slot;
  ref->values.block<1, 3>(row, c) = r.transpose();
  ref->values(row, c + 3) = q.w();
  ref->values(row, c + 4) = q.x();
  ref->values(row, c + 5) = q.y();
  ref->values(row, c + 6) = q.z();
}

// Initial pose of spatial body b in the built scene's q0 (after the consistent initialization).
Eigen::Vector3d BodyPosition(const SceneSystem& built, int b) {
  return built.q0.segment<3>(BodyQStart(*built.system, b));
}
Quaternion BodyQuaternion(const SceneSystem& built, int b) {
  const Eigen::Index c = BodyQStart(*built.system, b) + 3;
  const Eigen::VectorXd& q = built.q0;
  return Quaternion(q[c], q[c + 1], q[c + 2], q[c + 3]).normalized();
}

bool HasForceElements(const SpatialScene& s) {
  return !s.springs.empty() || !s.torsional_springs.empty() || !s.loads.empty() ||
         !s.prismatic_frictions.empty() || !s.contact_pairs.empty();
}

// free_body, planar: x(t) = x0 + v0 t + g t²/2, θ(t) = θ0 + ω0 t.
ReferenceSolution PlanarFreeBody(const Scene& scene, const engine::MechanicalSystem& system,
                                 double step) {
  const engine::PlanarBody& body = scene.bodies[0];
  ReferenceSolution ref;
  ref.step = step;
  ref.how = "analytic free_body";
  ref.times = ReferenceTimes(scene.t_end, step);
  for (int i = 0; i < 3; ++i) {
    ref.names.push_back(system.PositionName(i));
    ref.columns.push_back(i);
  }
  ref.values.resize(static_cast<Eigen::Index>(ref.times.size()), 3);
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double t = ref.times[k];
    const Eigen::Vector2d p =
        body.q0.head<2>() + body.v0.head<2>() * t + 0.5 * scene.gravity * t * t;
    const auto row = static_cast<Eigen::Index>(k);
    ref.values(row, 0) = p.x();
    ref.values(row, 1) = p.y();
    ref.values(row, 2) = body.q0[2] + body.v0[2] * t;
  }
  return ref;
}

// free_body, spatial: the centre of mass c(t) = c0 + ċ0 t + g t²/2 and, with the body-frame
// angular velocity ω along a principal axis of inertia (or any ω for an isotropic inertia),
// Euler's equations keep ω constant: R(t) = R0 Rot(ω/|ω|, |ω| t); r(t) = c(t) − R(t) com.
ReferenceSolution SpatialFreeBody(
    const Scene& scene, const engine::MechanicalSystem& system, double step,
    const std::function<std::invalid_argument(const std::string&)>& bad) {
  const engine::SpatialBody& body = scene.spatial.bodies[0];
  const Eigen::Vector3d w = body.angular_velocity;
  const Eigen::Matrix3d& J = body.inertia;
  const double w_norm = w.norm();
  if (w_norm > 0) {
    const Eigen::Vector3d Jw = J * w;
    const double lambda = w.dot(Jw) / w.squaredNorm();
    // Round-off of the scene's 17-digit numbers: 1e-9 of the inertia's size.
    if ((Jw - lambda * w).norm() > 1e-9 * J.norm() * w_norm) {
      throw bad(
          "the angular velocity must lie along a principal axis of inertia (else the "
          "rotation has no closed form here)");
    }
  }
  const Quaternion Q0 =
      Quaternion(body.quaternion[0], body.quaternion[1], body.quaternion[2], body.quaternion[3])
          .normalized();
  const Eigen::Matrix3d R0 = Q0.toRotationMatrix();
  const Eigen::Vector3d c0 = body.position + R0 * body.com;
  const Eigen::Vector3d cdot0 = body.velocity + R0 * w.cross(body.com);
  ReferenceSolution ref = SpatialGrid(system, {0}, scene.t_end, step, "analytic free_body");
  const Eigen::Vector3d axis = w_norm > 0 ? Eigen::Vector3d(w / w_norm) : Eigen::Vector3d::UnitZ();
  for (std::size_t k = 0; k < ref.times.size(); ++k) {
    const double t = ref.times[k];
    const Quaternion Q = Q0 * AxisAngle(axis, w_norm * t);
    const Eigen::Vector3d c = c0 + cdot0 * t + 0.5 * scene.spatial.gravity * t * t;
    SetPose(&ref, k, 0, c - Q.toRotationMatrix() * body.com, Q);
  }
  return ref;
}

ReferenceSolution FreeBody(const Scene& scene, const engine::MechanicalSystem& system,
                           double step) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("scene '" + scene.name +
                                 "': analytic reference free_body: " + why);
  };
  if (scene.dimension == 3) {
    const SpatialScene& s = scene.spatial;
    if (s.bodies.size() != 1 || !s.joints.empty() || !s.drivers.empty() || HasForceElements(s)) {
      throw bad("needs one body and no joints, drivers, forces or contacts");
    }
    return SpatialFreeBody(scene, system, step, bad);
  }
  if (scene.bodies.size() != 1 || !scene.joints.empty() || !scene.springs.empty() ||
      !scene.loads.empty() || !scene.contacts.empty()) {
    throw bad("needs one body and no joints, forces or contacts");
  }
  return PlanarFreeBody(scene, system, step);
}

// spinning_top: one body on a spherical joint with the ground, symmetric about the axis s from
// the pivot to its centre of mass (l = |s|), started in steady precession: the world angular
// velocity is ω = Ω k + ψ̇ b with k = −gravity/|gravity|, b = R0 s/l, and
//   Ω (J3 ω3 − J1' Ω cos θ) = m g l,  ω3 = ω·b, cos θ = k·b, J1' = J1 + m l²
// (Goldstein, Classical Mechanics, Sec. 5.7). Then R(t) = Rot(k, Ω t) R0 Rot(s/l, ψ̇ t) and the
// body origin r(t) = P − R(t) point_b (P the pivot).
ReferenceSolution SpinningTop(const Scene& scene, const engine::MechanicalSystem& system,
                              double step) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("scene '" + scene.name +
                                 "': analytic reference spinning_top: " + why);
  };
  if (scene.dimension != 3) throw bad("needs a spatial scene (dimension: 3)");
  const SpatialScene& sp = scene.spatial;
  if (sp.bodies.size() != 1 || sp.joints.size() != 1 || !sp.drivers.empty() ||
      HasForceElements(sp) || sp.joints[0].type != engine::SpatialJointType::kSpherical ||
      sp.joints[0].body_a != engine::kGround) {
    throw bad("needs one body on one spherical joint with the ground (body_a) and no forces");
  }
  const engine::SpatialBody& body = sp.bodies[0];
  const engine::SpatialJoint& joint = sp.joints[0];
  const double g = sp.gravity.norm();
  if (!(g > 0)) throw bad("needs gravity");
  const Eigen::Vector3d s = body.com - joint.point_b;  // pivot → centre of mass, body frame
  const double l = s.norm();
  if (!(l > 0)) throw bad("the centre of mass must not be at the pivot");
  const Eigen::Vector3d e3 = s / l;
  const Eigen::Vector3d e1 = e3.unitOrthogonal(), e2 = e3.cross(e1);
  const Eigen::Matrix3d& J = body.inertia;
  const double J1 = e1.dot(J * e1), J3 = e3.dot(J * e3);
  // Symmetric top: 1e-9 of the inertia's size (round-off of the scene's numbers).
  const double sym_tol = 1e-9 * J.norm();
  if ((J * e3 - J3 * e3).norm() > sym_tol || std::abs(e2.dot(J * e2) - J1) > sym_tol ||
      std::abs(e1.dot(J * e2)) > sym_tol) {
    throw bad("the inertia must be symmetric about the pivot-to-centre-of-mass axis");
  }
  const Quaternion Q0 =
      Quaternion(body.quaternion[0], body.quaternion[1], body.quaternion[2], body.quaternion[3])
          .normalized();
  const Eigen::Matrix3d R0 = Q0.toRotationMatrix();
  const Eigen::Vector3d P = joint.point_a;
  // The scene must start on the joint (1e-9 m: round-off of the scene's numbers).
  if ((body.position + R0 * joint.point_b - P).norm() > 1e-9 * (1 + P.norm())) {
    throw bad("the body must start on the pivot");
  }
  const Eigen::Vector3d k = -sp.gravity / g, b = R0 * e3;
  const Eigen::Vector3d w = R0 * body.angular_velocity;  // world frame
  double Omega = 0, psidot = 0;
  const double sin_theta = k.cross(b).norm();
  const double w_tol = 1e-9 * (1 + w.norm());  // round-off of the scene's numbers
  if (sin_theta < 1e-12) {                     // upright (sleeping) top: spin about b only
    psidot = w.dot(b);
    if ((w - psidot * b).norm() > w_tol) throw bad("the upright top must spin about its axis");
  } else {
    Eigen::Matrix<double, 3, 2> A;
    A << k, b;
    const Eigen::Vector2d x = A.colPivHouseholderQr().solve(w);
    if ((A * x - w).norm() > w_tol) {
      throw bad("the angular velocity must be Omega k + psi_dot b (no nutation rate)");
    }
    Omega = x[0];
    psidot = x[1];
    const double m = body.mass, cos_theta = k.dot(b), w3 = w.dot(b);
    const double lhs = Omega * (J3 * w3 - (J1 + m * l * l) * Omega * cos_theta);
    // Steady precession: 1e-8 relative (the scene's Omega has 17 digits).
    if (std::abs(lhs - m * g * l) > 1e-8 * m * g * l) {
      throw bad("not started in steady precession: Omega (J3 omega3 - J1' Omega cos theta) = " +
                FormatDouble(lhs) + ", m g l = " + FormatDouble(m * g * l));
    }
  }
  ReferenceSolution ref = SpatialGrid(system, {0}, scene.t_end, step, "analytic spinning_top");
  for (std::size_t i = 0; i < ref.times.size(); ++i) {
    const double t = ref.times[i];
    const Quaternion Q = AxisAngle(k, Omega * t) * Q0 * AxisAngle(e3, psidot * t);
    SetPose(&ref, i, 0, P - Q.toRotationMatrix() * joint.point_b, Q);
  }
  return ref;
}

// slider_crank: a crank on a revolute joint with the ground (body_a), driven by an angle driver
// φ(t); a rod joined to the crank by a spherical joint and to a slider by a spherical or
// universal joint; the slider on a prismatic joint with the ground (body_a). The crank turns
// rigidly: with the pivot P and unit axis a, Δφ = φ(t) − φ(0),
//   Q_crank(t) = Rot(a, Δφ) Q_crank(0),  r_crank(t) = P + Rot(a, Δφ)(r_crank(0) − P);
// the pin p(t) = P + Rot(a, Δφ)(p(0) − P) and the slider's joint point w(t) = w(0) + d u (u the
// guide's axis) keep the rod length L = |p(0) − w(0)|:
//   d = b − sign(b0) sqrt(b² − |e|² + L²),  e = p(t) − w(0), b = u·e  (d(0) = 0),
// r_slider(t) = r_slider(0) + d u, Q_slider constant. The initial poses are the scene's
// consistent initialization (tools/scene.h, BuildSceneSystem). Crank and slider are compared.
ReferenceSolution SliderCrank(const Scene& scene, const engine::MechanicalSystem& system,
                              double step) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("scene '" + scene.name +
                                 "': analytic reference slider_crank: " + why);
  };
  if (scene.dimension != 3) throw bad("needs a spatial scene (dimension: 3)");
  const SpatialScene& sp = scene.spatial;
  using Type = engine::SpatialJointType;
  if (sp.drivers.size() != 1 || sp.drivers[0].kind != engine::DriverKind::kAngle ||
      HasForceElements(sp) || sp.bodies.size() != 3 || sp.joints.size() != 4) {
    throw bad("needs three bodies, four joints, one angle driver and no forces");
  }
  const engine::SpatialJoint& pivot = sp.joints[static_cast<std::size_t>(sp.drivers[0].joint)];
  if (pivot.type != Type::kRevolute || pivot.body_a != engine::kGround) {
    throw bad("the driver must drive a revolute joint with the ground as body_a");
  }
  const int crank = pivot.body_b;
  // Point of joint j on body `on`, in that body's frame, and the other body.
  const auto point_on = [](const engine::SpatialJoint& j, int on) {
    return j.body_a == on ? j.point_a : j.point_b;
  };
  const auto other = [](const engine::SpatialJoint& j, int of) {
    return j.body_a == of ? j.body_b : j.body_a;
  };
  const engine::SpatialJoint* pin = nullptr;
  const engine::SpatialJoint* guide = nullptr;
  for (const engine::SpatialJoint& j : sp.joints) {
    if (j.type == Type::kSpherical && (j.body_a == crank || j.body_b == crank)) pin = &j;
    if (j.type == Type::kPrismatic && j.body_a == engine::kGround) guide = &j;
  }
  if (pin == nullptr || guide == nullptr) {
    throw bad("needs a spherical joint on the crank and a prismatic joint with the ground");
  }
  const int rod = other(*pin, crank), slider = guide->body_b;
  const engine::SpatialJoint* wrist = nullptr;
  for (const engine::SpatialJoint& j : sp.joints) {
    if ((j.type == Type::kSpherical || j.type == Type::kUniversal) &&
        ((j.body_a == rod && j.body_b == slider) || (j.body_a == slider && j.body_b == rod))) {
      wrist = &j;
    }
  }
  if (wrist == nullptr || rod == engine::kGround || rod == slider || slider == crank) {
    throw bad("needs a spherical or universal joint between the rod and the slider");
  }
  const SceneSystem built = BuildSceneSystem(scene);  // the consistent initial poses
  const Eigen::Vector3d P = pivot.point_a, a = pivot.axis_a.normalized();
  const Eigen::Vector3d u = guide->axis_a.normalized();
  const Eigen::Vector3d rc0 = BodyPosition(built, crank);
  const Quaternion Qc0 = BodyQuaternion(built, crank);
  const Eigen::Vector3d rs0 = BodyPosition(built, slider);
  const Quaternion Qs0 = BodyQuaternion(built, slider);
  const Eigen::Vector3d p0 = rc0 + Qc0.toRotationMatrix() * point_on(*pin, crank);
  const Eigen::Vector3d w0 = rs0 + Qs0.toRotationMatrix() * point_on(*wrist, slider);
  const double L = (p0 - w0).norm();
  const double branch = u.dot(p0 - w0) >= 0 ? 1.0 : -1.0;
  const engine::TimeProfile& profile = sp.drivers[0].profile;
  const double phi0 = profile.Evaluate(0.0)[0];
  ReferenceSolution ref =
      SpatialGrid(system, {crank, slider}, scene.t_end, step, "analytic slider_crank");
  for (std::size_t i = 0; i < ref.times.size(); ++i) {
    const double t = ref.times[i];
    const Quaternion turn = AxisAngle(a, profile.Evaluate(t)[0] - phi0);
    const Eigen::Matrix3d Rt = turn.toRotationMatrix();
    const Eigen::Vector3d p = P + Rt * (p0 - P);
    const Eigen::Vector3d e = p - w0;
    const double b = u.dot(e);
    const double disc = b * b - e.squaredNorm() + L * L;
    if (disc < 0) {
      throw bad("the rod cannot reach the guide at t = " + FormatDouble(t) + " s");
    }
    const double d = b - branch * std::sqrt(disc);
    SetPose(&ref, i, 0, P + Rt * (rc0 - P), turn * Qc0);
    SetPose(&ref, i, 1, rs0 + d * u, Qs0);
  }
  return ref;
}
}  // namespace

ReferenceSolution AnalyticReference(const std::string& name, const Scene& scene,
                                    const engine::MechanicalSystem& system, double step) {
  if (name == "bouncing_disk") return BouncingDisk(scene, system, step);
  if (name == "free_body") return FreeBody(scene, system, step);
  if (name == "slider_crank") return SliderCrank(scene, system, step);
  if (name == "spinning_top") return SpinningTop(scene, system, step);
  std::string known;
  for (const std::string& n : AnalyticReferenceNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("scene '" + scene.name + "': unknown analytic reference '" + name +
                              "' (known: " + known + ")");
}

void WriteReferenceCsv(const ReferenceSolution& reference, std::ostream& out) {
  out << 't';
  for (const std::string& name : reference.names) out << ',' << name;
  out << '\n';
  for (std::size_t k = 0; k < reference.times.size(); ++k) {
    out << FormatDouble(reference.times[k]);
    for (Eigen::Index j = 0; j < reference.values.cols(); ++j) {
      out << ',' << FormatDouble(reference.values(static_cast<Eigen::Index>(k), j));
    }
    out << '\n';
  }
}

ReferenceRecorder::ReferenceRecorder(const ReferenceSolution& reference)
    : reference_(reference),
      values_(reference.values.rows(), reference.values.cols()),
      seen_(reference.times.size(), false) {
  values_.setConstant(std::numeric_limits<double>::quiet_NaN());
}

void ReferenceRecorder::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& /*v*/) {
  const double tolerance = kGridTolerance * reference_.step;
  const auto it = std::lower_bound(reference_.times.begin(), reference_.times.end(), t - tolerance);
  if (it == reference_.times.end() || std::abs(*it - t) > tolerance) return;
  const auto k = static_cast<std::size_t>(it - reference_.times.begin());
  if (seen_[k]) return;
  seen_[k] = true;
  ++recorded_;
  for (std::size_t j = 0; j < reference_.columns.size(); ++j) {
    values_(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = q[reference_.columns[j]];
  }
}

double ReferenceRecorder::Error() const {
  if (!complete()) return std::numeric_limits<double>::infinity();
  const Eigen::ArrayXXd ref = reference_.values.array();
  return ((values_.array() - ref).abs() / (1.0 + ref.abs())).maxCoeff();
}

ReferenceSolution ReferenceRecorder::AsReference(std::string how) const {
  ReferenceSolution out = reference_;
  out.values = values_;
  out.how = std::move(how);
  return out;
}

}  // namespace saltus::tools

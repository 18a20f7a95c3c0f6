#include "engine/flexible_beam_spatial.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/rotation.h"
#include "engine/validation.h"

namespace saltus::engine {
namespace {

using namespace validation;  // NOLINT: shared builder checks (engine/validation.h)

// Validates what the planar beam does not (I_xz, the spatial mode count, the reduction) and
// returns the planar properties with every planar mode.
BeamProperties PlanarProperties(const BeamProperties& properties, double second_moment_xz,
                                const std::optional<BeamTorsion>& torsion,
                                const std::string& label) {
  BeamProperties planar = properties;
  planar.modes = 1;
  planar.reduction = BeamReduction::kFreeInterface;
  planar.boundary_nodes.clear();
  ValidateBeam(label, planar);
  RequirePositive(label, "second_moment_xz", second_moment_xz);
  if (torsion) {
    RequirePositive(label, "shear_modulus", torsion->shear_modulus);
    RequirePositive(label, "torsion_constant", torsion->torsion_constant);
  }
  ValidateBoundaryNodes(label, properties);
  const int available = AvailableSpatialModes(properties.elements, torsion.has_value());
  const int fewest = SpatialMinimumModes(properties, torsion.has_value());
  if (properties.modes < fewest || properties.modes > available) {
    Fail(label, "modes must be in [" + std::to_string(fewest) + ", " + std::to_string(available) +
                    "] (" + std::to_string(properties.elements) + " elements, spatial" +
                    (torsion ? ", with torsion" : "") +
                    (fewest > 1 ? ", Craig-Bampton with " +
                                      std::to_string(SpatialBoundaryCoordinates(
                                          properties, torsion.has_value())) +
                                      " boundary coordinates"
                                : "") +
                    "), got " + std::to_string(properties.modes));
  }
  // The planar beam with every free-interface mode: a complete basis of its free coordinates.
  planar.modes = AvailableModes(properties.elements, properties.reference);
  return planar;
}

// The shaft elements on the nodal twists φ_0..φ_n (n + 1 square): stiffness G J/l [1 −1; −1 1],
// consistent mass ρ I_p l/6 [2 1; 1 2] (exact for the linear twist).
void TorsionMatrices(int n, double length, double gj, double rho_ip, Eigen::MatrixXd* K,
                     Eigen::MatrixXd* M) {
  const double l = length / n;
  *K = Eigen::MatrixXd::Zero(n + 1, n + 1);
  *M = Eigen::MatrixXd::Zero(n + 1, n + 1);
  for (int e = 0; e < n; ++e) {
    K->block<2, 2>(e, e) += gj / l * (Eigen::Matrix2d() << 1, -1, -1, 1).finished();
    M->block<2, 2>(e, e) += rho_ip * l / 6.0 * (Eigen::Matrix2d() << 2, 1, 1, 2).finished();
  }
}

bool IsBoundary(const BeamProperties& beam, int node) {
  return std::find(beam.boundary_nodes.begin(), beam.boundary_nodes.end(), node) !=
         beam.boundary_nodes.end();
}

// The axial share of the (unit) modal mass of each planar mode.
Eigen::VectorXd AxialShares(const FlexibleBeam& planar) {
  const Eigen::MatrixXd& phi = planar.modes();
  std::vector<int> axial;
  for (int i = 0; i < phi.rows(); i += 3) axial.push_back(i);
  const Eigen::MatrixXd m = planar.fe_mass()(axial, axial);
  const Eigen::MatrixXd phi_u = phi(axial, Eigen::all);
  return (phi_u.transpose() * m * phi_u).diagonal();
}

}  // namespace

int AvailableSpatialModes(int elements, bool torsion) { return (torsion ? 6 : 5) * elements; }

int SpatialBoundaryCoordinates(const BeamProperties& beam, bool torsion) {
  if (beam.reduction != BeamReduction::kCraigBampton) return 0;
  const std::vector<int> fixed = ReferenceFixedCoordinates(beam.elements, beam.reference);
  const auto is_fixed = [&](int c) {
    return std::find(fixed.begin(), fixed.end(), c) != fixed.end();
  };
  int count = 0;
  for (const int node : beam.boundary_nodes) {
    // u, (v, θ_z) and (w, θ_y): the planar fixed set applies to both bending planes.
    for (int c = 3 * node; c < 3 * node + 3; ++c) count += is_fixed(c) ? 0 : (c % 3 == 0 ? 1 : 2);
    if (torsion) count += node == 0 && beam.reference != BeamReference::kFree ? 0 : 1;
  }
  return count;
}

int SpatialMinimumModes(const BeamProperties& beam, bool torsion) {
  const int rigid = beam.reference == BeamReference::kFree ? (torsion ? 6 : 5) : 0;
  return std::max(1, SpatialBoundaryCoordinates(beam, torsion) - rigid);
}

double RectangleTorsionConstant(double width, double height) {
  const double a = std::max(width, height), b = std::min(width, height);
  const double pi = std::numbers::pi;
  double sum = 0.0, first = 0.0;
  for (int k = 1; k < 100; k += 2) {
    const double term = std::tanh(k * pi * a / (2.0 * b)) / std::pow(k, 5);
    if (k == 1) first = term;
    sum += term;
    if (term < 1e-17 * first) break;
  }
  return a * b * b * b / 3.0 * (1.0 - 192.0 / std::pow(pi, 5) * (b / a) * sum);
}

SpatialFlexibleBeam::SpatialFlexibleBeam(const BeamProperties& properties, double second_moment_xz,
                                         const std::string& label)
    : SpatialFlexibleBeam(properties, second_moment_xz, std::nullopt, label) {}

SpatialFlexibleBeam::SpatialFlexibleBeam(const BeamProperties& properties, double second_moment_xz,
                                         const std::optional<BeamTorsion>& torsion,
                                         const std::string& label)
    : planar_(PlanarProperties(properties, second_moment_xz, torsion, label), label),
      properties_(properties),
      second_moment_xz_(second_moment_xz),
      torsion_(torsion) {
  const double i_xy = properties.second_moment;
  section_inertia_ = properties.density * properties.length *
                     Eigen::Vector3d(i_xy + second_moment_xz, second_moment_xz, i_xy);
  if (properties.reduction == BeamReduction::kCraigBampton) {
    if (torsion_) SolveTorsion();
    ReduceCraigBampton(label);
    damping_ = (properties.rayleigh_alpha + properties.rayleigh_beta * omega_.array().square() +
                2.0 * properties.modal_damping * omega_.array())
                   .matrix();
    for (const BeamPoint& p : planar_.quadrature_points()) gauss_.push_back(FromPlanar(p));
    return;
  }
  // Every planar mode once, and each bending one again in x–z; the m lowest are kept (a stable
  // sort: a planar mode precedes its copy when I_xz = I_xy).
  struct Candidate {
    double omega;
    SpatialModeKind kind;
    int column;
  };
  std::vector<Candidate> candidates;
  const Eigen::VectorXd share = AxialShares(planar_);
  const double scale = std::sqrt(second_moment_xz / properties.second_moment);
  for (int c = 0; c < planar_.num_modes(); ++c) {
    const double omega = planar_.frequencies()(c);
    if (share(c) > 1.0 - 1e-6) {
      candidates.push_back({omega, SpatialModeKind::kAxial, c});
    } else if (share(c) < 1e-6) {
      candidates.push_back({omega, SpatialModeKind::kBendingXY, c});
      candidates.push_back({omega * scale, SpatialModeKind::kBendingXZ, c});
    } else {
      Fail(label, "planar mode " + std::to_string(c + 1) + " (omega = " + Num(omega) +
                      " rad/s) mixes axial and bending motion (equal frequencies); change the "
                      "section or the number of elements");
    }
  }
  if (torsion_) {
    SolveTorsion();
    for (int c = 0; c < torsion_omega_.size(); ++c) {
      candidates.push_back({torsion_omega_(c), SpatialModeKind::kTorsion, c});
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.omega < b.omega; });
  const int m = properties.modes;
  omega_.resize(m);
  for (int j = 0; j < m; ++j) {
    omega_(j) = candidates[static_cast<std::size_t>(j)].omega;
    kind_.push_back(candidates[static_cast<std::size_t>(j)].kind);
    column_.push_back(candidates[static_cast<std::size_t>(j)].column);
  }
  damping_ = (properties.rayleigh_alpha + properties.rayleigh_beta * omega_.array().square() +
              2.0 * properties.modal_damping * omega_.array())
                 .matrix();
  for (const BeamPoint& p : planar_.quadrature_points()) gauss_.push_back(FromPlanar(p));
}

SpatialBeamPoint SpatialFlexibleBeam::FromPlanar(const BeamPoint& p) const {
  const int m = num_modes();
  SpatialBeamPoint s;
  s.X = p.X;
  for (Eigen::RowVectorXd* row :
       {&s.su, &s.sv, &s.sw, &s.slope_v, &s.slope_w, &s.dsu, &s.dslope_v, &s.dslope_w}) {
    row->setZero(m);
  }
  s.H.setZero(m, m);
  s.twist.setZero(m);
  s.dtwist.setZero(m);
  // The element that holds X (the one to its right at an inner node) and ξ in it, for the
  // linear twist.
  const int n = properties().elements;
  const double l = length() / n;
  const int e = std::clamp(static_cast<int>(std::floor(p.X / l)), 0, n - 1);
  const double xi = (p.X - e * l) / l;
  if (coeff_.size() > 0) {  // Craig–Bampton: combinations c_j of the planar modes (header)
    for (int j = 0; j < m; ++j) {
      const auto kind = kind_[static_cast<std::size_t>(j)];
      const auto c = coeff_.col(j);
      if (kind == SpatialModeKind::kTorsion) {
        const int t = column_[static_cast<std::size_t>(j)];
        const double left = torsion_modes_(e, t), right = torsion_modes_(e + 1, t);
        s.twist(j) = (1.0 - xi) * left + xi * right;
        s.dtwist(j) = (right - left) / l;
      } else if (kind == SpatialModeKind::kBendingXZ) {
        s.sw(j) = p.sw.dot(c);
        s.slope_w(j) = p.slope.dot(c);
        s.dslope_w(j) = p.dslope.dot(c);
      } else {
        s.su(j) = p.su.dot(c);
        s.sv(j) = p.sw.dot(c);
        s.slope_v(j) = p.slope.dot(c);
        s.dsu(j) = p.dsu.dot(c);
        s.dslope_v(j) = p.dslope.dot(c);
      }
    }
    const Eigen::MatrixXd Hc = p.H * coeff_;
    for (int j = 0; j < m; ++j) {
      const auto kj = kind_[static_cast<std::size_t>(j)];
      if (kj == SpatialModeKind::kTorsion) continue;
      for (int k = 0; k < m; ++k) {
        const auto kk = kind_[static_cast<std::size_t>(k)];
        if (kk == SpatialModeKind::kTorsion) continue;
        if ((kj == SpatialModeKind::kBendingXZ) == (kk == SpatialModeKind::kBendingXZ)) {
          s.H(j, k) = coeff_.col(j).dot(Hc.col(k));
        }
      }
    }
    return s;
  }
  for (int j = 0; j < m; ++j) {
    const int c = column_[static_cast<std::size_t>(j)];
    if (kind_[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion) {
      const double left = torsion_modes_(e, c), right = torsion_modes_(e + 1, c);
      s.twist(j) = (1.0 - xi) * left + xi * right;
      s.dtwist(j) = (right - left) / l;
    } else if (kind_[static_cast<std::size_t>(j)] == SpatialModeKind::kBendingXZ) {
      s.sw(j) = p.sw(c);
      s.slope_w(j) = p.slope(c);
      s.dslope_w(j) = p.dslope(c);
    } else {  // a planar mode (its bending part is 0 for an axial one, its axial part for bending)
      s.su(j) = p.su(c);
      s.sv(j) = p.sw(c);
      s.slope_v(j) = p.slope(c);
      s.dsu(j) = p.dsu(c);
      s.dslope_v(j) = p.dslope(c);
    }
  }
  // H = ∫ (s_v'ᵀ s_v' + s_w'ᵀ s_w'): the planar ∫ ψᵀψ between modes of the same plane.
  const auto torsional = [&](int j) {
    return kind_[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion;
  };
  for (int j = 0; j < m; ++j) {
    if (torsional(j)) continue;
    const bool xz_j = kind_[static_cast<std::size_t>(j)] == SpatialModeKind::kBendingXZ;
    for (int k = 0; k < m; ++k) {
      if (torsional(k)) continue;
      const bool xz_k = kind_[static_cast<std::size_t>(k)] == SpatialModeKind::kBendingXZ;
      if (xz_j == xz_k) {
        s.H(j, k) = p.H(column_[static_cast<std::size_t>(j)], column_[static_cast<std::size_t>(k)]);
      }
    }
  }
  return s;
}

void SpatialFlexibleBeam::SolveTorsion() {
  // The shaft elements on the nodal twists φ_0..φ_n: stiffness G J/l [1 −1; −1 1], consistent
  // mass ρ I_p l/6 [2 1; 1 2] (exact for the linear twist).
  const BeamProperties& p = properties();
  const int n = p.elements;
  Eigen::MatrixXd K, M;
  TorsionMatrices(n, p.length, torsion_->shear_modulus * torsion_->torsion_constant,
                  p.density * (p.second_moment + second_moment_xz_), &K, &M);
  // Clamped and pinned: φ_0 = 0 (solve on φ_1..φ_n). Free: every node, the uniform twist (the
  // zero frequency) dropped.
  const bool free = p.reference == BeamReference::kFree;
  const int first = free ? 0 : 1, size = n + 1 - first;
  Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> solver(K.bottomRightCorner(size, size),
                                                                   M.bottomRightCorner(size, size));
  if (solver.info() != Eigen::Success) {
    throw std::runtime_error("torsion eigenproblem failed");  // LCOV_EXCL_LINE (SPD matrices)
  }
  const int skip = free ? 1 : 0;
  torsion_modes_ = Eigen::MatrixXd::Zero(n + 1, n);
  torsion_modes_.bottomRows(size) = solver.eigenvectors().rightCols(size - skip);
  torsion_omega_ = solver.eigenvalues().tail(size - skip).cwiseMax(0.0).cwiseSqrt();
}

void SpatialFlexibleBeam::ReduceCraigBampton(const std::string& label) {
  const BeamProperties& p = properties();
  const int n = p.elements, dofs = 3 * (n + 1);
  const bool free = p.reference == BeamReference::kFree;
  const std::vector<int> fixed = ReferenceFixedCoordinates(n, p.reference);
  const auto is_fixed = [&](int c) {
    return std::find(fixed.begin(), fixed.end(), c) != fixed.end();
  };
  // The free coordinates of the three blocks: planar (u, v, θ_z), x–z bending (w, θ_y: the planar
  // bending coordinates, same reference conditions), torsion (φ_k; φ_0 fixed unless free).
  std::vector<int> planar_dofs, xz_dofs, twist_dofs;
  for (int c = 0; c < dofs; ++c) {
    if (is_fixed(c)) continue;
    planar_dofs.push_back(c);
    if (c % 3 != 0) xz_dofs.push_back(c);
  }
  if (torsion_) {
    for (int k = free ? 0 : 1; k <= n; ++k) twist_dofs.push_back(k);
  }
  const auto np = static_cast<Eigen::Index>(planar_dofs.size());
  const auto nz = static_cast<Eigen::Index>(xz_dofs.size());
  const auto nt = static_cast<Eigen::Index>(twist_dofs.size());
  const Eigen::Index size = np + nz + nt;
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(size, size), M = K;
  const Eigen::MatrixXd& k_fe = planar_.fe_stiffness();
  const Eigen::MatrixXd& m_fe = planar_.fe_mass();
  K.topLeftCorner(np, np) = k_fe(planar_dofs, planar_dofs);
  M.topLeftCorner(np, np) = m_fe(planar_dofs, planar_dofs);
  // The bending stiffness block scales with the second moment (E I_xz for x–z).
  K.block(np, np, nz, nz) = (second_moment_xz_ / p.second_moment) * k_fe(xz_dofs, xz_dofs);
  M.block(np, np, nz, nz) = m_fe(xz_dofs, xz_dofs);
  if (torsion_) {
    Eigen::MatrixXd k_t, m_t;
    TorsionMatrices(n, p.length, torsion_->shear_modulus * torsion_->torsion_constant,
                    p.density * (p.second_moment + second_moment_xz_), &k_t, &m_t);
    K.bottomRightCorner(nt, nt) = k_t(twist_dofs, twist_dofs);
    M.bottomRightCorner(nt, nt) = m_t(twist_dofs, twist_dofs);
  }
  std::vector<int> boundary;
  for (Eigen::Index i = 0; i < np; ++i) {
    if (IsBoundary(p, planar_dofs[static_cast<std::size_t>(i)] / 3)) boundary.push_back(int(i));
  }
  for (Eigen::Index i = 0; i < nz; ++i) {
    if (IsBoundary(p, xz_dofs[static_cast<std::size_t>(i)] / 3)) boundary.push_back(int(np + i));
  }
  for (Eigen::Index i = 0; i < nt; ++i) {
    if (IsBoundary(p, twist_dofs[static_cast<std::size_t>(i)]))
      boundary.push_back(int(np + nz + i));
  }
  const int rigid = free ? (torsion_ ? 6 : 5) : 0;
  const int m = p.modes;
  const int fixed_modes = m + rigid - static_cast<int>(boundary.size());
  const Eigen::MatrixXd T = CraigBamptonSubspace(K, M, boundary, fixed_modes);
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> projected(T.transpose() * K * T,
                                                                            T.transpose() * M * T);
  if (projected.info() != Eigen::Success) {
    throw std::runtime_error("SpatialFlexibleBeam: the projected eigenproblem did not converge");
  }
  const Eigen::MatrixXd vectors = T * projected.eigenvectors();  // xᵀ M x = 1
  const Eigen::VectorXd lambda = projected.eigenvalues();
  // Each vector's family by its share of the modal mass; its planar coordinates c = Φᵀ M x.
  const Eigen::MatrixXd& phi = planar_.modes();  // every planar mode (rows: all 3(n + 1))
  coeff_ = Eigen::MatrixXd::Zero(phi.cols(), m);
  omega_.resize(m);
  Eigen::MatrixXd twists = Eigen::MatrixXd::Zero(n + 1, m);
  int twist_count = 0;
  for (int j = 0; j < m; ++j) {
    Eigen::VectorXd x = vectors.col(rigid + j);
    Eigen::Index largest = 0;  // a deterministic sign: the largest entry positive
    x.cwiseAbs().maxCoeff(&largest);
    if (x(largest) < 0.0) x = -x;
    const double share_planar = x.head(np).dot(M.topLeftCorner(np, np) * x.head(np));
    const double share_xz = x.segment(np, nz).dot(M.block(np, np, nz, nz) * x.segment(np, nz));
    const double share_twist = 1.0 - share_planar - share_xz;
    omega_(j) = std::sqrt(std::max(lambda(rigid + j), 0.0));
    if (share_twist > 1.0 - 1e-6) {
      twists(twist_dofs, twist_count) = x.tail(nt);
      kind_.push_back(SpatialModeKind::kTorsion);
      column_.push_back(twist_count++);
      continue;
    }
    Eigen::VectorXd nodal = Eigen::VectorXd::Zero(dofs);
    if (share_planar > 1.0 - 1e-6) {
      nodal(planar_dofs) = x.head(np);
      double axial = 0.0;
      for (Eigen::Index i = 0; i < np; ++i) {
        if (planar_dofs[static_cast<std::size_t>(i)] % 3 == 0) {
          axial += x(i) * M.row(i).head(np).dot(x.head(np));
        }
      }
      kind_.push_back(axial > 0.5 ? SpatialModeKind::kAxial : SpatialModeKind::kBendingXY);
    } else if (share_xz > 1.0 - 1e-6) {
      nodal(xz_dofs) = x.segment(np, nz);
      kind_.push_back(SpatialModeKind::kBendingXZ);
    } else {
      Fail(label, "Craig-Bampton mode " + std::to_string(j + 1) + " (omega = " + Num(omega_(j)) +
                      " rad/s) mixes the families of the beam (equal frequencies); change the "
                      "section or the number of elements");
    }
    coeff_.col(j) = phi.transpose() * (m_fe * nodal);
    column_.push_back(-1);
  }
  if (torsion_) torsion_modes_ = twists.leftCols(std::max(twist_count, 1));
}

Eigen::Matrix3d SpatialFlexibleBeam::SectionInertia(std::size_t g, double phi) const {
  // w_g/A = ρ × (the point's share of the length); J(φ) = R_x(φ) J' R_x(φ)ᵀ.
  const double per_length = quadrature_weights()[g] / properties().area;
  const double i_xy = properties().second_moment, i_xz = second_moment_xz_;
  const double c = std::cos(phi), s = std::sin(phi);
  Eigen::Matrix3d J = Eigen::Matrix3d::Zero();
  J(0, 0) = i_xy + i_xz;
  J(1, 1) = c * c * i_xz + s * s * i_xy;
  J(2, 2) = s * s * i_xz + c * c * i_xy;
  J(1, 2) = J(2, 1) = c * s * (i_xz - i_xy);
  return per_length * J;
}

SpatialBeamPoint SpatialFlexibleBeam::PointAt(double X) const {
  return FromPlanar(planar_.PointAt(X));
}

SpatialSectionMotion SpatialFlexibleBeam::Section(
    const SpatialBeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta,
    const Eigen::Ref<const Eigen::VectorXd>& eta_dot) const {
  const double a = point.slope_v.dot(eta), b = point.slope_w.dot(eta);
  const double phi = point.twist.dot(eta);
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  const double cp = std::cos(phi), sp = std::sin(phi);
  const Eigen::Vector3d e_z = Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d n_y(-sa, ca, 0.0);          // R_z(a) e_y
  const Eigen::Vector3d n_x(ca * cb, sa * cb, sb);  // R_z(a) R_y(−b) e_x
  const Eigen::Vector3d n_z = n_x.cross(n_y);       // R_z(a) R_y(−b) e_z
  SpatialSectionMotion section;
  section.turn.col(0) = n_x;
  section.turn.col(1) = cp * n_y + sp * n_z;  // R_x(φ) turns the tilted y and z axes
  section.turn.col(2) = -sp * n_y + cp * n_z;
  section.E = e_z * point.slope_v - n_y * point.slope_w + n_x * point.twist;
  if (eta_dot.size() == 0) return section;
  const double a_dot = point.slope_v.dot(eta_dot), b_dot = point.slope_w.dot(eta_dot);
  const double phi_dot = point.twist.dot(eta_dot);
  section.rate = a_dot * e_z - b_dot * n_y + phi_dot * n_x;
  section.acc =
      -a_dot * b_dot * e_z.cross(n_y) + phi_dot * (a_dot * e_z.cross(n_x) - b_dot * n_y.cross(n_x));
  return section;
}

SpatialBeamCurve SpatialFlexibleBeam::Curve(const SpatialBeamPoint& point,
                                            const Eigen::Ref<const Eigen::VectorXd>& eta) const {
  const double a = point.slope_v.dot(eta), b = point.slope_w.dot(eta);
  const double da = point.dslope_v.dot(eta), db = point.dslope_w.dot(eta);
  const double stiff = properties().geometric_stiffening ? 1.0 : 0.0;
  SpatialBeamCurve curve;
  curve.u_x << 1.0 + point.dsu.dot(eta) - 0.5 * stiff * (a * a + b * b), a, b;
  curve.u_xx << -stiff * (a * da + b * db), da, db;
  curve.B_x.resize(3, num_modes());
  curve.B_x.row(0) = point.dsu - stiff * (a * point.slope_v + b * point.slope_w);
  curve.B_x.row(1) = point.slope_v;
  curve.B_x.row(2) = point.slope_w;
  return curve;
}

namespace {

// φ(X) and its first two X-derivatives.
struct Objective {
  double value, slope, curvature;
};

// The minimizer of φ over [0, L] (SpatialFlexibleBeam::NearestX, LowestX).
template <class Phi>
double MinimizeAlongBeam(double L, int elements, const Phi& phi) {
  const int samples = 2 * elements;
  const auto at = [&](int j) { return L * j / samples; };
  int best = 0;
  double best_value = std::numeric_limits<double>::infinity();
  for (int j = 0; j <= samples; ++j) {
    const double value = phi(at(j)).value;
    if (value < best_value) {
      best_value = value;
      best = j;
    }
  }
  const double slope = phi(at(best)).slope;
  if (slope == 0.0) return at(best);
  // φ descends towards lo < best (slope > 0) or towards hi > best (slope < 0).
  double lo = slope > 0.0 ? at(std::max(best - 1, 0)) : at(best);
  double hi = slope > 0.0 ? at(best) : at(std::min(best + 1, samples));
  if (slope > 0.0 && (best == 0 || phi(lo).slope >= 0.0)) return lo;
  if (slope < 0.0 && (best == samples || phi(hi).slope <= 0.0)) return hi;
  double X = at(best);
  for (int iteration = 0; iteration < 40; ++iteration) {
    const Objective o = phi(X);
    if (o.slope == 0.0) return X;
    (o.slope < 0.0 ? lo : hi) = X;
    const double newton = o.curvature > 0.0 ? X - o.slope / o.curvature : 0.5 * (lo + hi);
    // Converged: the Newton step itself is below the tolerance. (Testing the step taken instead
    // would let a Newton step that rounds onto X, now an end of the bracket, fall back to
    // bisection and restart the convergence, up to the iteration limit.)
    if (o.curvature > 0.0 && std::abs(newton - X) <= 1e-14 * L) {
      return newton >= lo && newton <= hi ? newton : X;
    }
    X = newton > lo && newton < hi ? newton : 0.5 * (lo + hi);  // bisect if Newton left it
  }
  return X;
}

}  // namespace

double SpatialFlexibleBeam::NearestX(const Eigen::Vector3d& c,
                                     const Eigen::Ref<const Eigen::VectorXd>& eta) const {
  return MinimizeAlongBeam(length(), properties().elements, [&](double X) {
    const SpatialBeamPoint point = PointAt(X);
    const Eigen::Vector3d d = Motion(point, eta, Eigen::VectorXd()).u - c;
    const SpatialBeamCurve curve = Curve(point, eta);
    return Objective{0.5 * d.squaredNorm(), curve.u_x.dot(d),
                     curve.u_x.squaredNorm() + curve.u_xx.dot(d)};
  });
}

double SpatialFlexibleBeam::LowestX(const Eigen::Vector3d& n,
                                    const Eigen::Ref<const Eigen::VectorXd>& eta) const {
  return MinimizeAlongBeam(length(), properties().elements, [&](double X) {
    const SpatialBeamPoint point = PointAt(X);
    const SpatialBeamCurve curve = Curve(point, eta);
    return Objective{n.dot(Motion(point, eta, Eigen::VectorXd()).u), n.dot(curve.u_x),
                     n.dot(curve.u_xx)};
  });
}

SpatialBeamMotion SpatialFlexibleBeam::Motion(
    const SpatialBeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta,
    const Eigen::Ref<const Eigen::VectorXd>& eta_dot) const {
  SpatialBeamMotion motion;
  const Eigen::VectorXd h_eta = point.H * eta;
  motion.B.resize(3, num_modes());
  motion.B.row(0) = point.su - h_eta.transpose();
  motion.B.row(1) = point.sv;
  motion.B.row(2) = point.sw;
  motion.u << point.X + point.su.dot(eta) - 0.5 * eta.dot(h_eta), point.sv.dot(eta),
      point.sw.dot(eta);
  if (torsion_) motion.twist = point.twist.dot(eta);
  if (eta_dot.size() == 0) {
    motion.u_dot.setZero();
    return motion;
  }
  motion.u_dot = motion.B * eta_dot;
  motion.hdot = eta_dot.dot(point.H * eta_dot);
  if (torsion_) motion.twist_rate = point.twist.dot(eta_dot);
  return motion;
}

void SpatialFlexibleBeam::MassMatrix(const Eigen::Matrix3d& R,
                                     const Eigen::Ref<const Eigen::VectorXd>& eta,
                                     Eigen::Ref<Eigen::MatrixXd> M) const {
  const int m = num_modes();
  Eigen::Vector3d s = Eigen::Vector3d::Zero();
  Eigen::Matrix<double, 3, Eigen::Dynamic> S = Eigen::MatrixXd::Zero(3, m);
  Eigen::Matrix3d j_o = Eigen::Matrix3d::Zero();
  Eigen::Matrix<double, 3, Eigen::Dynamic> m_omega_eta = Eigen::MatrixXd::Zero(3, m);
  Eigen::MatrixXd m_eta = Eigen::MatrixXd::Zero(m, m);
  const Eigen::VectorXd none;
  const std::vector<double>& weight = quadrature_weights();
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    const double w = weight[g];
    const SpatialBeamMotion p = Motion(gauss_[g], eta, none);
    s += w * p.u;
    S += w * p.B;
    j_o += w * (p.u.squaredNorm() * Eigen::Matrix3d::Identity() - p.u * p.u.transpose());
    m_omega_eta += w * Skew(p.u) * p.B;
    m_eta.noalias() += w * p.B.transpose() * p.B;
  }
  M.setZero();
  M.topLeftCorner<3, 3>() = mass() * Eigen::Matrix3d::Identity();
  M.block<3, 3>(0, 3) = -R * Skew(s);
  M.block(0, 6, 3, m) = R * S;
  if (torsion_) {
    // The twisted sections: ∫ J(φ), e_x ∫ ρ I_p s_φ, ∫ ρ I_p s_φᵀ s_φ (J(φ) e_x = ρ I_p e_x).
    Eigen::Matrix3d j_sec = Eigen::Matrix3d::Zero();
    for (std::size_t g = 0; g < gauss_.size(); ++g) {
      const Eigen::RowVectorXd& twist = gauss_[g].twist;
      const Eigen::Matrix3d J = SectionInertia(g, twist.dot(eta));
      j_sec += J;
      m_omega_eta.row(0) += J(0, 0) * twist;
      m_eta.noalias() += J(0, 0) * twist.transpose() * twist;
    }
    M.block<3, 3>(3, 3) = j_o + j_sec;
  } else {
    M.block<3, 3>(3, 3) = j_o + Eigen::Matrix3d(section_inertia_.asDiagonal());
  }
  M.block(3, 6, 3, m) = m_omega_eta;
  M.block(6, 6, m, m) = m_eta;
  M.block(3, 0, 3 + m, 3) = M.block(0, 3, 3, 3 + m).transpose();
  M.block(6, 3, m, 3) = m_omega_eta.transpose();
}

void SpatialFlexibleBeam::AddForces(const Eigen::Matrix3d& R,
                                    const Eigen::Ref<const Eigen::VectorXd>& eta,
                                    const Eigen::Vector3d& omega,
                                    const Eigen::Ref<const Eigen::VectorXd>& eta_dot,
                                    const Eigen::Vector3d& gravity,
                                    Eigen::Ref<Eigen::VectorXd> F) const {
  const int m = num_modes();
  const Eigen::Vector3d g_body = R.transpose() * gravity;
  Eigen::Vector3d f_sum = Eigen::Vector3d::Zero(), f_omega = Eigen::Vector3d::Zero();
  Eigen::VectorXd f_eta = Eigen::VectorXd::Zero(m);
  const std::vector<double>& weight = quadrature_weights();
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    const SpatialBeamMotion p = Motion(gauss_[g], eta, eta_dot);
    // The body-frame force density ĝ − â.
    Eigen::Vector3d f = g_body - omega.cross(omega.cross(p.u)) - 2.0 * omega.cross(p.u_dot);
    f.x() += p.hdot;
    f *= weight[g];
    f_sum += f;
    f_omega += p.u.cross(f);
    f_eta.noalias() += p.B.transpose() * f;
  }
  if (torsion_) {
    // The sections' d'Alembert moment φ̇ J (e_x × Ω) − Ω × J Ω, Ω = ω + φ̇ e_x, on ω and on
    // the twist (its x component through s_φᵀ).
    for (std::size_t g = 0; g < gauss_.size(); ++g) {
      const Eigen::RowVectorXd& twist = gauss_[g].twist;
      const double rate = twist.dot(eta_dot);
      const Eigen::Matrix3d J = SectionInertia(g, twist.dot(eta));
      const Eigen::Vector3d Omega = omega + rate * Eigen::Vector3d::UnitX();
      const Eigen::Vector3d moment =
          rate * (J * Eigen::Vector3d::UnitX().cross(Omega)) - Omega.cross(J * Omega);
      f_omega += moment;
      f_eta += moment.x() * twist.transpose();
    }
  } else {
    f_omega -= omega.cross(section_inertia_.cwiseProduct(omega));
  }
  F.head<3>() += R * f_sum;
  F.segment<3>(3) += f_omega;
  F.tail(m) += f_eta;
  F.tail(m).array() -= omega_.array().square() * eta.array() + damping_.array() * eta_dot.array();
}

double SpatialFlexibleBeam::PotentialEnergy(const Eigen::Vector3d& r, const Eigen::Matrix3d& R,
                                            const Eigen::Ref<const Eigen::VectorXd>& eta,
                                            const Eigen::Vector3d& gravity) const {
  Eigen::Vector3d s = Eigen::Vector3d::Zero();
  const std::vector<double>& weight = quadrature_weights();
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    s += weight[g] * Motion(gauss_[g], eta, Eigen::VectorXd()).u;
  }
  const double elastic = 0.5 * (omega_.array().square() * eta.array().square()).sum();
  return elastic - gravity.dot(mass() * r + R * s);
}

}  // namespace saltus::engine

#include "engine/flexible_beam.h"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/validation.h"

namespace saltus::engine {
namespace {

using namespace validation;  // NOLINT: shared builder checks (engine/validation.h)

// Gauss–Legendre nodes and weights on [−1, 1] (Abramowitz & Stegun, Table 25.4). Six points
// integrate polynomials of degree 11 exactly: the mass integrals of the foreshortened
// kinematics reach degree 10 within an element (H is of degree 5, ū·ū holds H²).
constexpr double kGauss6X[6] = {-0.9324695142031521, -0.6612093864662645, -0.2386191860831909,
                                0.2386191860831909,  0.6612093864662645,  0.9324695142031521};
constexpr double kGauss6W[6] = {0.1713244923791704, 0.3607615730481386, 0.4679139345726910,
                                0.4679139345726910, 0.3607615730481386, 0.1713244923791704};
// Three points (degree 5) for H: its integrand s_w'ᵀ s_w' has degree 4.
constexpr double kGauss3X[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};
constexpr double kGauss3W[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};

// Local shape functions at ξ ∈ [0, 1] of an element of length l: axial (N, N'), Hermite
// (H, H', H'') in the order (w_k, φ_k, w_k+1, φ_k+1); derivatives with respect to X.
struct ElementShape {
  Eigen::Vector2d n, dn;
  Eigen::Vector4d h, dh, ddh;
};
ElementShape ShapeAt(double xi, double l) {
  const double x2 = xi * xi, x3 = x2 * xi;
  ElementShape s;
  s.n << 1.0 - xi, xi;
  s.dn << -1.0 / l, 1.0 / l;
  s.h << 1.0 - 3.0 * x2 + 2.0 * x3, l * (xi - 2.0 * x2 + x3), 3.0 * x2 - 2.0 * x3, l * (x3 - x2);
  s.dh << (-6.0 * xi + 6.0 * x2) / l, 1.0 - 4.0 * xi + 3.0 * x2, (6.0 * xi - 6.0 * x2) / l,
      3.0 * x2 - 2.0 * xi;
  s.ddh << (-6.0 + 12.0 * xi) / (l * l), (-4.0 + 6.0 * xi) / l, (6.0 - 12.0 * xi) / (l * l),
      (-2.0 + 6.0 * xi) / l;
  return s;
}
// Nodal indices of element e: u_k, u_k+1 and w_k, φ_k, w_k+1, φ_k+1.
std::array<int, 2> AxialDofs(int e) { return {3 * e, 3 * e + 3}; }
std::array<int, 4> BendingDofs(int e) { return {3 * e + 1, 3 * e + 2, 3 * e + 4, 3 * e + 5}; }

// Coordinates the reference conditions fix (see the header).
std::vector<int> FixedDofs(int elements, BeamReference reference) {
  switch (reference) {
    case BeamReference::kClamped:
      return {0, 1, 2};
    case BeamReference::kPinned:
      return {0, 1, 3 * elements + 1};
    case BeamReference::kFree:
      return {};
  }
  return {};
}

const char* ReferenceName(BeamReference reference) {
  switch (reference) {
    case BeamReference::kClamped:
      return "clamped";
    case BeamReference::kPinned:
      return "pinned";
    case BeamReference::kFree:
      return "free";
  }
  return "?";
}

// Boundary nodes: only with Craig–Bampton, distinct, in [0, n]; the free reference needs one.
void ValidateBoundary(const std::string& label, const BeamProperties& beam) {
  if (beam.reduction != BeamReduction::kCraigBampton) {
    if (!beam.boundary_nodes.empty()) {
      Fail(label, "boundary_nodes need the craig_bampton reduction");
    }
    return;
  }
  for (std::size_t i = 0; i < beam.boundary_nodes.size(); ++i) {
    const int node = beam.boundary_nodes[i];
    if (node < 0 || node > beam.elements) {
      Fail(label, "boundary node " + std::to_string(node) + " does not exist (nodes 0.." +
                      std::to_string(beam.elements) + ")");
    }
    if (std::find(beam.boundary_nodes.begin(), beam.boundary_nodes.begin() + i, node) !=
        beam.boundary_nodes.begin() + i) {
      Fail(label, "boundary node " + std::to_string(node) + " is listed twice");
    }
  }
  if (beam.reference == BeamReference::kFree && beam.boundary_nodes.empty()) {
    Fail(label, "the craig_bampton reduction of a free beam needs at least one boundary node");
  }
}

// Indices (into the free coordinates `active`) of the coordinates of the boundary nodes.
std::vector<int> BoundaryIndices(const std::vector<int>& active, const BeamProperties& beam) {
  std::vector<int> boundary;
  for (int i = 0; i < static_cast<int>(active.size()); ++i) {
    const int node = active[static_cast<std::size_t>(i)] / 3;
    if (std::find(beam.boundary_nodes.begin(), beam.boundary_nodes.end(), node) !=
        beam.boundary_nodes.end()) {
      boundary.push_back(i);
    }
  }
  return boundary;
}

// The Craig–Bampton basis T (see the header) of (k, m) with the boundary coordinates `b` and
// `fixed_modes` fixed-interface modes.
Eigen::MatrixXd CraigBamptonBasis(const Eigen::MatrixXd& k, const Eigen::MatrixXd& m,
                                  const std::vector<int>& b, int fixed_modes) {
  std::vector<int> interior;
  for (int i = 0; i < static_cast<int>(k.rows()); ++i) {
    if (std::find(b.begin(), b.end(), i) == b.end()) interior.push_back(i);
  }
  const Eigen::MatrixXd k_ii = k(interior, interior), m_ii = m(interior, interior);
  const Eigen::LLT<Eigen::MatrixXd> k_ii_llt(k_ii);
  if (k_ii_llt.info() != Eigen::Success) {
    throw std::runtime_error("FlexibleBeam: singular interior stiffness (Craig-Bampton)");
  }
  const auto nb = static_cast<Eigen::Index>(b.size());
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(k.rows(), nb + fixed_modes);
  for (Eigen::Index j = 0; j < nb; ++j) t(b[static_cast<std::size_t>(j)], j) = 1.0;
  t(interior, Eigen::seqN(0, nb)) = -k_ii_llt.solve(k(interior, b));
  if (fixed_modes > 0) {
    const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eig(k_ii, m_ii);
    if (eig.info() != Eigen::Success) {
      throw std::runtime_error("FlexibleBeam: the fixed-interface eigenproblem did not converge");
    }
    t(interior, Eigen::seqN(nb, fixed_modes)) = eig.eigenvectors().leftCols(fixed_modes);
  }
  return t;
}

}  // namespace

std::vector<int> ReferenceFixedCoordinates(int elements, BeamReference reference) {
  return FixedDofs(elements, reference);
}

void ValidateBoundaryNodes(const std::string& label, const BeamProperties& beam) {
  ValidateBoundary(label, beam);
}

Eigen::MatrixXd CraigBamptonSubspace(const Eigen::MatrixXd& k, const Eigen::MatrixXd& m,
                                     const std::vector<int>& boundary, int fixed_modes) {
  return CraigBamptonBasis(k, m, boundary, fixed_modes);
}

int BoundaryCoordinates(const BeamProperties& beam) {
  if (beam.reduction != BeamReduction::kCraigBampton) return 0;
  const std::vector<int> fixed = FixedDofs(beam.elements, beam.reference);
  int count = 0;
  for (const int node : beam.boundary_nodes) {
    for (int c = 3 * node; c < 3 * node + 3; ++c) {
      if (std::find(fixed.begin(), fixed.end(), c) == fixed.end()) ++count;
    }
  }
  return count;
}

int MinimumModes(const BeamProperties& beam) {
  const int rigid = beam.reference == BeamReference::kFree ? 3 : 0;
  return std::max(1, BoundaryCoordinates(beam) - rigid);
}

int AvailableModes(int elements, BeamReference reference) {
  const int all = 3 * (elements + 1);
  return reference == BeamReference::kFree
             ? all - 3
             : all - static_cast<int>(FixedDofs(elements, reference).size());
}

void ValidateBeam(const std::string& label, const BeamProperties& beam) {
  RequirePositive(label, "length", beam.length);
  RequirePositive(label, "E (youngs_modulus)", beam.youngs_modulus);
  RequirePositive(label, "density", beam.density);
  RequirePositive(label, "area", beam.area);
  RequirePositive(label, "second_moment", beam.second_moment);
  RequireNonNegative(label, "rayleigh_alpha", beam.rayleigh_alpha);
  RequireNonNegative(label, "rayleigh_beta", beam.rayleigh_beta);
  RequireNonNegative(label, "modal_damping", beam.modal_damping);
  if (beam.elements < 1) {
    Fail(label, "elements must be >= 1, got " + std::to_string(beam.elements));
  }
  ValidateBoundary(label, beam);
  const int available = AvailableModes(beam.elements, beam.reference);
  const int fewest = MinimumModes(beam);
  if (beam.modes < fewest || beam.modes > available) {
    Fail(label, "modes must be in [" + std::to_string(fewest) + ", " + std::to_string(available) +
                    "] (" + std::to_string(beam.elements) + " elements, " +
                    ReferenceName(beam.reference) + " reference), got " +
                    std::to_string(beam.modes));
  }
}

FlexibleBeam::FlexibleBeam(const BeamProperties& properties, const std::string& label)
    : properties_(properties) {
  ValidateBeam(label, properties_);
  mass_ = properties_.density * properties_.area * properties_.length;
  Assemble();
  Reduce();
  Precompute();
}

double FlexibleBeam::NodeX(int node) const {
  if (node < 0 || node > properties_.elements) {
    throw std::out_of_range("FlexibleBeam: node " + std::to_string(node) + " outside [0, " +
                            std::to_string(properties_.elements) + "]");
  }
  return properties_.length * node / properties_.elements;
}

void FlexibleBeam::Assemble() {
  const int n = properties_.elements;
  const int dofs = 3 * (n + 1);
  const double l = properties_.length / n;
  const double ea = properties_.youngs_modulus * properties_.area;
  const double ei = properties_.youngs_modulus * properties_.second_moment;
  const double rho_a = properties_.density * properties_.area;
  k_fe_.setZero(dofs, dofs);
  m_fe_.setZero(dofs, dofs);
  for (int e = 0; e < n; ++e) {
    const auto ax = AxialDofs(e);
    const auto bd = BendingDofs(e);
    for (int g = 0; g < 6; ++g) {
      const ElementShape s = ShapeAt(0.5 * (1.0 + kGauss6X[g]), l);
      const double w = 0.5 * kGauss6W[g] * l;
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          k_fe_(ax[i], ax[j]) += w * ea * s.dn(i) * s.dn(j);
          m_fe_(ax[i], ax[j]) += w * rho_a * s.n(i) * s.n(j);
        }
      }
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          k_fe_(bd[i], bd[j]) += w * ei * s.ddh(i) * s.ddh(j);
          m_fe_(bd[i], bd[j]) += w * rho_a * s.h(i) * s.h(j);
        }
      }
    }
  }
}

void FlexibleBeam::Reduce() {
  const int dofs = static_cast<int>(k_fe_.rows());
  const std::vector<int> fixed = FixedDofs(properties_.elements, properties_.reference);
  std::vector<int> active;
  for (int i = 0; i < dofs; ++i) {
    if (std::find(fixed.begin(), fixed.end(), i) == fixed.end()) active.push_back(i);
  }
  const Eigen::MatrixXd k = k_fe_(active, active), m = m_fe_(active, active);
  const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eig(k, m);
  if (eig.info() != Eigen::Success) {
    throw std::runtime_error("FlexibleBeam: the generalized eigenproblem did not converge");
  }
  // Free–free: the three lowest modes are the rigid motions (ω = 0 up to round-off).
  const int skip = properties_.reference == BeamReference::kFree ? 3 : 0;
  const int modes = properties_.modes;
  all_omega_ = eig.eigenvalues().tail(k.rows() - skip).cwiseMax(0.0).cwiseSqrt();
  Eigen::MatrixXd vectors;  // columns: xᵀ m x = 1 (Eigen normalizes), ascending ω
  Eigen::VectorXd lambda;
  if (properties_.reduction == BeamReduction::kCraigBampton) {
    const std::vector<int> b = BoundaryIndices(active, properties_);
    const int fixed_modes = modes + skip - static_cast<int>(b.size());
    const Eigen::MatrixXd t = CraigBamptonBasis(k, m, b, fixed_modes);
    const Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> projected(
        t.transpose() * k * t, t.transpose() * m * t);
    if (projected.info() != Eigen::Success) {
      throw std::runtime_error("FlexibleBeam: the projected eigenproblem did not converge");
    }
    vectors = t * projected.eigenvectors();
    lambda = projected.eigenvalues();
  } else {
    vectors = eig.eigenvectors();
    lambda = eig.eigenvalues();
  }
  omega_ = lambda.segment(skip, modes).cwiseMax(0.0).cwiseSqrt();
  damping_ = (properties_.rayleigh_alpha + properties_.rayleigh_beta * omega_.array().square() +
              2.0 * properties_.modal_damping * omega_.array())
                 .matrix();
  phi_.setZero(dofs, modes);
  for (int j = 0; j < modes; ++j) {
    Eigen::VectorXd x = vectors.col(skip + j);
    // A deterministic sign: the entry of largest magnitude is positive.
    Eigen::Index largest = 0;
    x.cwiseAbs().maxCoeff(&largest);
    if (x(largest) < 0.0) x = -x;
    phi_(active, j) = x;
  }
}

void FlexibleBeam::ShapeRows(double X, NodalRows* rows) const {
  const int n = properties_.elements;
  const double l = properties_.length / n;
  const int e = std::clamp(static_cast<int>(std::floor(X / l)), 0, n - 1);
  const ElementShape s = ShapeAt((X - e * l) / l, l);
  const int dofs = 3 * (n + 1);
  for (Eigen::RowVectorXd* row : {&rows->su, &rows->dsu, &rows->sw, &rows->dsw, &rows->ddsw}) {
    row->setZero(dofs);
  }
  const auto ax = AxialDofs(e);
  const auto bd = BendingDofs(e);
  for (int i = 0; i < 2; ++i) {
    rows->su(ax[i]) = s.n(i);
    rows->dsu(ax[i]) = s.dn(i);
  }
  for (int i = 0; i < 4; ++i) {
    rows->sw(bd[i]) = s.h(i);
    rows->dsw(bd[i]) = s.dh(i);
    rows->ddsw(bd[i]) = s.ddh(i);
  }
}

BeamPoint FlexibleBeam::PointAt(double X) const {
  const double L = properties_.length;
  if (!(X >= 0.0 && X <= L)) {
    throw std::out_of_range("FlexibleBeam: X = " + Num(X) + " outside [0, " + Num(L) + "]");
  }
  NodalRows rows;
  ShapeRows(X, &rows);
  BeamPoint p;
  p.X = X;
  p.su = rows.su * phi_;
  p.sw = rows.sw * phi_;
  p.slope = rows.dsw * phi_;
  p.dsu = rows.dsu * phi_;
  p.dslope = rows.ddsw * phi_;
  const int m = num_modes();
  p.H.setZero(m, m);
  if (!properties_.geometric_stiffening) return p;
  // H(X) = ∫₀^X ψᵀψ dξ element by element (3-point Gauss is exact on each piece).
  const int n = properties_.elements;
  const double l = L / n;
  for (int e = 0; e < n && e * l < X; ++e) {
    const double a = e * l, b = std::min(X, (e + 1) * l);
    for (int g = 0; g < 3; ++g) {
      const double xg = a + 0.5 * (b - a) * (1.0 + kGauss3X[g]);
      ShapeRows(xg, &rows);  // xg is inside element e (Gauss nodes are interior)
      const Eigen::RowVectorXd psi = rows.dsw * phi_;
      p.H.noalias() += 0.5 * (b - a) * kGauss3W[g] * psi.transpose() * psi;
    }
  }
  return p;
}

BeamCurve FlexibleBeam::Curve(const BeamPoint& point,
                              const Eigen::Ref<const Eigen::VectorXd>& eta) const {
  const double psi_eta = point.slope.dot(eta), dpsi_eta = point.dslope.dot(eta);
  const double stiff = properties_.geometric_stiffening ? 1.0 : 0.0;
  BeamCurve curve;
  curve.u_x << 1.0 + point.dsu.dot(eta) - 0.5 * stiff * psi_eta * psi_eta, psi_eta;
  curve.u_xx << -stiff * psi_eta * dpsi_eta, dpsi_eta;
  curve.B_x.resize(2, num_modes());
  curve.B_x.row(0) = point.dsu - stiff * psi_eta * point.slope;
  curve.B_x.row(1) = point.slope;
  return curve;
}

double FlexibleBeam::NearestX(const Eigen::Vector2d& c,
                              const Eigen::Ref<const Eigen::VectorXd>& eta) const {
  const double L = length();
  // f(X) = ū_X·(ū − c) and f'(X).
  const auto f = [&](double X, double* df) {
    const BeamPoint point = PointAt(X);
    const Eigen::Vector2d d = Motion(point, eta, Eigen::VectorXd()).u - c;
    const BeamCurve curve = Curve(point, eta);
    if (df != nullptr) *df = curve.u_x.squaredNorm() + curve.u_xx.dot(d);
    return curve.u_x.dot(d);
  };
  // The nearest of 2n + 1 samples (nodes and element midpoints) brackets the nearest point.
  const int samples = 2 * properties_.elements;
  int best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int j = 0; j <= samples; ++j) {
    const double distance =
        (Motion(PointAt(L * j / samples), eta, Eigen::VectorXd()).u - c).squaredNorm();
    if (distance < best_distance) {
      best_distance = distance;
      best = j;
    }
  }
  double lo = L * std::max(best - 1, 0) / samples, hi = L * std::min(best + 1, samples) / samples;
  if (f(lo, nullptr) >= 0.0) return lo;  // X = 0, or a local minimum at a sample
  if (f(hi, nullptr) <= 0.0) return hi;
  double X = L * best / samples;
  for (int iteration = 0; iteration < 40; ++iteration) {
    double df = 0.0;
    const double value = f(X, &df);
    if (value == 0.0) return X;
    (value < 0.0 ? lo : hi) = X;
    double next = df > 0.0 ? X - value / df : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);  // Newton left the bracket
    const double step = std::abs(next - X);
    X = next;
    if (step <= 1e-14 * L) break;
  }
  return X;
}

void FlexibleBeam::Precompute() {
  const int n = properties_.elements;
  const double l = properties_.length / n;
  const double rho_a = properties_.density * properties_.area;
  gauss_.clear();
  weight_.clear();
  for (int e = 0; e < n; ++e) {
    for (int g = 0; g < 6; ++g) {
      gauss_.push_back(PointAt(e * l + 0.5 * (1.0 + kGauss6X[g]) * l));
      weight_.push_back(rho_a * 0.5 * kGauss6W[g] * l);
    }
  }
}

BeamPointMotion FlexibleBeam::Motion(const BeamPoint& point,
                                     const Eigen::Ref<const Eigen::VectorXd>& eta,
                                     const Eigen::Ref<const Eigen::VectorXd>& eta_dot) const {
  BeamPointMotion motion;
  Eigen::VectorXd h_eta;
  MotionInto(point, eta, eta_dot, &motion, &h_eta);
  return motion;
}

void FlexibleBeam::MotionInto(const BeamPoint& point, const Eigen::Ref<const Eigen::VectorXd>& eta,
                              const Eigen::Ref<const Eigen::VectorXd>& eta_dot,
                              BeamPointMotion* motion, Eigen::VectorXd* h_eta) const {
  motion->B.resize(2, num_modes());
  motion->B.row(0) = point.su;
  motion->B.row(1) = point.sw;
  motion->u << point.X + point.su.dot(eta), point.sw.dot(eta);
  motion->hdot = 0.0;
  if (properties_.geometric_stiffening) {
    h_eta->noalias() = point.H * eta;
    motion->u.x() -= 0.5 * eta.dot(*h_eta);
    motion->B.row(0) -= h_eta->transpose();
  }
  if (eta_dot.size() == 0) {
    motion->u_dot.setZero();
    return;
  }
  motion->u_dot << motion->B.row(0).dot(eta_dot), motion->B.row(1).dot(eta_dot);
  if (properties_.geometric_stiffening) {
    h_eta->noalias() = point.H * eta_dot;
    motion->hdot = eta_dot.dot(*h_eta);
  }
}

namespace {
Eigen::Matrix2d Rotation(double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  return (Eigen::Matrix2d() << c, -s, s, c).finished();
}
Eigen::Vector2d Perp(const Eigen::Vector2d& x) { return {-x.y(), x.x()}; }
}  // namespace

void FlexibleBeam::MassMatrix(double theta, const Eigen::Ref<const Eigen::VectorXd>& eta,
                              Eigen::Ref<Eigen::MatrixXd> M) const {
  const int m = num_modes();
  Eigen::Vector2d s = Eigen::Vector2d::Zero();
  Eigen::Matrix<double, 2, Eigen::Dynamic> S = Eigen::MatrixXd::Zero(2, m);
  double i_theta = 0.0;
  Eigen::RowVectorXd m_theta_eta = Eigen::RowVectorXd::Zero(m);
  Eigen::MatrixXd m_eta = Eigen::MatrixXd::Zero(m, m);
  const Eigen::VectorXd none;
  BeamPointMotion p;
  Eigen::VectorXd scratch(m);
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    const double w = weight_[g];
    MotionInto(gauss_[g], eta, none, &p, &scratch);
    s += w * p.u;
    S += w * p.B;
    i_theta += w * p.u.squaredNorm();
    // (J ū)ᵀ B and Bᵀ B written out: the 2-row products are too small for Eigen's GEMM path.
    m_theta_eta += (-w * p.u.y()) * p.B.row(0) + (w * p.u.x()) * p.B.row(1);
    for (int j = 0; j < m; ++j) {
      const double b0 = w * p.B(0, j), b1 = w * p.B(1, j);
      for (int i = j; i < m; ++i) m_eta(i, j) += b0 * p.B(0, i) + b1 * p.B(1, i);
    }
  }
  const Eigen::Matrix2d A = Rotation(theta);
  M.setZero();
  M(0, 0) = M(1, 1) = mass_;
  M.block<2, 1>(0, 2) = Perp(A * s);
  M.block(0, 3, 2, m) = A * S;
  M(2, 2) = i_theta;
  M.block(2, 3, 1, m) = m_theta_eta;
  M.block(3, 3, m, m) = m_eta.selfadjointView<Eigen::Lower>();
  M.block(2, 0, 1, 2) = M.block<2, 1>(0, 2).transpose();
  M.block(3, 0, m, 3) = M.block(0, 3, 3, m).transpose();
}

void FlexibleBeam::AddForces(double theta, const Eigen::Ref<const Eigen::VectorXd>& eta,
                             double omega, const Eigen::Ref<const Eigen::VectorXd>& eta_dot,
                             const Eigen::Vector2d& gravity, Eigen::Ref<Eigen::VectorXd> F) const {
  const int m = num_modes();
  const Eigen::Matrix2d A = Rotation(theta);
  const Eigen::Vector2d g_body = A.transpose() * gravity;
  // Per point: the body-frame force density −â + ĝ, with â = −ω² ū + 2 ω J ū̇ − ḣ e_x.
  Eigen::Vector2d f_sum = Eigen::Vector2d::Zero();
  double f_theta = 0.0;
  Eigen::VectorXd f_eta = Eigen::VectorXd::Zero(m);
  BeamPointMotion p;
  Eigen::VectorXd scratch(m);
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    const double w = weight_[g];
    MotionInto(gauss_[g], eta, eta_dot, &p, &scratch);
    Eigen::Vector2d f = omega * omega * p.u - 2.0 * omega * Perp(p.u_dot) + g_body;
    f.x() += p.hdot;
    f *= w;
    f_sum += f;
    f_theta += Perp(p.u).dot(f);
    f_eta += f.x() * p.B.row(0).transpose() + f.y() * p.B.row(1).transpose();
  }
  F.head<2>() += A * f_sum;
  F(2) += f_theta;
  F.tail(m) += f_eta;
  F.tail(m).array() -= omega_.array().square() * eta.array();
  F.tail(m).array() -= damping_.array() * eta_dot.array();
}

double FlexibleBeam::PotentialEnergy(const Eigen::Vector2d& r, double theta,
                                     const Eigen::Ref<const Eigen::VectorXd>& eta,
                                     const Eigen::Vector2d& gravity) const {
  Eigen::Vector2d s = Eigen::Vector2d::Zero();
  const Eigen::VectorXd none;
  BeamPointMotion p;
  Eigen::VectorXd scratch(num_modes());
  for (std::size_t g = 0; g < gauss_.size(); ++g) {
    MotionInto(gauss_[g], eta, none, &p, &scratch);
    s += weight_[g] * p.u;
  }
  const double elastic = 0.5 * (omega_.array().square() * eta.array().square()).sum();
  return elastic - gravity.dot(mass_ * r + Rotation(theta) * s);
}

Eigen::MatrixXd FlexibleBeam::ModalStiffness() const {
  return omega_.array().square().matrix().asDiagonal();
}

Eigen::MatrixXd FlexibleBeam::ModalDamping() const { return damping_.asDiagonal(); }

}  // namespace saltus::engine

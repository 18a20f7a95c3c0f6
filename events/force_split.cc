#include "events/force_split.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "contact/small_lp.h"

namespace saltus::events {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr int kFacets = 16;           // faceted inner cone in space (header)
constexpr double kMarginShare = 0.1;  // s_cap = 0.1 max μ|λ_N|
constexpr double kNullTolerance = 1e-10;

// One linear inequality aᵀα ≥ β − σ s on the offset coefficients α (σ = 1 on the cone rows, 0 on
// the normal rows), in the units of the forces.
struct Inequality {
  VectorXd a;
  double beta = 0;
  double sigma = 0;
};

// Positions of a row in the (ascending) active rows.
Eigen::Index Position(const std::vector<int>& active, int row) {
  return std::lower_bound(active.begin(), active.end(), row) - active.begin();
}

// Basis of {x : Hᵀ x = 0} (m × k): the left singular vectors of H with σ ≤ 1e-10 σ_max.
MatrixXd LeftNullSpace(const MatrixXd& H) {
  Eigen::JacobiSVD<MatrixXd> svd(H, Eigen::ComputeFullU);
  const VectorXd& sigma = svd.singularValues();
  const double largest = sigma.size() > 0 ? sigma[0] : 0.0;
  Eigen::Index rank = 0;
  while (rank < sigma.size() && sigma[rank] > kNullTolerance * largest) ++rank;
  return svd.matrixU().rightCols(H.rows() - rank);
}

// Solves max s (with s ≤ s_cap) over aᵢᵀα + σᵢ s ≥ βᵢ... written as aᵢᵀα − σᵢ s − wᵢ = βᵢ'
// in the standard form of SmallLp (α = α⁺ − α⁻, s = s⁺ − s⁻, slacks w ≥ 0), then min ‖α‖₁ at
// that s. Returns false when the LP fails (the caller keeps δλ = 0).
bool SolveSplit(const std::vector<Inequality>& rows, double s_cap, double tolerance,
                VectorXd* alpha) {
  const auto k = rows.front().a.size();
  const auto m = static_cast<Eigen::Index>(rows.size());
  // Columns: α⁺ (k), α⁻ (k), s⁺, s⁻, w (m), r (cap slack).
  const Eigen::Index n = 2 * k + 2 + m + 1;
  MatrixXd A = MatrixXd::Zero(m + 1, n);
  VectorXd b(m + 1);
  for (Eigen::Index i = 0; i < m; ++i) {
    const Inequality& row = rows[static_cast<std::size_t>(i)];
    A.block(i, 0, 1, k) = row.a.transpose();
    A.block(i, k, 1, k) = -row.a.transpose();
    A(i, 2 * k) = -row.sigma;
    A(i, 2 * k + 1) = row.sigma;
    A(i, 2 * k + 2 + i) = -1.0;
    b[i] = row.beta;
  }
  A(m, 2 * k) = 1.0;
  A(m, 2 * k + 1) = -1.0;
  A(m, n - 1) = 1.0;
  b[m] = s_cap;
  contact::SmallLp lp1(A, b, tolerance);
  VectorXd c = VectorXd::Zero(n);
  c[2 * k] = -1.0;
  c[2 * k + 1] = 1.0;
  if (!lp1.feasible() || lp1.Minimize(c) != contact::LpStatus::kOptimal) return false;
  VectorXd x = lp1.x();
  const double s_best = x[2 * k] - x[2 * k + 1];
  *alpha = x.head(k) - x.segment(k, k);
  // 2: s fixed just below its optimum (feasible to round-off), the smallest ‖α‖₁.
  const double s_fixed = s_best - tolerance;
  MatrixXd A2(m, 2 * k + m);
  VectorXd b2(m);
  A2 << A.block(0, 0, m, 2 * k), A.block(0, 2 * k + 2, m, m);
  for (Eigen::Index i = 0; i < m; ++i)
    b2[i] = b[i] + rows[static_cast<std::size_t>(i)].sigma * s_fixed;
  contact::SmallLp lp2(A2, b2, tolerance);
  VectorXd c2 = VectorXd::Zero(2 * k + m);
  c2.head(2 * k).setOnes();
  if (lp2.feasible() && lp2.Minimize(c2) == contact::LpStatus::kOptimal) {
    const VectorXd x2 = lp2.x();
    *alpha = x2.head(k) - x2.segment(k, k);
  }
  return true;
}

}  // namespace

void ForceSplit::Compute(const engine::MechanicalSystem& system, double t, const VectorXd& q,
                         const VectorXd& v, const ContactModes& modes, const VectorXd& lambda) {
  offset_.resize(0);
  const std::vector<int>& active = modes.active();
  if (modes.sticking().empty() || lambda.size() != static_cast<Eigen::Index>(active.size())) return;
  // The minimum-norm split admissible already: nothing to change.
  double worst = 0.0, scale = 0.0;
  for (const ContactState& s : modes.states()) {
    const double mu = system.constraint_info(s.row).friction;
    const double n = lambda[Position(active, s.row)];
    scale = std::max(scale, std::abs(n));
    worst = std::min(worst, n);
    if (s.mode != ContactMode::kStick) continue;
    double tangential = 0.0;
    for (int r : system.TangentRows(s.row)) tangential += std::pow(lambda[Position(active, r)], 2);
    worst = std::min(worst, mu * n - std::sqrt(tangential));
  }
  if (worst >= 0.0 || scale == 0.0) return;

  MatrixXd H;
  if (system.HasNonIdealForces()) {
    system.ForceDirections(t, q, v, active, &H);
  } else {
    system.ConstraintJacobian(t, q, active, &H);
  }
  const MatrixXd N = LeftNullSpace(H);
  if (N.cols() == 0) return;

  std::vector<Inequality> rows;
  double cap = 0.0;
  for (const ContactState& s : modes.states()) {
    const Eigen::Index pn = Position(active, s.row);
    // λ_N + δλ_N ≥ 0.
    rows.push_back({N.row(pn).transpose(), -lambda[pn], 0.0});
    if (s.mode != ContactMode::kStick) continue;
    const double mu = system.constraint_info(s.row).friction;
    cap = std::max(cap, kMarginShare * mu * std::abs(lambda[pn]));
    const auto tangents = system.TangentRows(s.row);
    const int facets = tangents.size() == 2 ? kFacets : 2;
    const double mu_in = tangents.size() == 2 ? mu * std::cos(std::numbers::pi / kFacets) : mu;
    for (int j = 0; j < facets; ++j) {
      const double angle = 2.0 * std::numbers::pi * j / facets;
      const Eigen::Vector2d dir(std::cos(angle), std::sin(angle));
      // μ'(λ_N + N_N α) − cᵀ(λ_T + N_T α) ≥ s.
      VectorXd a = mu_in * N.row(pn).transpose();
      double beta = -mu_in * lambda[pn];
      for (std::size_t d = 0; d < tangents.size(); ++d) {
        const Eigen::Index pt = Position(active, tangents[d]);
        a -= dir[static_cast<Eigen::Index>(d)] * N.row(pt).transpose();
        beta += dir[static_cast<Eigen::Index>(d)] * lambda[pt];
      }
      rows.push_back({a, beta, 1.0});
    }
  }
  VectorXd alpha;
  if (!SolveSplit(rows, cap, 1e-12 * std::max(1.0, scale), &alpha)) return;
  offset_ = N * alpha;
}

}  // namespace saltus::events

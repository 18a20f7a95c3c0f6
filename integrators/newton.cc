#include "integrators/newton.h"

#include <algorithm>
#include <cmath>

namespace saltus::integrators {

namespace {

// The power of two nearest below 1/a (a > 0), or 1 for a = 0 (a zero row or column: the matrix
// is singular whatever the scale).
double InversePowerOfTwo(double a) { return a > 0.0 ? std::ldexp(1.0, -std::ilogb(a)) : 1.0; }

}  // namespace

bool IterationMatrix::Nonsingular(bool record) {
  // Eigen's estimate misses exact singularity (a zero pivot yields rcond ≈ 0.2 on a matrix with
  // two equal rows), so the pivots are checked too: κ(U) ≥ max|u_ii| / min|u_ii|.
  const auto pivots = lu_.matrixLU().diagonal().cwiseAbs();  // an expression: no allocation
  const double rcond = lu_.rcond(), smallest = pivots.minCoeff(), largest = pivots.maxCoeff();
  if (record) pivot_ratio_ = largest > 0.0 ? smallest / largest : 0.0;
  return std::isfinite(rcond) && rcond > kSingularRcond && pivots.allFinite() &&
         smallest > kSingularRcond * largest;
}

bool IterationMatrix::Factorize(const Eigen::MatrixXd& S, Eigen::Index constraint_rows) {
  ++factorizations_;
  valid_ = false;
  regularized_ = false;
  if (!S.allFinite()) return false;
  const Eigen::Index n = S.rows();
  row_scale_.resize(n);
  col_scale_.resize(n);
  for (Eigen::Index i = 0; i < n; ++i)
    row_scale_(i) = InversePowerOfTwo(S.row(i).cwiseAbs().maxCoeff());
  for (Eigen::Index j = 0; j < n; ++j)
    col_scale_(j) = InversePowerOfTwo(row_scale_.cwiseProduct(S.col(j).cwiseAbs()).maxCoeff());
  lu_.compute(row_scale_.asDiagonal() * S * col_scale_.asDiagonal());
  valid_ = Nonsingular(/*record=*/true);
  if (valid_ || constraint_rows <= 0 || constraint_rows > n) return valid_;
  // A singular saddle-point matrix: S_δ = S̃ + δ [0 0; 0 I] (header), refined against S̃.
  scaled_ = row_scale_.asDiagonal() * S * col_scale_.asDiagonal();
  Eigen::MatrixXd regularized = scaled_;
  regularized.diagonal().tail(constraint_rows).array() += kSaddleRegularization;
  lu_.compute(regularized);
  valid_ = Nonsingular(/*record=*/false);
  regularized_ = valid_;
  if (valid_) ++regularizations_;
  return valid_;
}

void IterationMatrix::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  work_ = row_scale_.cwiseProduct(b);  // x may alias b
  *x = lu_.solve(work_);
  if (regularized_) {
    // Iterated penalty correction (header): x ← x + S_δ⁻¹ (b̃ − S̃ x) while the residual halves.
    residual_.noalias() = work_ - scaled_ * *x;
    double norm = residual_.lpNorm<Eigen::Infinity>();
    for (int k = 0; k < kRefinements && norm > 0.0; ++k) {
      correction_ = lu_.solve(residual_);
      *x += correction_;
      residual_.noalias() = work_ - scaled_ * *x;
      const double next = residual_.lpNorm<Eigen::Infinity>();
      if (!(next <= norm)) {  // round-off reached: keep the better iterate
        *x -= correction_;
        break;
      }
      if (!(next < 0.5 * norm)) break;
      norm = next;
    }
  }
  x->array() *= col_scale_.array();
}

void NewtonMonitor::Start() {
  iterations_ = 0;
  previous_ = 0.0;
  rate_ = 0.0;
  last_theta_ = 0.0;
}

NewtonProgress NewtonMonitor::Update(double increment_norm) {
  ++iterations_;
  if (!std::isfinite(increment_norm)) return NewtonProgress::kDiverging;
  if (increment_norm <= options_.tol) return NewtonProgress::kConverged;
  if (iterations_ >= 2 && previous_ > 0.0) {
    const double theta = increment_norm / previous_;
    rate_ = std::max(rate_, theta);
    // One non-contracting iterate is tolerated (decoupled iterations such as the GGL position
    // correction are not monotone); two in a row, or growth by 2, is divergence.
    if (theta >= 2.0 || (theta >= 1.0 && last_theta_ >= 1.0)) return NewtonProgress::kDiverging;
    last_theta_ = theta;
    if (theta >= 1.0) {
      previous_ = increment_norm;
      return iterations_ >= options_.max_iterations ? NewtonProgress::kDiverging
                                                    : NewtonProgress::kContinue;
    }
    // Predicted error after this iterate (Hairer & Wanner II, eq. 8.13).
    if (theta / (1.0 - theta) * increment_norm <= options_.tol) return NewtonProgress::kConverged;
    const int left = options_.max_iterations - iterations_;
    if (left <= 0 || std::pow(theta, left) / (1.0 - theta) * increment_norm > options_.tol * 1e3) {
      // Cannot reach tol (with a margin of 1e3 on the prediction) within the budget.
      return NewtonProgress::kDiverging;
    }
  } else if (iterations_ >= options_.max_iterations) {
    return NewtonProgress::kDiverging;
  }
  previous_ = increment_norm;
  return NewtonProgress::kContinue;
}

}  // namespace saltus::integrators

#include "integrators/newton.h"

#include <algorithm>
#include <cmath>

namespace saltus::integrators {

bool IterationMatrix::Factorize(const Eigen::MatrixXd& S) {
  ++factorizations_;
  valid_ = false;
  if (!S.allFinite()) return false;
  lu_.compute(S);
  const double rcond = lu_.rcond();
  valid_ = std::isfinite(rcond) && rcond > kSingularRcond;
  return valid_;
}

void IterationMatrix::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  *x = lu_.solve(b);
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

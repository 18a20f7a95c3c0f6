#include "contact/monotone_lcp.h"

#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/sparse_lcp.h"

namespace saltus::contact {
namespace {

using SpMat = Eigen::SparseMatrix<double>;

// Neighbourhood of the interior-point iterates (header, step 1).
constexpr double kCentrality = 1e-4;          // z_i w_i ≥ kCentrality μ
constexpr double kInfeasibilityRatio = 1e3;   // ‖r‖/μ ≤ kInfeasibilityRatio ‖r₀‖/μ₀
constexpr double kSufficientDecrease = 0.01;  // μ(α) ≤ (1 − 0.01 α) μ
constexpr double kBoundaryFraction = 0.99;    // of the largest step keeping z, w > 0
constexpr int kMaxIterations = 200;
constexpr double kDivergence = 1e10;     // ‖z̃‖∞ above this: test the Farkas certificate
constexpr double kFirstRefineMu = 1e-8;  // μ at which the refinements start (header, step 2)

void Validate(const SpMat& W, const Eigen::VectorXd& b, const LcpOptions& options) {
  const std::string who = "SolveMonotoneLcp";
  const Eigen::Index n = b.size();
  if (W.rows() != n || W.cols() != n) {
    throw std::invalid_argument(who + ": W is " + std::to_string(W.rows()) + " x " +
                                std::to_string(W.cols()) + " but b has " + std::to_string(n) +
                                " entries");
  }
  if (!b.allFinite()) throw std::invalid_argument(who + ": b has a non-finite entry");
  for (Eigen::Index k = 0; k < W.outerSize(); ++k) {
    for (SpMat::InnerIterator it(W, k); it; ++it) {
      if (!std::isfinite(it.value()))
        throw std::invalid_argument(who + ": W has a non-finite entry");
    }
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument(who + ": tolerance must be finite and > 0, got " +
                                std::to_string(options.tolerance));
  }
}

// Largest α ∈ (0, 1] with x + α dx ≥ 0 (times kBoundaryFraction when the boundary is hit).
double StepToBoundary(const Eigen::VectorXd& x, const Eigen::VectorXd& dx) {
  double alpha = 1.0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (dx[i] < 0.0) alpha = std::min(alpha, -kBoundaryFraction * x[i] / dx[i]);
  }
  return alpha;
}

// The interior-point iteration on the scaled problem (W̃, b̃): the matrix W̃ + D with its
// diagonal slots, factorized once per iteration.
class InteriorPoint {
 public:
  InteriorPoint(const SpMat& W_scaled, const Eigen::VectorXd& b_scaled)
      : W_(W_scaled), b_(b_scaled), n_(b_scaled.size()) {
    // A = W̃ + I: the pattern of W̃ with every diagonal entry present.
    SpMat identity(n_, n_);
    identity.setIdentity();
    A_ = W_ + identity;
    A_.makeCompressed();
    diag_slot_.resize(static_cast<std::size_t>(n_));
    for (Eigen::Index j = 0; j < n_; ++j) {
      for (SpMat::InnerIterator it(A_, j); it; ++it) {
        if (it.row() == j) diag_slot_[static_cast<std::size_t>(j)] = &it.valueRef();
      }
    }
    w_diag_ = W_.diagonal();
    ldlt_.analyzePattern(A_);
  }

  // Sets z = w = 1 and the reference ratio ‖r₀‖ / μ₀.
  void Start() {
    z_ = Eigen::VectorXd::Ones(n_);
    w_ = Eigen::VectorXd::Ones(n_);
    r_ = W_ * z_ + b_ - w_;
    mu_ = z_.dot(w_) / static_cast<double>(n_);
    ratio0_ = std::max(r_.lpNorm<Eigen::Infinity>(), 1e-300) / mu_;
  }

  // One iteration. Returns false when no step is possible (stalled or singular).
  bool Iterate() {
    for (Eigen::Index i = 0; i < n_; ++i) {
      *diag_slot_[static_cast<std::size_t>(i)] = w_diag_[i] + w_[i] / z_[i];
    }
    ldlt_.factorize(A_);
    if (ldlt_.info() != Eigen::Success) return false;
    // Predictor (σ = 0): (W̃ + Z⁻¹S) Δz = −w − r, Δw = W̃ Δz + r.
    Eigen::VectorXd dz_aff, dw_aff;
    Direction(Eigen::VectorXd::Zero(n_), &dz_aff, &dw_aff);
    const double alpha_aff = std::min(StepToBoundary(z_, dz_aff), StepToBoundary(w_, dw_aff));
    const double mu_aff =
        (z_ + alpha_aff * dz_aff).dot(w_ + alpha_aff * dw_aff) / static_cast<double>(n_);
    const double sigma = std::pow(std::clamp(mu_aff / mu_, 0.0, 1.0), 3);
    // Corrector: complementarity target σ μ e − Δz_aff ∘ Δw_aff.
    Eigen::VectorXd dz, dw;
    Direction(Eigen::VectorXd::Constant(n_, sigma * mu_) - dz_aff.cwiseProduct(dw_aff), &dz, &dw);
    if (TakeStep(dz, dw)) return true;
    // Centring step, inside the neighbourhood by construction for a small enough α.
    Direction(Eigen::VectorXd::Constant(n_, 0.5 * mu_), &dz, &dw);
    return TakeStep(dz, dw);
  }

  const Eigen::VectorXd& z() const { return z_; }
  const Eigen::VectorXd& w() const { return w_; }
  double mu() const { return mu_; }

 private:
  // (W̃ + Z⁻¹S) Δz = Z⁻¹ target − w − r,  Δw = W̃ Δz + r  (linearization of W̃ z + b̃ − w = 0 and
  // z_i w_i = target_i); r = W̃ z + b̃ − w.
  void Direction(const Eigen::VectorXd& target, Eigen::VectorXd* dz, Eigen::VectorXd* dw) {
    const Eigen::VectorXd rhs = target.cwiseQuotient(z_) - w_ - r_;
    *dz = ldlt_.solve(rhs);
    *dw = W_ * *dz + r_;
  }

  // Backtracks α from the boundary step until the neighbourhood and the decrease of μ hold.
  bool TakeStep(const Eigen::VectorXd& dz, const Eigen::VectorXd& dw) {
    if (!dz.allFinite() || !dw.allFinite()) return false;
    double alpha = std::min(StepToBoundary(z_, dz), StepToBoundary(w_, dw));
    for (int k = 0; k < 40 && alpha > 1e-12; ++k, alpha *= 0.5) {
      const Eigen::VectorXd z = z_ + alpha * dz, w = w_ + alpha * dw;
      if (z.minCoeff() <= 0.0 || w.minCoeff() <= 0.0) continue;
      const double mu = z.dot(w) / static_cast<double>(n_);
      const Eigen::VectorXd r = (1.0 - alpha) * r_;  // r is linear along the step
      if (mu > (1.0 - kSufficientDecrease * alpha) * mu_) continue;
      if (z.cwiseProduct(w).minCoeff() < kCentrality * mu) continue;
      if (r.lpNorm<Eigen::Infinity>() > kInfeasibilityRatio * ratio0_ * mu) continue;
      z_ = z;
      w_ = w;
      r_ = W_ * z_ + b_ - w_;  // recomputed: no drift of the linear update
      mu_ = mu;
      return true;
    }
    return false;
  }

  const SpMat& W_;
  const Eigen::VectorXd& b_;
  Eigen::Index n_;
  SpMat A_;
  std::vector<double*> diag_slot_;
  Eigen::VectorXd w_diag_;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
  Eigen::VectorXd z_, w_, r_;
  double mu_ = 1.0, ratio0_ = 1.0;
};

double NaturalResidual(const Eigen::VectorXd& z, const Eigen::VectorXd& w, double scale) {
  return z.size() > 0 ? w.cwiseMin(z).cwiseAbs().maxCoeff() / scale : 0.0;
}

// The Farkas certificate of the header: y = z / ‖z‖ ≥ 0 with W̃ y ≈ 0 and b̃ᵀ y < 0.
bool IsInfeasibilityCertificate(const SpMat& W, const Eigen::VectorXd& b,
                                const Eigen::VectorXd& z) {
  const double norm = z.lpNorm<Eigen::Infinity>();
  if (!(norm > 0.0) || !std::isfinite(norm)) return false;
  const Eigen::VectorXd y = z / norm;
  return (W * y).lpNorm<Eigen::Infinity>() <= 1e-8 && b.dot(y) < -1e-8;
}

}  // namespace

LcpResult SolveMonotoneLcp(const SpMat& W, const Eigen::VectorXd& b, const LcpOptions& options) {
  Validate(W, b, options);
  const Eigen::Index n = b.size();
  LcpResult result;
  result.z = Eigen::VectorXd::Zero(n);
  result.w = b;
  const double b_scale = std::max(1.0, n > 0 ? b.lpNorm<Eigen::Infinity>() : 0.0);
  if (n == 0 || b.minCoeff() >= 0.0) {  // z = 0 solves it
    result.ok = true;
    result.message = "lcp interior point: z = 0 (b >= 0)";
    return result;
  }
  const double w_scale = W.diagonal().maxCoeff();
  if (!(w_scale > 0.0)) {  // W ⪰ 0 with a zero diagonal is W = 0, and some b_i < 0
    result.message = "lcp interior point: no solution (W = 0 and b has a negative entry)";
    result.residual = NaturalResidual(result.z, result.w, b_scale);
    return result;
  }
  // Scaled problem: w / β = W̃ z̃ + b̃, W̃ = W / s, b̃ = b / β, z = β z̃ / s.
  const SpMat W_scaled = W / w_scale;
  const Eigen::VectorXd b_scaled = b / b_scale;
  const double z_unscale = b_scale / w_scale;
  InteriorPoint ipm(W_scaled, b_scaled);
  ipm.Start();
  double next_refine_mu = kFirstRefineMu;
  int refinements = 0;
  std::string why = "iteration limit";
  int iteration = 0;
  const auto try_refine = [&]() {
    ++refinements;
    // F = {z_i > w_i}: z kept on F, zero elsewhere.
    Eigen::VectorXd z_start = (ipm.z().array() > ipm.w().array()).select(ipm.z(), 0.0);
    LcpResult refined = RefineLcpSparse(W, b, options, z_unscale * z_start);
    if (!refined.ok) return false;
    result = refined;
    return true;
  };
  for (; iteration < kMaxIterations; ++iteration) {
    // The interior iterate itself may already pass the test.
    Eigen::VectorXd z = z_unscale * ipm.z();
    Eigen::VectorXd w = W * z + b;
    if (NaturalResidual(z, w, b_scale) <= options.tolerance) {
      result.z = z;
      result.w = w;
      result.ok = true;
      break;
    }
    if (ipm.mu() <= next_refine_mu) {
      next_refine_mu = 0.1 * ipm.mu();
      if (try_refine()) break;
    }
    if (ipm.z().lpNorm<Eigen::Infinity>() > kDivergence) {
      why = "diverging iterates";
      break;
    }
    if (!ipm.Iterate()) {
      why = "no step possible (stalled)";
      break;
    }
  }
  if (!result.ok && try_refine()) result.ok = true;  // a last attempt from where it stopped
  if (result.ok) {
    result.residual = NaturalResidual(result.z, result.w, b_scale);
    result.ok = result.residual <= options.tolerance;
  }
  result.iterations = iteration;
  const std::string counts =
      std::to_string(iteration) + " iterations, " + std::to_string(refinements) + " refinements";
  if (result.ok) {
    result.message = "lcp interior point: " + counts;
    return result;
  }
  result.z = (z_unscale * ipm.z()).cwiseMax(0.0);
  result.w = W * result.z + b;
  result.residual = NaturalResidual(result.z, result.w, b_scale);
  result.message = IsInfeasibilityCertificate(W_scaled, b_scaled, ipm.z())
                       ? "lcp interior point: no solution: y >= 0 with W y = 0 and b'y < 0 (Farkas "
                         "certificate from the diverging iterates; " +
                             counts + ")"
                       : "lcp interior point: no verified solution (" + why + ", " + counts +
                             ", mu " + std::to_string(ipm.mu()) + ")";
  return result;
}

}  // namespace saltus::contact

#include "contact/fc3d_newton.h"

#include <Eigen/SparseLU>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "contact/fc3d_newton_internal.h"
#include "contact/friction_cone.h"

namespace saltus::contact {
namespace fc3d_internal {

AcBlock AlartCurnier(const Eigen::Vector3d& r, const Eigen::Vector3d& u, double mu, double rho_n,
                     double rho_t) {
  AcBlock k;
  k.A.setZero();
  k.B.setZero();
  const double x_n = r[0] - rho_n * u[0];
  const bool pressed = x_n > 0.0;
  k.phi[0] = pressed ? rho_n * u[0] : r[0];
  (pressed ? k.B(0, 0) : k.A(0, 0)) = pressed ? rho_n : 1.0;
  const double R = mu * std::max(0.0, x_n);
  if (R == 0.0) {  // open or μ = 0: Φ_T = r_T whatever x_T, also at x_T = 0 where ‖x_T‖ ≤ R
    k.phi.tail<2>() = r.tail<2>();
    k.A.bottomRightCorner<2, 2>().setIdentity();
    return k;
  }
  const Eigen::Vector2d x_t = r.tail<2>() - rho_t * u.tail<2>();
  const double norm = x_t.norm();
  if (norm <= R) {
    k.phi.tail<2>() = rho_t * u.tail<2>();
    k.B.bottomRightCorner<2, 2>() = rho_t * Eigen::Matrix2d::Identity();
    return k;
  }
  const Eigen::Vector2d e = x_t / norm;
  k.phi.tail<2>() = r.tail<2>() - R * e;
  const Eigen::Matrix2d Gamma = (Eigen::Matrix2d::Identity() - e * e.transpose()) / norm;
  k.A.bottomRightCorner<2, 2>() = Eigen::Matrix2d::Identity() - R * Gamma;
  k.B.bottomRightCorner<2, 2>() = rho_t * R * Gamma;
  k.A.bottomLeftCorner<2, 1>() = -mu * e;
  k.B.bottomLeftCorner<2, 1>() = mu * rho_n * e;
  return k;
}

AcBlock SmoothedAlartCurnier(const Eigen::Vector3d& r, const Eigen::Vector3d& u, double mu,
                             double rho_n, double rho_t, double eps) {
  AcBlock k;
  k.A.setZero();
  k.B.setZero();
  // Normal part: p_N = ½(x_N + √(x_N² + 4ε²)), dp_N/dx_N = a ∈ (0, 1).
  const double x_n = r[0] - rho_n * u[0];
  const double root_n = std::sqrt(x_n * x_n + 4.0 * eps * eps);
  const double p_n = 0.5 * (x_n + root_n);
  const double a = 0.5 * (1.0 + x_n / root_n);
  k.phi[0] = r[0] - p_n;
  k.A(0, 0) = 1.0 - a;
  k.B(0, 0) = a * rho_n;
  // Tangential part: P = R x_T / M, M = ½(n + R + s), s = √((n − R)² + 4ε²) ≥ 2ε, n = ‖x_T‖.
  const double R = mu * p_n;
  const Eigen::Vector2d x_t = r.tail<2>() - rho_t * u.tail<2>();
  const double n = x_t.norm();
  const double s = std::sqrt((n - R) * (n - R) + 4.0 * eps * eps);
  const double M = 0.5 * (n + R + s);
  const double c_n = 0.5 * (1.0 + (n - R) / s), c_r = 0.5 * (1.0 - (n - R) / s);  // ∂M/∂n, ∂M/∂R
  k.phi.tail<2>() = r.tail<2>() - (R / M) * x_t;
  // dP = g dR + H dx_T with g = (x_T / M)(1 − R c_R / M), H = (R / M)(I − c_n x_T eᵀ / M), where
  // x_T eᵀ = x_T x_Tᵀ / n (zero at x_T = 0, where P = (R / M) x_T is differentiable).
  const Eigen::Vector2d g = (x_t / M) * (1.0 - R * c_r / M);
  Eigen::Matrix2d H = (R / M) * Eigen::Matrix2d::Identity();
  if (n > 0.0) H -= (R * c_n / (M * M * n)) * x_t * x_t.transpose();
  // dR = μ a (dr_N − ρ_N du_N), dx_T = dr_T − ρ_T du_T, dΦ_T = dr_T − dP.
  k.A.bottomLeftCorner<2, 1>() = -mu * a * g;
  k.B.bottomLeftCorner<2, 1>() = mu * a * rho_n * g;
  k.A.bottomRightCorner<2, 2>() = Eigen::Matrix2d::Identity() - H;
  k.B.bottomRightCorner<2, 2>() = rho_t * H;
  return k;
}

}  // namespace fc3d_internal

namespace {

using Eigen::Matrix3d;
using Eigen::VectorXd;
using SparseMatrix = Eigen::SparseMatrix<double>;
using fc3d_internal::AcBlock;
using fc3d_internal::AlartCurnier;
using fc3d_internal::SmoothedAlartCurnier;

void Validate(const SparseMatrix& W, const VectorXd& b, const VectorXd& mu,
              const Fc3dNewtonOptions& o, const VectorXd& r0) {
  const Eigen::Index m = 3 * mu.size();
  if (W.rows() != m || W.cols() != m || b.size() != m || r0.size() != m) {
    throw std::invalid_argument(
        "SolveFc3dNewton: W must be 3 n_c square and b, r0 of 3 n_c (n_c = " +
        std::to_string(mu.size()) + ")");
  }
  bool finite = b.allFinite() && r0.allFinite() && mu.allFinite();
  for (Eigen::Index j = 0; j < W.outerSize() && finite; ++j) {
    for (SparseMatrix::InnerIterator it(W, j); it; ++it)
      finite = finite && std::isfinite(it.value());
  }
  if (!finite || (mu.size() > 0 && mu.minCoeff() < 0.0)) {
    throw std::invalid_argument("SolveFc3dNewton: non-finite entries or mu < 0");
  }
  if (!(o.tolerance > 0.0) || o.max_iterations <= 0 || o.max_outer <= 0 || !(o.rho_scale > 0.0) ||
      !std::isfinite(o.rho_scale)) {
    throw std::invalid_argument(
        "SolveFc3dNewton: tolerance, max_iterations, max_outer, rho_scale must be > 0");
  }
}

// The problem with its per-contact scalings and the state of one Newton evaluation.
class AcNewton {
 public:
  AcNewton(const SparseMatrix& W, const VectorXd& b, const VectorXd& mu, double rho_scale)
      : W_(W), b_(b), mu_(mu), rho_(mu.size(), 2) {
    const VectorXd d = W.diagonal();
    for (Eigen::Index i = 0; i < mu.size(); ++i) {
      const double dn = d[3 * i], dt = std::max(d[3 * i + 1], d[3 * i + 2]);
      rho_(i, 0) = rho_scale / (dn > 0.0 ? dn : 1.0);
      rho_(i, 1) = rho_scale / (dt > 0.0 ? dt : 1.0);
    }
    sigma_ref_ = d.size() > 0 ? std::max(d.maxCoeff(), 1e-300) : 1.0;
  }

  double sigma_ref() const { return sigma_ref_; }

  // Φ_ε(r, W r + b + σ (r − r_k)) into phi (ε = 0: Φ); the blocks of its Jacobian when `blocks`
  // is set.
  void Evaluate(const VectorXd& r, const VectorXd& r_k, double sigma, double eps, VectorXd* phi,
                std::vector<AcBlock>* blocks) const {
    const VectorXd u = W_ * r + b_ + sigma * (r - r_k);
    phi->resize(r.size());
    if (blocks != nullptr) blocks->resize(static_cast<std::size_t>(mu_.size()));
    for (Eigen::Index i = 0; i < mu_.size(); ++i) {
      const Eigen::Vector3d ri = r.segment<3>(3 * i), ui = u.segment<3>(3 * i);
      const AcBlock k = eps > 0.0
                            ? SmoothedAlartCurnier(ri, ui, mu_[i], rho_(i, 0), rho_(i, 1), eps)
                            : AlartCurnier(ri, ui, mu_[i], rho_(i, 0), rho_(i, 1));
      phi->segment<3>(3 * i) = k.phi;
      if (blocks != nullptr) (*blocks)[static_cast<std::size_t>(i)] = k;
    }
  }

  // The Newton matrix A + B (W + σI).
  SparseMatrix Jacobian(const std::vector<AcBlock>& blocks, double sigma) const {
    const Eigen::Index m = W_.rows();
    std::vector<Eigen::Triplet<double>> bt, dt;
    bt.reserve(9 * blocks.size());
    dt.reserve(9 * blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const auto o = static_cast<Eigen::Index>(3 * i);
      const Matrix3d D = blocks[i].A + sigma * blocks[i].B;
      for (int a = 0; a < 3; ++a) {
        for (int c = 0; c < 3; ++c) {
          bt.emplace_back(o + a, o + c, blocks[i].B(a, c));
          dt.emplace_back(o + a, o + c, D(a, c));
        }
      }
    }
    SparseMatrix B(m, m), D(m, m);
    B.setFromTriplets(bt.begin(), bt.end());
    D.setFromTriplets(dt.begin(), dt.end());
    SparseMatrix J = B * W_;
    J += D;
    return J;
  }

  double Residual(const VectorXd& r) const { return Fc3dResidual(W_, b_, mu_, r); }

 private:
  const SparseMatrix& W_;
  const VectorXd& b_;
  const VectorXd& mu_;
  Eigen::MatrixX2d rho_;  // (ρ_N, ρ_T) per contact
  double sigma_ref_ = 1.0;
};

constexpr double kArmijo = 1e-4;
constexpr double kInnerReduction = 0.25;  // ‖Φ_σ‖∞ ≤ ¼ ‖Φ(r_k)‖∞ ends an outer iteration
constexpr double kSmallestStep = 1.0 / 1024.0;
// Smoothing path (header): ε = s ‖r_k‖∞ with s from 10⁻², ×0.3 after an inner solve that met its
// target and ×3 (at most 10⁻¹) after one that did not, until s < 10⁻⁹ (bench/friction_bank on the
// captured N = 100 steps: 10⁻³ and 10⁻¹ for the start, ×0.1 and ×0.5 for the shrink solve fewer).
constexpr double kSmoothingStart = 1e-2;
constexpr double kSmoothingShrink = 0.3;
constexpr double kSmoothingGrow = 3.0;
constexpr double kSmoothingLargest = 1e-1;
constexpr double kSmoothingEnd = 1e-9;

// Newton steps on the proximal problem at r_k with σ from r (= r_k on entry), to the inner
// reduction or until the budget `*steps_left` or the line search runs out. False when a
// factorization failed.
bool InnerNewton(const AcNewton& p, const VectorXd& r_k, double sigma, double eps, double target,
                 int* steps_left, VectorXd* r) {
  VectorXd phi, trial_phi, d;
  std::vector<AcBlock> blocks;
  Eigen::SparseLU<SparseMatrix, Eigen::COLAMDOrdering<int>> lu;
  p.Evaluate(*r, r_k, sigma, eps, &phi, &blocks);
  while (*steps_left > 0 && phi.lpNorm<Eigen::Infinity>() > target) {
    --*steps_left;
    const SparseMatrix J = p.Jacobian(blocks, sigma);
    lu.compute(J);
    if (lu.info() != Eigen::Success) return false;
    d = lu.solve(-phi);
    if (!d.allFinite()) return false;
    const double theta = 0.5 * phi.squaredNorm();
    double t = 1.0;
    VectorXd trial = *r + d;
    p.Evaluate(trial, r_k, sigma, eps, &trial_phi, nullptr);
    while (0.5 * trial_phi.squaredNorm() > (1.0 - 2.0 * kArmijo * t) * theta && t > kSmallestStep) {
      t *= 0.5;
      trial = *r + t * d;
      p.Evaluate(trial, r_k, sigma, eps, &trial_phi, nullptr);
    }
    if (0.5 * trial_phi.squaredNorm() >= theta) return true;  // no decrease: next σ
    *r = trial;
    p.Evaluate(*r, r_k, sigma, eps, &phi, &blocks);
  }
  return true;
}

}  // namespace

double Fc3dResidual(const SparseMatrix& W, const VectorXd& b, const VectorXd& mu,
                    const VectorXd& r) {
  LocalProblem law;
  law.b = b;
  for (Eigen::Index k = 0; k < mu.size(); ++k) {
    LocalContact lc;
    lc.normal = static_cast<int>(3 * k);
    lc.tangents = {lc.normal + 1, lc.normal + 2};
    lc.num_tangents = 2;
    lc.mu = mu[k];
    law.contacts.push_back(lc);
  }
  return CoulombResidual(law, r, W * r + b);
}

Fc3dNewtonResult SolveFc3dNewton(const SparseMatrix& W, const VectorXd& b, const VectorXd& mu,
                                 const Fc3dNewtonOptions& options, const VectorXd& r0) {
  Validate(W, b, mu, options, r0);
  AcNewton p(W, b, mu, options.rho_scale);
  Fc3dNewtonResult out;
  out.r = r0;
  out.residual = p.Residual(r0);
  VectorXd r = r0, phi;
  // σ = σ_ref · clamp(κ e, 1e-10, 1); κ grows tenfold after an outer iteration that failed.
  // Smoothing (header) starts when an outer iteration fails at σ = σ_ref, with ε_k = s ‖r_k‖∞.
  double kappa = 1.0;
  bool smoothing = false;
  double s = kSmoothingStart;
  int steps_left = options.max_iterations;
  while (out.residual > options.tolerance && out.outer < options.max_outer && steps_left > 0) {
    ++out.outer;
    const double sigma = p.sigma_ref() * std::clamp(kappa * out.residual, 1e-10, 1.0);
    const VectorXd r_k = r;
    const double eps = smoothing ? s * std::max(r_k.lpNorm<Eigen::Infinity>(), 1e-300) : 0.0;
    p.Evaluate(r_k, r_k, sigma, eps, &phi, nullptr);  // at r = r_k, u_σ = u: Φ_ε(r_k)
    const double target = kInnerReduction * phi.lpNorm<Eigen::Infinity>();
    const bool factorized = InnerNewton(p, r_k, sigma, eps, target, &steps_left, &r);
    bool improved = false;
    if (factorized && r.allFinite()) {
      const double e = p.Residual(r);
      improved = e < out.residual;
      if (improved) {
        out.residual = e;
        out.r = r;
      }
    } else {
      r = out.r;
    }
    if (smoothing) {
      // Path-following: the iterate stays even where e grew (the path may climb out of a kink
      // before e falls); s shrinks after an inner solve that met its target, else grows.
      p.Evaluate(r, r_k, sigma, eps, &phi, nullptr);
      s = phi.lpNorm<Eigen::Infinity>() <= target ? kSmoothingShrink * s
                                                  : std::min(kSmoothingGrow * s, kSmoothingLargest);
      if (s < kSmoothingEnd) {  // back to Φ from the best iterate
        smoothing = false;
        r = out.r;
      }
    } else if (!improved) {  // failed: back to the best iterate
      r = out.r;
      if (sigma < p.sigma_ref()) {
        kappa *= 10.0;
      } else if (options.smoothing && !out.smoothed) {  // σ at its bound: smoothing, κ anew
        smoothing = out.smoothed = true;
        kappa = 1.0;
      } else {
        break;  // σ at its bound: the next outer iteration would repeat this one
      }
    }
  }
  out.iterations = options.max_iterations - steps_left;
  out.ok = out.residual <= options.tolerance;
  char text[160];
  std::snprintf(text, sizeof text,
                "fc3d newton: %s (%d Newton steps, %d proximal%s, residual %.3g)",
                out.ok ? "converged" : "no convergence", out.iterations, out.outer,
                out.smoothed ? ", smoothed" : "", out.residual);
  out.message = text;
  return out;
}

}  // namespace saltus::contact

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

}  // namespace fc3d_internal

namespace {

using Eigen::Matrix3d;
using Eigen::VectorXd;
using SparseMatrix = Eigen::SparseMatrix<double>;
using fc3d_internal::AcBlock;
using fc3d_internal::AlartCurnier;

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
  if (!(o.tolerance > 0.0) || o.max_iterations <= 0 || o.max_outer <= 0) {
    throw std::invalid_argument(
        "SolveFc3dNewton: tolerance, max_iterations, max_outer must be > 0");
  }
}

// ρ = kRhoScale / W_ii (header). With ρ W_ii ≫ 1 the Alart–Curnier function weighs the
// velocities u more than the impulses r; on the captured pile steps (tests/contact/data/friction)
// ρ W_ii = 1 stalls on one of three problems and 10³ solves all three in 6–9 Newton steps.
constexpr double kRhoScale = 1e3;

// The problem with its per-contact scalings and the state of one Newton evaluation.
class AcNewton {
 public:
  AcNewton(const SparseMatrix& W, const VectorXd& b, const VectorXd& mu)
      : W_(W), b_(b), mu_(mu), rho_(mu.size(), 2) {
    const VectorXd d = W.diagonal();
    for (Eigen::Index i = 0; i < mu.size(); ++i) {
      const double dn = d[3 * i], dt = std::max(d[3 * i + 1], d[3 * i + 2]);
      rho_(i, 0) = kRhoScale / (dn > 0.0 ? dn : 1.0);
      rho_(i, 1) = kRhoScale / (dt > 0.0 ? dt : 1.0);
    }
    sigma_ref_ = d.size() > 0 ? std::max(d.maxCoeff(), 1e-300) : 1.0;
  }

  double sigma_ref() const { return sigma_ref_; }

  // Φ(r, W r + b + σ (r − r_k)) into phi; the blocks of its Jacobian when `blocks` is set.
  void Evaluate(const VectorXd& r, const VectorXd& r_k, double sigma, VectorXd* phi,
                std::vector<AcBlock>* blocks) const {
    const VectorXd u = W_ * r + b_ + sigma * (r - r_k);
    phi->resize(r.size());
    if (blocks != nullptr) blocks->resize(static_cast<std::size_t>(mu_.size()));
    for (Eigen::Index i = 0; i < mu_.size(); ++i) {
      const AcBlock k =
          AlartCurnier(r.segment<3>(3 * i), u.segment<3>(3 * i), mu_[i], rho_(i, 0), rho_(i, 1));
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

// Newton steps on the proximal problem at r_k with σ from r (= r_k on entry), to the inner
// reduction or until the budget `*steps_left` or the line search runs out. False when a
// factorization failed.
bool InnerNewton(const AcNewton& p, const VectorXd& r_k, double sigma, double target,
                 int* steps_left, VectorXd* r) {
  VectorXd phi, trial_phi, d;
  std::vector<AcBlock> blocks;
  Eigen::SparseLU<SparseMatrix, Eigen::COLAMDOrdering<int>> lu;
  p.Evaluate(*r, r_k, sigma, &phi, &blocks);
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
    p.Evaluate(trial, r_k, sigma, &trial_phi, nullptr);
    while (0.5 * trial_phi.squaredNorm() > (1.0 - 2.0 * kArmijo * t) * theta && t > kSmallestStep) {
      t *= 0.5;
      trial = *r + t * d;
      p.Evaluate(trial, r_k, sigma, &trial_phi, nullptr);
    }
    if (0.5 * trial_phi.squaredNorm() >= theta) return true;  // no decrease: next σ
    *r = trial;
    p.Evaluate(*r, r_k, sigma, &phi, &blocks);
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
  AcNewton p(W, b, mu);
  Fc3dNewtonResult out;
  out.r = r0;
  out.residual = p.Residual(r0);
  VectorXd r = r0, phi;
  // σ = σ_ref · clamp(κ e, 1e-10, 1); κ grows tenfold after an outer iteration that failed.
  double kappa = 1.0;
  int steps_left = options.max_iterations;
  while (out.residual > options.tolerance && out.outer < options.max_outer && steps_left > 0) {
    ++out.outer;
    const double sigma = p.sigma_ref() * std::clamp(kappa * out.residual, 1e-10, 1.0);
    const VectorXd r_k = r;
    p.Evaluate(r, r_k, 0.0, &phi, nullptr);
    const bool factorized = InnerNewton(
        p, r_k, sigma, kInnerReduction * phi.lpNorm<Eigen::Infinity>(), &steps_left, &r);
    const double e = r.allFinite() ? p.Residual(r) : out.residual;
    if (factorized && e < out.residual) {
      out.residual = e;
      out.r = r;
    } else {
      r = out.r;
      kappa *= 10.0;
    }
  }
  out.iterations = options.max_iterations - steps_left;
  out.ok = out.residual <= options.tolerance;
  char text[160];
  std::snprintf(text, sizeof text, "fc3d newton: %s (%d Newton steps, %d proximal, residual %.3g)",
                out.ok ? "converged" : "no convergence", out.iterations, out.outer, out.residual);
  out.message = text;
  return out;
}

}  // namespace saltus::contact

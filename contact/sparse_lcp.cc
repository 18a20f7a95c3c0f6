#include "contact/sparse_lcp.h"

#include "contact/monotone_lcp.h"

#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace saltus::contact {
namespace {

using SpMat = Eigen::SparseMatrix<double>;

// ε / max W_ii of the proximal regularization (header, step 2).
constexpr double kProximalShift = 1e-3;
// Smallest ε / max W_ii: on an active set that stays fixed, ε is divided by 10 per step down to
// this (header, step 2).
constexpr double kMinProximalShift = 1e-6;

// Sweeps of projected Gauss–Seidel on z (in place). W is symmetric: column i is row i.
// Returns the number of sweeps done: stops after `max_sweeps` or when the support has been the
// same for `stable_sweeps` consecutive sweeps (after at least `min_sweeps`).
int PgsSweeps(const SpMat& W, const Eigen::VectorXd& diag, const Eigen::VectorXd& b, int min_sweeps,
              int max_sweeps, int stable_sweeps, Eigen::VectorXd* z) {
  const Eigen::Index n = b.size();
  int unchanged = 0, sweep = 0;
  for (; sweep < max_sweeps; ++sweep) {
    int changes = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      double w = b[i];
      for (SpMat::InnerIterator it(W, i); it; ++it) w += it.value() * (*z)[it.row()];
      const double old = (*z)[i];
      const double next = std::max(0.0, old - w / diag[i]);
      if ((old > 0.0) != (next > 0.0)) ++changes;
      (*z)[i] = next;
    }
    unchanged = changes == 0 ? unchanged + 1 : 0;
    if (sweep + 1 >= min_sweeps && unchanged >= stable_sweeps) return sweep + 1;
  }
  return sweep;
}

double Residual(const Eigen::VectorXd& z, const Eigen::VectorXd& w, double scale) {
  return z.size() > 0 ? w.cwiseMin(z).cwiseAbs().maxCoeff() / scale : 0.0;
}

struct PolishStats {
  int factorizations = 0;  // LDLᵀ of W_FF + εI
  int outer = 0;           // proximal steps
  int extrapolations = 0;  // drift steps along a null direction of W_FF (header, step 3)
};

// A drift of the proximal iterates counts as steady when two consecutive steps on the same
// active set differ by at most this fraction of the step (header, step 3).
constexpr double kSteadyDrift = 1e-3;

// Steps 2–3 of the header: proximal point iterations from z (≥ 0), each an exact solve of the
// regularized LCP (W + εI, b − ε z_k) by block principal pivoting. Returns true when the
// natural-map residual of the ORIGINAL problem is ≤ tolerance (z, w set; z ≥ 0), false when a cap
// is reached or the factorization fails.
// `warm`: z comes from a warm start (a solution of a nearby problem): the first step uses the
// smallest shift, so that a right active set converges in one or two steps; any pivot puts the
// shift back to the robust one as usual.
bool ProximalActiveSet(const SpMat& W, const Eigen::VectorXd& b, double tolerance, double scale,
                       int max_outer, int max_factorizations, bool warm, Eigen::VectorXd* z,
                       Eigen::VectorXd* w, PolishStats* stats) {
  const Eigen::Index n = b.size();
  const double max_diag = W.diagonal().maxCoeff();
  double eps = (warm ? kMinProximalShift : kProximalShift) * max_diag;
  // Round-off guards of the pivoting: a z_i or w_i of the regularized problem counts as negative
  // below −1e-13 of its scale (exact arithmetic would give ≥ 0; smaller negatives are clipped).
  std::vector<char> in_f(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) in_f[static_cast<std::size_t>(i)] = (*z)[i] > 0.0;
  std::vector<int> local(static_cast<std::size_t>(n)), f_idx;
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::SimplicialLDLT<SpMat, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt;
  bool factor_valid = false;
  Eigen::VectorXd delta(n), delta_prev(n);
  bool have_delta_prev = false;
  for (int outer = 0; outer < max_outer; ++outer) {
    ++stats->outer;
    bool pivoted = false;  // F changed during this step
    const Eigen::VectorXd b_k = b - eps * (*z);
    const double b_k_scale = std::max(1.0, b_k.lpNorm<Eigen::Infinity>());
    std::size_t best = std::numeric_limits<std::size_t>::max();
    int tries = 3;
    Eigen::VectorXd z_next(n), w_reg(n);
    for (;;) {
      if (!factor_valid) {
        if (stats->factorizations >= max_factorizations) return false;
        ++stats->factorizations;
        f_idx.clear();
        for (Eigen::Index i = 0; i < n; ++i) {
          if (in_f[static_cast<std::size_t>(i)]) {
            local[static_cast<std::size_t>(i)] = static_cast<int>(f_idx.size());
            f_idx.push_back(static_cast<int>(i));
          } else {
            local[static_cast<std::size_t>(i)] = -1;
          }
        }
        const auto nf = static_cast<Eigen::Index>(f_idx.size());
        if (nf > 0) {
          triplets.clear();
          for (Eigen::Index k = 0; k < nf; ++k) {
            const int j = f_idx[static_cast<std::size_t>(k)];
            for (SpMat::InnerIterator it(W, j); it; ++it) {
              const int li = local[static_cast<std::size_t>(it.row())];
              if (li >= 0) triplets.emplace_back(li, static_cast<int>(k), it.value());
            }
            triplets.emplace_back(static_cast<int>(k), static_cast<int>(k), eps);
          }
          SpMat A(nf, nf);
          A.setFromTriplets(triplets.begin(), triplets.end());
          ldlt.compute(A);
          if (ldlt.info() != Eigen::Success) return false;
        }
        factor_valid = true;
      }
      const auto nf = static_cast<Eigen::Index>(f_idx.size());
      z_next.setZero();
      if (nf > 0) {
        Eigen::VectorXd rhs(nf);
        for (Eigen::Index k = 0; k < nf; ++k) rhs[k] = -b_k[f_idx[static_cast<std::size_t>(k)]];
        const Eigen::VectorXd x = ldlt.solve(rhs);
        if (!x.allFinite()) return false;
        for (Eigen::Index k = 0; k < nf; ++k) z_next[f_idx[static_cast<std::size_t>(k)]] = x[k];
      }
      w_reg = W * z_next + eps * z_next + b_k;
      const double z_guard = 1e-13 * std::max(1e-300, z_next.lpNorm<Eigen::Infinity>());
      const double w_guard = 1e-13 * b_k_scale;
      std::vector<int> violators;
      for (Eigen::Index i = 0; i < n; ++i) {
        const bool f = in_f[static_cast<std::size_t>(i)] != 0;
        if ((f && z_next[i] < -z_guard) || (!f && w_reg[i] < -w_guard)) {
          violators.push_back(static_cast<int>(i));
        }
      }
      if (violators.empty()) break;
      if (violators.size() < best) {
        best = violators.size();
        tries = 3;
      } else if (tries > 0) {
        --tries;
      } else {
        violators.erase(violators.begin(), violators.end() - 1);  // Murty: the largest index
      }
      for (int i : violators) in_f[static_cast<std::size_t>(i)] ^= 1;
      factor_valid = false;
      pivoted = true;
    }
    // Steady drift on an unchanged active set: the range part of the step has converged and
    // the step is the null-space drift −ε⁻¹ P_null (b_F) (header, step 3); jump along it to where
    // the first z_i, i ∈ F, reaches 0 (ratio test) instead of taking ~ z_i / |Δ_i| steps there.
    delta = z_next - *z;
    const bool same_set = !pivoted;
    bool extrapolated = false;
    if (same_set && have_delta_prev) {
      const double step = delta.lpNorm<Eigen::Infinity>();
      if (step > 0.0 && (delta - delta_prev).lpNorm<Eigen::Infinity>() <= kSteadyDrift * step) {
        double s = std::numeric_limits<double>::infinity();
        Eigen::Index blocking = -1;
        for (Eigen::Index i = 0; i < n; ++i) {
          if (delta[i] < 0.0 && z_next[i] > 0.0 && -z_next[i] / delta[i] < s) {
            s = -z_next[i] / delta[i];
            blocking = i;
          }
        }
        if (blocking >= 0 && s > 1.0) {  // no blocking row: unbounded drift, leave it to the caps
          z_next += s * delta;
          z_next[blocking] = 0.0;
          ++stats->extrapolations;
          extrapolated = true;
        }
      }
    }
    have_delta_prev = same_set && !extrapolated;
    if (same_set && eps > kMinProximalShift * max_diag) {
      eps = std::max(0.1 * eps, kMinProximalShift * max_diag);  // same F, new factor
      factor_valid = false;
      have_delta_prev = false;
    } else if (!same_set) {
      eps = kProximalShift * max_diag;  // F changed: back to the robust shift for the pivoting
    }
    delta_prev = delta;
    *z = z_next.cwiseMax(0.0);
    *w = W * (*z) + b;
    if (Residual(*z, *w, scale) <= tolerance) return true;
  }
  return false;
}

std::string StatsText(int sweeps, const PolishStats& stats) {
  return std::to_string(sweeps) + " pgs sweeps, " + std::to_string(stats.outer) +
         " proximal steps, " + std::to_string(stats.factorizations) + " factorizations" +
         (stats.extrapolations > 0
              ? ", " + std::to_string(stats.extrapolations) + " drift extrapolations"
              : std::string());
}

}  // namespace

LcpResult RefineLcpSparse(const SpMat& W, const Eigen::VectorXd& b, const LcpOptions& options,
                          const Eigen::VectorXd& z_start) {
  LcpResult result;
  const Eigen::Index n = b.size();
  const double scale = std::max(1.0, n > 0 ? b.lpNorm<Eigen::Infinity>() : 0.0);
  Eigen::VectorXd z = z_start.cwiseMax(0.0), w(n);
  PolishStats stats;
  result.ok = n == 0 || ProximalActiveSet(W, b, options.tolerance, scale, 1000, 200,
                                          /*warm=*/true, &z, &w, &stats);
  result.z = z;
  result.w = W * z + b;
  result.residual = Residual(result.z, result.w, scale);
  result.ok = result.ok && result.residual <= options.tolerance;
  result.iterations = stats.outer;
  result.message = "lcp refine: " + std::to_string(stats.outer) + " proximal steps, " +
                   std::to_string(stats.factorizations) + " factorizations" +
                   (result.ok ? "" : ", not verified");
  return result;
}

LcpResult SolveLcpSparse(const SpMat& W, const Eigen::VectorXd& b, const LcpOptions& options,
                         const Eigen::VectorXd* z0) {
  const char* who = "SolveLcpSparse";
  const Eigen::Index n = b.size();
  if (W.rows() != n || W.cols() != n) {
    throw std::invalid_argument(std::string(who) + ": W is " + std::to_string(W.rows()) + " x " +
                                std::to_string(W.cols()) + " but b has " + std::to_string(n) +
                                " entries");
  }
  if (!b.allFinite()) throw std::invalid_argument(std::string(who) + ": b has a non-finite entry");
  for (Eigen::Index k = 0; k < W.outerSize(); ++k) {
    for (SpMat::InnerIterator it(W, k); it; ++it) {
      if (!std::isfinite(it.value())) {
        throw std::invalid_argument(std::string(who) + ": W has a non-finite entry");
      }
    }
  }
  if (!(options.tolerance > 0.0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument(std::string(who) + ": tolerance must be finite and > 0, got " +
                                std::to_string(options.tolerance));
  }
  if (options.max_iterations <= 0) {
    throw std::invalid_argument(std::string(who) + ": max_iterations must be > 0, got " +
                                std::to_string(options.max_iterations));
  }
  if (z0 != nullptr && (z0->size() != n || !z0->allFinite())) {
    throw std::invalid_argument(std::string(who) + ": warm start must have " + std::to_string(n) +
                                " finite entries");
  }
  const Eigen::VectorXd diag = W.diagonal();
  // PGS needs W_ii > 0 (a vanishing contact row) and the method a symmetric W (column j is used
  // as row j; asymmetry above 1e-12 of the largest entry): otherwise the dense solver decides,
  // or a status.
  std::string why;
  if (n > 0 && !(diag.minCoeff() > 0.0)) {
    why = "lcp sparse: W has a non-positive diagonal entry";
  } else if (n > 0) {
    const SpMat Wt = W.transpose();
    const SpMat asym = W - Wt;
    double max_abs = 0.0, max_asym = 0.0;
    for (Eigen::Index k = 0; k < W.outerSize(); ++k) {
      for (SpMat::InnerIterator it(W, k); it; ++it)
        max_abs = std::max(max_abs, std::abs(it.value()));
      for (SpMat::InnerIterator it(asym, k); it; ++it) {
        max_asym = std::max(max_asym, std::abs(it.value()));
      }
    }
    if (max_asym > 1e-12 * max_abs) why = "lcp sparse: W is not symmetric";
  }
  if (!why.empty()) {
    if (options.fallback) {
      LcpResult dense = SolveLcp(Eigen::MatrixXd(W), b, options);
      dense.message = why + "; dense " + std::string(ToString(options.solver)) +
                      (dense.ok ? " solved it" : " failed") +
                      (dense.message.empty() ? "" : " (" + dense.message + ")");
      return dense;
    }
    LcpResult failed;
    failed.z = Eigen::VectorXd::Zero(n);
    failed.w = b;
    failed.residual = std::numeric_limits<double>::infinity();
    failed.message = why;
    return failed;
  }
  LcpResult result;
  result.z = Eigen::VectorXd::Zero(n);
  result.w = b;
  if (n == 0) {
    result.ok = true;
    result.message = "lcp sparse: empty";
    return result;
  }
  const double scale = std::max(1.0, b.lpNorm<Eigen::Infinity>());
  Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
  if (z0 != nullptr) z = z0->cwiseMax(0.0);
  Eigen::VectorXd w(n);
  PolishStats stats;
  int sweeps = 0;
  // Two rounds: PGS to a stable support, then the proximal active-set solve; if that does not
  // verify within its caps, 10× more sweeps from where PGS stopped and again.
  Eigen::VectorXd z_pgs = z;
  for (int round = 0; round < 2; ++round) {
    const int min_sweeps = round == 0 ? 10 : 100;
    const int max_sweeps = std::min(options.max_iterations, round == 0 ? 200 : 2000);
    const int stable = round == 0 ? 5 : 20;
    sweeps += PgsSweeps(W, diag, b, min_sweeps, max_sweeps, stable, &z_pgs);
    z = z_pgs;
    const bool warm = round == 0 && z0 != nullptr;
    if (ProximalActiveSet(W, b, options.tolerance, scale, 1000, 200, warm, &z, &w, &stats)) {
      result.z = z;
      result.w = w;
      result.residual = Residual(z, w, scale);
      result.ok = true;
      result.iterations = sweeps + stats.outer;
      result.failed_stages = round;
      result.message = "lcp sparse: " + StatsText(sweeps, stats);
      return result;
    }
  }
  const std::string failure = "lcp sparse: no verified solution after " + std::to_string(sweeps) +
                              " pgs sweeps, " + std::to_string(stats.outer) +
                              " proximal steps and " + std::to_string(stats.factorizations) +
                              " factorizations";
  if (!options.fallback) {
    result.z = z.cwiseMax(0.0);
    result.w = W * result.z + b;
    result.residual = Residual(result.z, result.w, scale);
    result.iterations = sweeps + stats.outer;
    result.message = failure;
    return result;
  }
  // The stage with a guarantee (contact/monotone_lcp.h), then the dense chain without it.
  std::string monotone_failure;
  if (options.monotone_stage) {
    LcpResult monotone = SolveMonotoneLcp(W, b, options);
    if (monotone.ok) {
      monotone.failed_stages = 2;
      monotone.message = failure + "; " + monotone.message;
      return monotone;
    }
    monotone_failure = "; " + monotone.message;
  }
  LcpOptions dense_options = options;
  dense_options.monotone_stage = false;
  LcpResult dense = SolveLcp(Eigen::MatrixXd(W), b, dense_options);
  dense.failed_stages += options.monotone_stage ? 3 : 2;
  dense.message = failure + monotone_failure + "; dense fallback " +
                  std::string(ToString(options.solver)) + (dense.ok ? " solved it" : " failed") +
                  (dense.message.empty() ? "" : " (" + dense.message + ")");
  return dense;
}

}  // namespace saltus::contact

#include "engine/constrained_dynamics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace saltus::engine {

void MinNormSolver::Compute(const Eigen::MatrixXd& A, double tolerance) {
  cod_.setThreshold(tolerance);
  cod_.compute(A);
}

double MinNormSolver::PivotRatio() const {
  const Eigen::Index n = cod_.cols();
  if (n == 0) return 1.0;
  if (cod_.rank() < n) return 0.0;
  // Full rank: Z = I and the triangle of matrixQTZ is the R of the column-pivoted QR.
  const auto d = cod_.matrixQTZ().diagonal().cwiseAbs();
  const double largest = d.maxCoeff();
  return largest > 0.0 ? d.minCoeff() / largest : 0.0;
}

namespace {

// Relative residual (to the scale of the summed terms) above which the dense solve is refined
// by PenaltyMinNormSolver, and the residual that refinement aims at: a few hundred ε, above the
// round-off of a well-conditioned solve, far below the consistency bound √ε.
constexpr double kRefineTolerance = 1e-12;
constexpr int kRefinePasses = 4;

// y ← (I − τ w wᵀ) y with w = [1; essential] (a real Householder reflector, its own inverse and
// transpose). Written out because Eigen's applyHouseholderOnTheLeft allocates a temporary when
// applied to a block of a dynamic vector.
template <class Y, class E>
void ApplyReflector(const E& essential, double tau, Y&& y) {
  if (tau == 0.0) return;
  const double s = y(0) + essential.dot(y.tail(y.size() - 1));
  y(0) -= tau * s;
  y.tail(y.size() - 1) -= (tau * s) * essential;
}

// Scale of the terms summed in W λ = rhs and G v̇ + γ (‖W‖ and ‖G‖ their largest entries), to
// which the round-off of the residual is relative.
double SummedTermsScale(const Eigen::VectorXd& rhs, double w_max, const Eigen::VectorXd& lambda,
                        double g_max, const Eigen::VectorXd& vdot, const Eigen::VectorXd& gamma) {
  return rhs.lpNorm<Eigen::Infinity>() + w_max * lambda.lpNorm<Eigen::Infinity>() +
         g_max * vdot.lpNorm<Eigen::Infinity>() + gamma.lpNorm<Eigen::Infinity>();
}

// Eigen's allFinite (x − x == x − x) without its temporaries: no NaN or ±Inf entry.
bool AllFinite(const Eigen::VectorXd& x) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// Bit i set where x[i] ≠ 0 (NaN included), i < count ≤ 64. Two entries per comparison where
// SSE2 is there (x86-64 always): the comparison per entry is FormDelassus's largest cost.
std::uint64_t NonzeroMask(const double* x, Eigen::Index count) {
  std::uint64_t mask = 0;
  Eigen::Index i = 0;
#if defined(__SSE2__)
  const __m128d zero = _mm_setzero_pd();
  for (; i + 2 <= count; i += 2) {
    const int bits = _mm_movemask_pd(_mm_cmpneq_pd(_mm_loadu_pd(x + i), zero));
    mask |= static_cast<std::uint64_t>(bits) << i;
  }
#endif
  for (; i < count; ++i) mask |= static_cast<std::uint64_t>(x[i] != 0.0) << i;
  return mask;
}

}  // namespace

void MinNormSolver::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) {
  const Eigen::Index n = cod_.cols();
  const Eigen::Index r = cod_.rank();
  x->resize(n);
  if (r == 0) {
    x->setZero();
    return;
  }
  const Eigen::MatrixXd& qtz = cod_.matrixQTZ();
  // c = Qᵀ b with Q = H₀⋯H_{r−1}; reflector k's essential part is stored below the diagonal of
  // column k (reflectors ≥ r only touch entries ≥ r, which the solution does not use).
  c_ = b;
  for (Eigen::Index k = 0; k < r; ++k) {
    ApplyReflector(qtz.col(k).tail(n - k - 1), cod_.hCoeffs()(k), c_.tail(n - k));
  }
  // T z = c₁..ᵣ, T the leading r × r upper triangle.
  qtz.topLeftCorner(r, r).triangularView<Eigen::Upper>().solveInPlace(c_.head(r));
  y_.resize(n);
  y_.head(r) = c_.head(r);
  y_.tail(n - r).setZero();
  if (r < n) {
    // y ← Zᵀ [z; 0] with Z = Z(0)⋯Z(r−1); reflector k acts on entries {k, r, …, n−1} and its
    // essential part is row k, columns r…n−1, of matrixQTZ (Eigen's layout, as in
    // CompleteOrthogonalDecomposition::applyZAdjointOnTheLeftInPlace).
    for (Eigen::Index k = 0; k < r; ++k) {
      if (k != r - 1) std::swap(y_(k), y_(r - 1));
      ApplyReflector(qtz.row(k).tail(n - r).transpose(), cod_.zCoeffs()(k),
                     y_.segment(r - 1, n - r + 1));
      if (k != r - 1) std::swap(y_(k), y_(r - 1));
    }
  }
  // x = P y.
  const auto& perm = cod_.colsPermutation().indices();
  for (Eigen::Index i = 0; i < n; ++i) (*x)(perm(i)) = y_(i);
}

bool PenaltyMinNormSolver::Compute(const Eigen::MatrixXd& NinvGt, const Eigen::MatrixXd& W) {
  NinvGt_ = &NinvGt;
  W_ = &W;
  shifted_ = W;
  const double w_max = W.size() > 0 ? W.diagonal().maxCoeff() : 0.0;
  shifted_.diagonal().array() += (w_max > 0.0 ? w_max : 1.0) / kPenalty;
  llt_.compute(shifted_);
  return llt_.info() == Eigen::Success;
}

double PenaltyMinNormSolver::Solve(const Eigen::VectorXd& b, double tolerance,
                                   Eigen::VectorXd* delta) {
  const Eigen::MatrixXd& W = *W_;
  mu_.setZero(b.size());  // δ = N⁻¹Gᵀ μ
  rho_ = b;               // b − G δ = b − W μ
  double rho_norm = rho_.lpNorm<Eigen::Infinity>();
  double rho_dot = rho_.squaredNorm();
  // The best iterate so far: with b partly outside range(G) (inconsistent redundant rows,
  // round-off at a singular configuration) CG may stop reducing ‖·‖∞ and amplify that part
  // along the near-singular directions; the best μ is returned.
  best_ = mu_;
  double best_norm = rho_norm;
  if (rho_norm > tolerance && rho_dot > 0.0) {
    p_ = rho_;
    const Eigen::Index max_iterations = 2 * b.size() + 10;  // b.size() in exact arithmetic
    for (Eigen::Index k = 0; k < max_iterations; ++k) {
      y_ = p_;
      llt_.solveInPlace(y_);  // (W + I/α) y = p
      Ap_.noalias() = W * y_;
      const double curvature = p_.dot(Ap_);
      if (!(curvature > 0.0)) break;  // p has no component in range(W): nothing left to reach
      const double a = rho_dot / curvature;
      mu_.noalias() += a * y_;
      rho_.noalias() -= a * Ap_;
      rho_norm = rho_.lpNorm<Eigen::Infinity>();
      if (rho_norm < best_norm) {
        best_norm = rho_norm;
        best_ = mu_;
      }
      if (rho_norm <= tolerance || rho_norm > kDivergence * best_norm) break;
      const double next_dot = rho_.squaredNorm();
      p_ = rho_ + (next_dot / rho_dot) * p_;
      rho_dot = next_dot;
    }
  }
  delta->noalias() = *NinvGt_ * best_;
  return best_norm;
}

ConstrainedDynamics::ConstrainedDynamics(const MechanicalSystem& system) : system_(system) {}

void ConstrainedDynamics::set_rank_tolerance(double tol) {
  if (!(tol > 0.0 && tol < 1.0)) {
    throw std::invalid_argument("ConstrainedDynamics: rank tolerance must be in (0, 1), got " +
                                std::to_string(tol));
  }
  rank_tolerance_ = tol;
}

DynamicsStatus ConstrainedDynamics::Solve(double t, const Eigen::VectorXd& q,
                                          const Eigen::VectorXd& v, std::span<const int> rows,
                                          Eigen::VectorXd* vdot, Eigen::VectorXd* lambda) {
  const int nv = system_.nv();
  if (q.size() != system_.nq()) {
    throw std::invalid_argument("ConstrainedDynamics::Solve: q has size " +
                                std::to_string(q.size()) +
                                ", expected nq = " + std::to_string(system_.nq()));
  }
  if (v.size() != nv) {
    throw std::invalid_argument("ConstrainedDynamics::Solve: v has size " +
                                std::to_string(v.size()) + ", expected nv = " + std::to_string(nv));
  }
  const auto m = static_cast<Eigen::Index>(rows.size());
  DynamicsStatus status;
  last_dense_ok_ = false;
  penalty_valid_ = false;
  if (m == 0 && SolveUnconstrained(t, q, v, vdot, lambda, &status)) return status;
  vdot->resize(nv);
  lambda->resize(m);

  const bool non_ideal = m > 0 && system_.HasNonIdealForces();
  const bool try_sparse =
      !non_ideal && (linear_algebra_ == LinearAlgebra::kSparse ||
                     (linear_algebra_ == LinearAlgebra::kAuto && nv >= kSparseMinimumNv));
  const bool known_singular =
      dense_rows_valid_ &&
      std::equal(rows.begin(), rows.end(), dense_rows_.begin(), dense_rows_.end());
  if (try_sparse && !known_singular) {
    if (SolveSparse(t, q, v, rows, vdot, lambda, &status)) return status;
    status = DynamicsStatus();
  }

  system_.Forces(t, q, v, &F_);
  if (!FactorMass(q)) {
    status.ok = false;
    return status;
  }
  ApplyMinv(F_, &MinvF_);
  if (m == 0) {
    *vdot = MinvF_;
    status.ok = vdot->allFinite();
    return status;
  }
  if (non_ideal) return SolveNonIdeal(t, q, v, rows, vdot, lambda);

  system_.ConstraintJacobianAndGamma(t, q, v, rows, &G_, &gamma_);
  if (mass_diagonal_) {
    MinvGt_.noalias() = minv_diagonal_.asDiagonal() * G_.transpose();
  } else {
    MinvGt_ = G_.transpose();
    ApplyMinvInPlace(&MinvGt_);
  }
  FormDelassus();
  FactorDelassus(rows, &status);

  // W λ = −γ − G M⁻¹ F (the second block row after eliminating v̇).
  rhs_ = -gamma_;
  rhs_.noalias() -= G_ * MinvF_;
  SolveDelassus(rhs_, lambda);
  *vdot = MinvF_;
  vdot->noalias() += MinvGt_ * *lambda;

  residual_ = gamma_;
  residual_.noalias() += G_ * *vdot;
  status.residual = residual_.lpNorm<Eigen::Infinity>();
  // With redundant rows W λ = rhs is solvable only when rhs ∈ range(W); otherwise the
  // least-squares λ leaves a residual of the order of rhs itself. Round-off leaves ε times the
  // size of the terms summed (rhs, W λ, G v̇, γ) times a modest condition factor, far below √ε
  // of that scale.
  const double scale = SummedTermsScale(rhs_, W_.lpNorm<Eigen::Infinity>(), *lambda,
                                        G_.lpNorm<Eigen::Infinity>(), *vdot, gamma_);
  // Near a singular configuration (W nearly rank-deficient: a direction dropped by the rank
  // decision or resolved to few digits) the residual is well above round-off although the
  // accelerations are well defined (λ is not unique there, v̇ is). The residual is then
  // removed by the penalty least-norm solve, which needs no rank decision:
  // v̇ += δ with M δ ∈ range(Gᵀ), G δ = −(G v̇ + γ), and λ += W⁺ G δ.
  // The CG residual is measured through W; a few passes (iterative refinement) bring the
  // true one down where W is resolved to few digits only.
  for (int pass = 0;
       pass < kRefinePasses && status.residual > kRefineTolerance * scale && vdot->allFinite();
       ++pass) {
    if (pass == 0) penalty_valid_ = penalty_.Compute(MinvGt_, W_);
    if (penalty_valid_) {
      refine_rhs_ = -residual_;
      penalty_.Solve(refine_rhs_, kRefineTolerance * scale, &delta_);
      *vdot += delta_;
      refine_rhs_.noalias() = G_ * delta_;
      SolveDelassus(refine_rhs_, &delta_lambda_);
      *lambda += delta_lambda_;
      residual_ = gamma_;
      residual_.noalias() += G_ * *vdot;
      status.residual = residual_.lpNorm<Eigen::Infinity>();
    } else {
      break;
    }
  }
  const double consistency_tol = std::sqrt(std::numeric_limits<double>::epsilon()) * scale;
  status.ok = vdot->allFinite() && lambda->allFinite() && status.residual <= consistency_tol;
  last_dense_ok_ = status.ok;
  return status;
}

bool ConstrainedDynamics::SolveUnconstrained(double t, const Eigen::VectorXd& q,
                                             const Eigen::VectorXd& v, Eigen::VectorXd* vdot,
                                             Eigen::VectorXd* lambda, DynamicsStatus* status) {
  // Only where the general path would compute the same numbers: the dense path (the sparse one
  // factors M by body blocks) with the factor of a constant M already at hand. A phase's first
  // call goes the general way and factors M.
  const bool sparse_first =
      linear_algebra_ == LinearAlgebra::kSparse ||
      (linear_algebra_ == LinearAlgebra::kAuto && v.size() >= kSparseMinimumNv);
  if (!mass_factored_ || !mass_constant_ || sparse_first) return false;
  system_.Forces(t, q, v, &F_);
  ApplyMinv(F_, vdot);  // v̇ = M⁻¹ F, the general path's M⁻¹F to the last bit
  lambda->resize(0);
  status->ok = AllFinite(*vdot);
  return true;
}

DynamicsStatus ConstrainedDynamics::SolveNonIdeal(double t, const Eigen::VectorXd& q,
                                                  const Eigen::VectorXd& v,
                                                  std::span<const int> rows, Eigen::VectorXd* vdot,
                                                  Eigen::VectorXd* lambda) {
  const auto m = static_cast<Eigen::Index>(rows.size());
  DynamicsStatus status;
  system_.ConstraintJacobian(t, q, rows, &G_);
  system_.ForceDirectionsFromJacobian(t, q, v, rows, G_, &H_);
  system_.ConstraintGamma(t, q, v, rows, &gamma_);
  MinvGt_ = H_.transpose();  // M⁻¹Hᵀ here
  ApplyMinvInPlace(&MinvGt_);
  W_.resize(m, m);
  W_.noalias() = G_ * MinvGt_;
  FactorNonSymmetricDelassus(rows, &status);
  rhs_ = -gamma_;
  rhs_.noalias() -= G_ * MinvF_;
  SolveDelassus(rhs_, lambda);
  *vdot = MinvF_;
  vdot->noalias() += MinvGt_ * *lambda;
  residual_ = gamma_;
  residual_.noalias() += G_ * *vdot;
  status.residual = residual_.lpNorm<Eigen::Infinity>();
  // The consistency bound of the ideal path (same scale of the summed terms).
  const double scale = SummedTermsScale(rhs_, W_.lpNorm<Eigen::Infinity>(), *lambda,
                                        G_.lpNorm<Eigen::Infinity>(), *vdot, gamma_);
  const double consistency_tol = std::sqrt(std::numeric_limits<double>::epsilon()) * scale;
  status.ok = vdot->allFinite() && lambda->allFinite() && status.residual <= consistency_tol;
  return status;  // last_dense_ok_ stays false: RemoveConstrainedPart needs a symmetric W
}

void ConstrainedDynamics::FormDelassus() {
  const Eigen::Index m = G_.rows(), n = G_.cols();
  W_.resize(m, m);
  // The rows with a nonzero entry in each column of G (a joint row touches the coordinates of
  // its one or two bodies). Σ_k c_k² products, c_k the count of column k, against m²n for the
  // dense product.
  column_start_.resize(static_cast<std::size_t>(n) + 1);
  if (column_rows_.size() < static_cast<std::size_t>(m * n)) {
    column_rows_.resize(static_cast<std::size_t>(m * n));
  }
  int* out = column_rows_.data();
  const double* g = G_.data();
  int total = 0;
  std::size_t products = 0;
  for (Eigen::Index k = 0; k < n; ++k) {
    const int start = total;
    column_start_[static_cast<std::size_t>(k)] = start;
    const double* column = g + k * m;
    if (m <= 64) {
      // The column's nonzero pattern as a bit mask (no branch, no store per entry), then its
      // set bits in increasing order.
      for (std::uint64_t mask = NonzeroMask(column, m); mask != 0; mask &= mask - 1) {
        out[total++] = std::countr_zero(mask);
      }
    } else {
      // Branch-free scan: every row index is written, the count advances only past nonzeros.
      for (Eigen::Index i = 0; i < m; ++i) {
        out[total] = static_cast<int>(i);
        total += column[i] != 0.0 ? 1 : 0;
      }
    }
    const auto count = static_cast<std::size_t>(total - start);
    products += count * (count + 1) / 2;
  }
  column_start_[static_cast<std::size_t>(n)] = total;
  if (!mass_diagonal_ || 4 * products > static_cast<std::size_t>(m * m * n)) {
    W_.noalias() = G_ * MinvGt_;
    return;
  }
  // W = Σ_k (M⁻¹)_kk g_k g_kᵀ over the columns g_k of G with M diagonal (M⁻¹Gᵀ has the pattern
  // of Gᵀ): the lower triangle W_ij = Σ_k G_ik (M⁻¹Gᵀ)_kj, i ≥ j, with the dense product's
  // factors in the same order of k (zero terms left out), then mirrored.
  W_.setZero();
  for (Eigen::Index k = 0; k < n; ++k) {
    const int* rows = column_rows_.data() + column_start_[static_cast<std::size_t>(k)];
    const int count =
        column_start_[static_cast<std::size_t>(k) + 1] - column_start_[static_cast<std::size_t>(k)];
    for (int a = 0; a < count; ++a) {
      const double minv_gt = MinvGt_(k, rows[a]);
      for (int b = a; b < count; ++b) W_(rows[b], rows[a]) += G_(rows[b], k) * minv_gt;
    }
  }
  for (Eigen::Index j = 1; j < m; ++j) {
    for (Eigen::Index i = 0; i < j; ++i) W_(i, j) = W_(j, i);
  }
}

bool ConstrainedDynamics::FactorMass(const Eigen::VectorXd& q) {
  // A constant M (planar bodies, embedded systems that say so) is factorized once.
  mass_constant_ = system_.HasConstantMassMatrix();
  if (mass_factored_ && mass_constant_) return true;
  system_.MassMatrix(q, &M_);
  // A diagonal M (bodies with principal axes at their centres of mass) is inverted entry by
  // entry: M⁻¹ x is then nv products instead of two triangular solves.
  mass_diagonal_ = M_.isDiagonal(0.0);
  if (mass_diagonal_) {
    minv_diagonal_ = M_.diagonal().cwiseInverse();
    mass_factored_ = (M_.diagonal().array() > 0.0).all() && minv_diagonal_.allFinite();
  } else {
    llt_.compute(M_);
    mass_factored_ = llt_.info() == Eigen::Success;
  }
  return mass_factored_;
}

void ConstrainedDynamics::ApplyMinv(const Eigen::VectorXd& x, Eigen::VectorXd* out) const {
  if (mass_diagonal_) {
    out->noalias() = minv_diagonal_.cwiseProduct(x);
  } else {
    *out = x;
    llt_.solveInPlace(*out);
  }
}

void ConstrainedDynamics::ApplyMinvInPlace(Eigen::MatrixXd* X) const {
  if (mass_diagonal_) {
    *X = minv_diagonal_.asDiagonal() * *X;
  } else {
    llt_.solveInPlace(*X);
  }
}

double ConstrainedDynamics::FactorDelassusLdlt() { return w_ldlt_.Compute(W_); }

void ConstrainedDynamics::FactorDelassus(std::span<const int> rows, DynamicsStatus* status) {
  const auto m = static_cast<Eigen::Index>(rows.size());
  const bool known_redundant =
      redundant_rows_valid_ &&
      std::equal(rows.begin(), rows.end(), redundant_rows_.begin(), redundant_rows_.end());
  // W is symmetric positive semidefinite. The pivoted LDLᵀ (the largest remaining entry of W's
  // diagonal first; engine/pivoted_ldlt.h) factors it in at most m³/3 flops; its pivots d_k follow
  // the spectrum of W as the column- pivoted QR's do, so min d / max d is
  // DynamicsStatus::pivot_ratio. Only below √(rank tolerance) (redundant rows, a singular
  // configuration) is the rank decision left to the complete orthogonal decomposition.
  w_by_lu_ = false;
  double ratio = 0.0;
  if (!known_redundant) {
    ratio = FactorDelassusLdlt();
    if (ratio > std::sqrt(rank_tolerance_)) {
      w_by_ldlt_ = true;
      status->rank = static_cast<int>(m);
      status->pivot_ratio = ratio;
      return;
    }
  }
  w_by_ldlt_ = false;
  w_solver_.Compute(W_, rank_tolerance_);
  status->rank = w_solver_.rank();
  if (status->rank < m) {
    // Redundant rows: the later solves on the same rows go to the rank-revealing path directly
    // until Restart or another row set.
    redundant_rows_.assign(rows.begin(), rows.end());
    redundant_rows_valid_ = true;
    status->pivot_ratio = 0.0;
    return;
  }
  if (known_redundant) {  // the rows no longer lose rank (a singular configuration passed)
    redundant_rows_valid_ = false;
    ratio = FactorDelassusLdlt();
  }
  status->pivot_ratio = ratio;
}

double ConstrainedDynamics::FactorDelassusLu() {
  w_lu_.Compute(W_);
  return w_lu_.PivotRatio();
}

void ConstrainedDynamics::FactorNonSymmetricDelassus(std::span<const int> rows,
                                                     DynamicsStatus* status) {
  const auto m = static_cast<Eigen::Index>(rows.size());
  const bool known_redundant =
      redundant_rows_valid_ &&
      std::equal(rows.begin(), rows.end(), redundant_rows_.begin(), redundant_rows_.end());
  // As FactorDelassus with an LU with partial pivoting (2m³/3 flops) in place of the LDLᵀ. Any
  // LU of a singular W has a zero pivot, so redundant rows show a pivot at round-off level, and
  // min |u| / max |u| (the singular values' ratio for a diagonal W, as the QR's |r| ratio) is
  // DynamicsStatus::pivot_ratio while it is above √(rank tolerance). Partial pivoting is not
  // rank-revealing in general: below that ratio (redundant rows, a singular configuration, a W
  // made singular by friction) the rank-revealing QR decides, and a row set found rank-deficient
  // goes to it directly until Restart or another row set.
  w_by_ldlt_ = false;
  w_by_lu_ = false;
  if (!known_redundant) {
    const double ratio = FactorDelassusLu();
    if (ratio > std::sqrt(rank_tolerance_)) {
      w_by_lu_ = true;
      status->rank = static_cast<int>(m);
      status->pivot_ratio = ratio;
      return;
    }
  }
  w_solver_.Compute(W_, rank_tolerance_);
  status->rank = w_solver_.rank();
  status->pivot_ratio = w_solver_.PivotRatio();
  if (status->rank < m) {
    redundant_rows_.assign(rows.begin(), rows.end());
    redundant_rows_valid_ = true;
  } else if (known_redundant) {
    redundant_rows_valid_ = false;  // the rows no longer lose rank
  }
}

void ConstrainedDynamics::SolveDelassus(const Eigen::VectorXd& b, Eigen::VectorXd* x) {
  if (w_by_ldlt_) {
    *x = b;
    w_ldlt_.SolveInPlace(x);
  } else if (w_by_lu_) {
    w_lu_.Solve(b, x);
  } else {
    w_solver_.Solve(b, x);
  }
}

bool ConstrainedDynamics::LastSolveCorrection(const Eigen::VectorXd& r, Eigen::VectorXd* delta) {
  if (!last_dense_ok_ || !w_by_ldlt_ || r.size() != G_.rows()) return false;
  correction_ = r;
  w_ldlt_.SolveInPlace(&correction_);
  delta->noalias() = MinvGt_ * correction_;
  return true;
}

bool ConstrainedDynamics::RemoveConstrainedPart(Eigen::VectorXd* x) {
  if (!last_dense_ok_ || G_.rows() == 0 || x->size() != G_.cols()) return false;
  if (!penalty_valid_) {
    penalty_valid_ = penalty_.Compute(MinvGt_, W_);
    if (!penalty_valid_) return false;
  }
  // Iterated: G (x − δ) = 0 to the refinement tolerance relative to ‖G x‖ (CG's residual is
  // measured through W, so a second pass removes what the first left where W is resolved to few
  // digits only).
  refine_rhs_.noalias() = G_ * *x;
  const double target = kRefineTolerance * refine_rhs_.lpNorm<Eigen::Infinity>();
  for (int pass = 0; pass < kRefinePasses && refine_rhs_.lpNorm<Eigen::Infinity>() > target;
       ++pass) {
    penalty_.Solve(refine_rhs_, target, &delta_);
    *x -= delta_;
    refine_rhs_.noalias() = G_ * *x;
  }
  return x->allFinite();
}

bool ConstrainedDynamics::SolveSparse(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                      std::span<const int> rows, Eigen::VectorXd* vdot,
                                      Eigen::VectorXd* lambda, DynamicsStatus* status) {
  const auto m = static_cast<Eigen::Index>(rows.size());
  const bool need_mass = !(sparse_mass_factored_ && system_.HasConstantMassMatrix());
  if (!system_.BlockSparseMatrices(t, q, rows, need_mass ? &mass_blocks_ : nullptr, &G_sparse_)) {
    return false;
  }
  status->sparse = true;
  if (need_mass) {
    sparse_mass_factored_ = delassus_.SetMetric(mass_blocks_);
    if (!sparse_mass_factored_) {  // M not positive definite, as in the dense path
      status->ok = false;
      return true;
    }
  }
  system_.Forces(t, q, v, &F_);
  delassus_.ApplyNinv(F_, &MinvF_);
  if (m == 0) {
    *vdot = MinvF_;
    status->ok = vdot->allFinite();
    return true;
  }
  system_.ConstraintGamma(t, q, v, rows, &gamma_);
  auto fall_back = [&] {
    dense_rows_.assign(rows.begin(), rows.end());
    dense_rows_valid_ = true;
    return false;
  };
  // W λ = −γ − G M⁻¹ F, v̇ = M⁻¹ (F + Gᵀ λ), as in the dense path; G M⁻¹ F and G v̇ are formed
  // in the passes over G of the factorization and of M⁻¹ Gᵀ λ.
  if (!delassus_.Factor(G_sparse_, rank_tolerance_, MinvF_, &residual_)) return fall_back();
  rhs_ = -gamma_;
  rhs_ -= residual_;
  delassus_.Solve(rhs_, lambda);
  *vdot = MinvF_;
  delassus_.AddNinvGt(*lambda, vdot, &residual_);
  residual_ += gamma_;
  status->rank = static_cast<int>(m);  // W positive definite: G has full row rank
  status->residual = residual_.lpNorm<Eigen::Infinity>();
  // The consistency bound of the dense path (same scale of the summed terms).
  const double scale =
      SummedTermsScale(rhs_, delassus_.WMaxAbs(), *lambda, delassus_.GMaxAbs(), *vdot, gamma_);
  const double consistency_tol = std::sqrt(std::numeric_limits<double>::epsilon()) * scale;
  status->ok = vdot->allFinite() && lambda->allFinite() && status->residual <= consistency_tol;
  if (!status->ok) return fall_back();
  return true;
}

}  // namespace saltus::engine

#include "contact/small_lp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace saltus::contact {

SmallLp::SmallLp(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double feasibility_tolerance) {
  if (A.rows() != b.size()) {
    throw std::invalid_argument("SmallLp: A has " + std::to_string(A.rows()) + " rows but b has " +
                                std::to_string(b.size()) + " entries");
  }
  if (!A.allFinite() || !b.allFinite()) {
    throw std::invalid_argument("SmallLp: A or b has a non-finite entry");
  }
  if (!(feasibility_tolerance > 0.0) || !std::isfinite(feasibility_tolerance)) {
    throw std::invalid_argument("SmallLp: feasibility tolerance must be finite and > 0");
  }
  m_ = static_cast<int>(A.rows());
  n_ = static_cast<int>(A.cols());
  const double a_max = A.size() > 0 ? A.cwiseAbs().maxCoeff() : 0.0;
  pivot_tolerance_ = 1e-11 * std::max(1.0, a_max);
  // [A I b] with every row signed so that b ≥ 0; the artificial columns form the first basis.
  T_.setZero(m_ + 1, n_ + m_ + 1);
  basis_.resize(static_cast<std::size_t>(m_));
  for (int r = 0; r < m_; ++r) {
    const double sign = b[r] < 0.0 ? -1.0 : 1.0;
    T_.row(r).head(n_) = sign * A.row(r);
    T_(r, n_ + r) = 1.0;
    T_(r, n_ + m_) = sign * b[r];
    basis_[static_cast<std::size_t>(r)] = n_ + r;
  }
  Eigen::VectorXd cost = Eigen::VectorXd::Zero(n_ + m_);
  cost.tail(m_).setOnes();
  SetObjective(cost);
  const LpStatus status = Iterate(n_ + m_);
  if (status == LpStatus::kIterationLimit) {
    phase1_ = status;
    return;
  }
  if (-T_(m_, n_ + m_) > feasibility_tolerance) {
    phase1_ = LpStatus::kInfeasible;
    return;
  }
  // Artificial variables still basic (at ~0): pivot them out where possible.
  for (int r = 0; r < m_; ++r) {
    if (basis_[static_cast<std::size_t>(r)] < n_) continue;
    Eigen::Index j = 0;
    const double best = T_.row(r).head(n_).cwiseAbs().maxCoeff(&j);
    if (n_ > 0 && best > pivot_tolerance_) Pivot(r, static_cast<int>(j));
  }
  phase1_ = LpStatus::kOptimal;
}

Eigen::VectorXd SmallLp::x() const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n_);
  for (int r = 0; r < m_; ++r) {
    const int j = basis_[static_cast<std::size_t>(r)];
    if (j < n_) x[j] = std::max(0.0, T_(r, n_ + m_));
  }
  return x;
}

LpStatus SmallLp::Minimize(const Eigen::VectorXd& c) {
  if (!feasible()) throw std::logic_error("SmallLp::Minimize on an infeasible polyhedron");
  if (c.size() != n_ || !c.allFinite()) {
    throw std::invalid_argument("SmallLp::Minimize: c must have " + std::to_string(n_) +
                                " finite entries");
  }
  Eigen::VectorXd cost = Eigen::VectorXd::Zero(n_ + m_);
  cost.head(n_) = c;
  SetObjective(cost);
  return Iterate(n_);  // artificial columns never re-enter
}

void SmallLp::SetObjective(const Eigen::VectorXd& cost) {
  // Reduced costs d = cost − c_Bᵀ T and the value −c_Bᵀ x_B in the last row.
  T_.row(m_).setZero();
  T_.row(m_).head(n_ + m_) = cost.transpose();
  for (int r = 0; r < m_; ++r) {
    const double cb = cost[basis_[static_cast<std::size_t>(r)]];
    if (cb != 0.0) T_.row(m_) -= cb * T_.row(r);
  }
  cost_tolerance_ = 1e-11 * std::max(1.0, cost.cwiseAbs().maxCoeff());
}

void SmallLp::Pivot(int row, int col) {
  T_.row(row) /= T_(row, col);
  for (int i = 0; i <= m_; ++i) {
    if (i == row) continue;
    const double f = T_(i, col);
    if (f != 0.0) T_.row(i) -= f * T_.row(row);
  }
  // Values of basic variables stay ≥ 0: round-off below zero is clipped.
  for (int i = 0; i < m_; ++i) T_(i, n_ + m_) = std::max(0.0, T_(i, n_ + m_));
  basis_[static_cast<std::size_t>(row)] = col;
}

LpStatus SmallLp::Iterate(int allowed_columns) {
  const int rhs = n_ + m_;
  const int limit = 50 * (m_ + n_) + 50;
  for (int it = 0; it < limit; ++it) {
    int enter = -1;
    for (int j = 0; j < allowed_columns; ++j) {
      if (T_(m_, j) < -cost_tolerance_) {
        enter = j;
        break;
      }
    }
    if (enter < 0) return LpStatus::kOptimal;
    int leave = -1;
    double best_ratio = 0.0;
    for (int r = 0; r < m_; ++r) {
      if (T_(r, enter) <= pivot_tolerance_) continue;
      const double ratio = T_(r, rhs) / T_(r, enter);
      const bool tie = leave >= 0 && std::abs(ratio - best_ratio) <= 1e-14 * (1.0 + best_ratio);
      if (leave < 0 || (!tie && ratio < best_ratio) ||
          (tie && basis_[static_cast<std::size_t>(r)] < basis_[static_cast<std::size_t>(leave)])) {
        leave = r;
        best_ratio = ratio;
      }
    }
    if (leave < 0) return LpStatus::kUnbounded;
    Pivot(leave, enter);
  }
  return LpStatus::kIterationLimit;
}

namespace {

// Lexicographic comparison of row i against row k for the ratio test of column `col`:
// (rhs, B⁻¹ row) / pivot. True when row i is strictly smaller.
bool LexSmaller(const Eigen::MatrixXd& T, int i, int k, int col, int rhs, int n) {
  const double pi = T(i, col), pk = T(k, col);
  const auto cmp = [&](int j) {
    const double a = T(i, j) / pi, b = T(k, j) / pk;
    const double tol = 1e-12 * (1.0 + std::abs(a) + std::abs(b));
    return a < b - tol ? -1 : (a > b + tol ? 1 : 0);
  };
  if (const int c = cmp(rhs); c != 0) return c < 0;
  for (int j = 0; j < n; ++j) {
    if (const int c = cmp(j); c != 0) return c < 0;
  }
  return false;
}

}  // namespace

LemkeResult SolveLcpByLemke(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, int max_pivots) {
  const auto n = static_cast<int>(q.size());
  if (M.rows() != n || M.cols() != n) {
    throw std::invalid_argument("SolveLcpByLemke: M is " + std::to_string(M.rows()) + " x " +
                                std::to_string(M.cols()) + ", q has " + std::to_string(n) +
                                " entries");
  }
  if (!M.allFinite() || !q.allFinite()) {
    throw std::invalid_argument("SolveLcpByLemke: non-finite entry in M or q");
  }
  LemkeResult out;
  out.z = Eigen::VectorXd::Zero(n);
  if (n == 0 || q.minCoeff() >= 0.0) {
    out.ok = true;
    return out;
  }
  // Columns: w (0..n−1, the identity: B⁻¹ of the current basis), z (n..2n−1), z₀ (2n), values.
  const int z0 = 2 * n, rhs = 2 * n + 1;
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(n, 2 * n + 2);
  T.leftCols(n).setIdentity();
  T.middleCols(n, n) = -M;
  T.col(z0).setConstant(-1.0);
  T.col(rhs) = q;
  std::vector<int> basis(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) basis[static_cast<std::size_t>(i)] = i;
  const double pivot_tol = 1e-11 * std::max(1.0, M.cwiseAbs().maxCoeff());
  const auto pivot = [&](int r, int col) {
    T.row(r) /= T(r, col);
    for (int i = 0; i < n; ++i) {
      if (i != r && T(i, col) != 0.0) T.row(i) -= T(i, col) * T.row(r);
    }
    basis[static_cast<std::size_t>(r)] = col;
    ++out.pivots;
  };
  // z₀ enters at the most negative q_i (ties: the lexicographically largest row of (q, I)).
  int r = 0;
  for (int i = 1; i < n; ++i) {
    if (q[i] <= q[r]) r = i;
  }
  int leaving = basis[static_cast<std::size_t>(r)];
  pivot(r, z0);
  while (out.pivots < max_pivots) {
    const int enter = leaving < n ? leaving + n : leaving - n;  // complement of the leaving one
    int row = -1;
    for (int i = 0; i < n; ++i) {
      if (T(i, enter) <= pivot_tol) continue;
      if (row < 0 || LexSmaller(T, i, row, enter, rhs, n)) row = i;
    }
    if (row < 0) {
      out.ray = true;
      return out;
    }
    // z₀ leaves as soon as it may (a tie with z₀ is resolved in its favour).
    for (int i = 0; i < n; ++i) {
      if (basis[static_cast<std::size_t>(i)] == z0 && T(i, enter) > pivot_tol &&
          !LexSmaller(T, row, i, enter, rhs, n) &&
          std::abs(T(i, rhs) / T(i, enter) - T(row, rhs) / T(row, enter)) <=
              1e-12 * (1.0 + std::abs(T(row, rhs) / T(row, enter)))) {
        row = i;
      }
    }
    leaving = basis[static_cast<std::size_t>(row)];
    pivot(row, enter);
    if (leaving == z0) {
      for (int i = 0; i < n; ++i) {
        const int b = basis[static_cast<std::size_t>(i)];
        if (b >= n && b < 2 * n) out.z[b - n] = std::max(0.0, T(i, rhs));
      }
      out.ok = true;
      return out;
    }
  }
  return out;
}

}  // namespace saltus::contact

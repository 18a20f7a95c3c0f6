#include "engine/dense_lu.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace saltus::engine {

void DenseLu::Compute(const Eigen::MatrixXd& A) {
  m_ = A.rows();
  small_ = m_ <= kSmallSize;
  if (!small_) {
    large_.compute(A);
    return;
  }
  lu_.topLeftCorner(m_, m_) = A;
  for (Eigen::Index k = 0; k < m_; ++k) row_[static_cast<std::size_t>(k)] = k;
  for (Eigen::Index k = 0; k < m_; ++k) {
    Eigen::Index p = k;
    for (Eigen::Index i = k + 1; i < m_; ++i) {
      if (std::abs(lu_(i, k)) > std::abs(lu_(p, k))) p = i;
    }
    if (p != k) {
      for (Eigen::Index j = 0; j < m_; ++j) std::swap(lu_(k, j), lu_(p, j));
      std::swap(row_[static_cast<std::size_t>(k)], row_[static_cast<std::size_t>(p)]);
    }
    const double pivot = lu_(k, k);
    if (pivot == 0.0) continue;  // the column is already eliminated
    for (Eigen::Index i = k + 1; i < m_; ++i) {
      const double l = lu_(i, k) / pivot;
      lu_(i, k) = l;
      for (Eigen::Index j = k + 1; j < m_; ++j) lu_(i, j) -= l * lu_(k, j);
    }
  }
}

double DenseLu::PivotRatio() const {
  if (m_ == 0) return 1.0;
  double smallest = 0.0, largest = 0.0;
  if (small_) {
    const auto u = lu_.diagonal().head(m_).cwiseAbs();
    smallest = u.minCoeff(), largest = u.maxCoeff();
  } else {
    const auto u = large_.matrixLU().diagonal().cwiseAbs();
    smallest = u.minCoeff(), largest = u.maxCoeff();
  }
  return largest > 0.0 ? smallest / largest : 0.0;
}

void DenseLu::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) const {
  if (!small_) {
    x->noalias() = large_.solve(b);
    return;
  }
  x->resize(m_);
  for (Eigen::Index k = 0; k < m_; ++k) (*x)[k] = b[row_[static_cast<std::size_t>(k)]];
  for (Eigen::Index i = 1; i < m_; ++i) {  // L y = P b, L unit lower triangular
    for (Eigen::Index j = 0; j < i; ++j) (*x)[i] -= lu_(i, j) * (*x)[j];
  }
  for (Eigen::Index i = m_ - 1; i >= 0; --i) {  // U x = y
    for (Eigen::Index j = i + 1; j < m_; ++j) (*x)[i] -= lu_(i, j) * (*x)[j];
    (*x)[i] /= lu_(i, i);
  }
}

}  // namespace saltus::engine

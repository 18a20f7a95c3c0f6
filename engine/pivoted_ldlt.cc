#include "engine/pivoted_ldlt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace saltus::engine {
namespace {

// y ← y − t x over `count` entries (x and y do not overlap: distinct columns, or L and a vector).
void SubtractScaled(const double* __restrict x, double t, std::size_t count, double* __restrict y) {
  for (std::size_t i = 0; i < count; ++i) y[i] -= x[i] * t;
}

// column_k[i] −= Σ_{j<k, l_kj≠0} l_ij (d_j l_kj) for i > k (a: n × n, column-major, the columns
// j < k finished; last[j]: the last nonzero row of column j). Four rows at a time, each row's sum
// accumulated over j ascending in a register: the additions of one row at a time in the same
// order. A column j whose last nonzero is above the four rows is skipped; its zeros inside them
// add ±0, which changes no sum.
void SubtractUpdates(const double* a, std::size_t n, std::size_t k, const int* last,
                     double* column_k) {
  std::size_t i0 = k + 1;
  for (; i0 + 4 <= n; i0 += 4) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      const double* column_j = a + j * n;
      const double l_kj = column_j[k];
      if (l_kj == 0.0 || static_cast<std::size_t>(last[j]) < i0) continue;
      const double t = column_j[j] * l_kj;  // d_j l_kj
      s0 += column_j[i0] * t;
      s1 += column_j[i0 + 1] * t;
      s2 += column_j[i0 + 2] * t;
      s3 += column_j[i0 + 3] * t;
    }
    column_k[i0] -= s0;
    column_k[i0 + 1] -= s1;
    column_k[i0 + 2] -= s2;
    column_k[i0 + 3] -= s3;
  }
  for (; i0 < n; ++i0) {
    double sum = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      const double* column_j = a + j * n;
      const double l_kj = column_j[k];
      if (l_kj == 0.0 || static_cast<std::size_t>(last[j]) < i0) continue;
      sum += column_j[i0] * (column_j[j] * l_kj);
    }
    column_k[i0] -= sum;
  }
}

}  // namespace

double PivotedLdlt::Compute(const Eigen::MatrixXd& W) {
  const Eigen::Index m = W.rows();
  const auto n = static_cast<std::size_t>(m);
  m_ = m;
  usable_ = false;
  if (a_.size() < n * n) a_.resize(n * n);
  if (order_.size() < n) {
    order_.resize(n);
    diagonal_.resize(n);
    last_.resize(n);
    y_.resize(n);
  }
  if (m == 0) {
    usable_ = true;
    return 1.0;
  }

  if (!KeepsLastOrder(W)) SelectOrder(W);

  // A = P W Pᵀ, lower triangle, from W's lower triangle (entry (max, min) of the two rows).
  double* a = a_.data();
  for (std::size_t j = 0; j < n; ++j) {
    const int wj = order_[j];
    double* column = a + j * n;
    for (std::size_t i = j; i < n; ++i) {
      const int wi = order_[i];
      column[i] = W(std::max(wi, wj), std::min(wi, wj));
    }
  }

  // Left-looking elimination, column k from the columns j < k with l_kj ≠ 0, each over its rows
  // up to its last nonzero.
  double largest = 0.0;
  double smallest = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    double* column_k = a + k * n;
    // As Eigen::LDLT 3.4: the update of column k is accumulated over j < k first and then
    // subtracted, and the column is divided by d_k (no reciprocal): the same rounding where the
    // rank decisions read the pivots.
    double update = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      const double l_kj = a[j * n + k];
      if (l_kj != 0.0) update += l_kj * (a[j * n + j] * l_kj);
    }
    SubtractUpdates(a, n, k, last_.data(), column_k);
    const double d_k = column_k[k] - update;
    if (!(d_k > 0.0) || !std::isfinite(d_k)) return 0.0;
    column_k[k] = d_k;
    std::size_t last = k;
    for (std::size_t i = k + 1; i < n; ++i) {
      column_k[i] /= d_k;
      if (column_k[i] != 0.0) last = i;
    }
    last_[k] = static_cast<int>(last);
    if (k == 0 || d_k > largest) largest = d_k;
    if (k == 0 || d_k < smallest) smallest = d_k;
  }
  usable_ = true;
  return smallest / largest;
}

// With |W_ii| strictly decreasing along the last order, each step's largest remaining entry is
// unique and is the next one of that order.
bool PivotedLdlt::KeepsLastOrder(const Eigen::MatrixXd& W) {
  if (order_size_ != m_) return false;
  const auto n = static_cast<std::size_t>(m_);
  double previous = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Index i = order_[k];
    const double value = std::abs(W(i, i));
    if (!(value < previous)) return false;  // a tie, a rise or a NaN: select again
    previous = value;
  }
  return true;
}

// At step k the largest remaining |W_ii| (the first of equal ones), exchanged with position k.
void PivotedLdlt::SelectOrder(const Eigen::MatrixXd& W) {
  const auto n = static_cast<std::size_t>(m_);
  for (std::size_t i = 0; i < n; ++i) {
    order_[i] = static_cast<int>(i);
    diagonal_[i] = std::abs(W(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(i)));
  }
  for (std::size_t k = 0; k + 1 < n; ++k) {
    std::size_t best = k;
    for (std::size_t i = k + 1; i < n; ++i) {
      if (diagonal_[i] > diagonal_[best]) best = i;
    }
    if (best != k) {
      std::swap(diagonal_[k], diagonal_[best]);
      std::swap(order_[k], order_[best]);
    }
  }
  order_size_ = m_;
}

void PivotedLdlt::SolveInPlace(Eigen::VectorXd* x) const {
  const auto n = static_cast<std::size_t>(m_);
  const double* a = a_.data();
  double* y = y_.data();
  for (std::size_t k = 0; k < n; ++k) y[k] = (*x)(order_[k]);
  // L z = P b by columns: z_j is final once the columns before it are applied.
  for (std::size_t j = 0; j < n; ++j) {
    const double z_j = y[j];
    const auto rows_below = static_cast<std::size_t>(last_[j]) - j;
    if (z_j != 0.0) SubtractScaled(a + j * n + j + 1, z_j, rows_below, y + j + 1);
  }
  for (std::size_t k = 0; k < n; ++k) y[k] /= a[k * n + k];
  // Lᵀ u = D⁻¹ z by rows of Lᵀ, i.e. the columns of L below the diagonal (two partial sums).
  for (std::size_t k = n; k-- > 0;) {
    const double* column_k = a + k * n;
    const auto end = static_cast<std::size_t>(last_[k]) + 1;
    double even = 0.0, odd = 0.0;
    std::size_t i = k + 1;
    for (; i + 1 < end; i += 2) {
      even += column_k[i] * y[i];
      odd += column_k[i + 1] * y[i + 1];
    }
    if (i < end) even += column_k[i] * y[i];
    y[k] -= even + odd;
  }
  for (std::size_t k = 0; k < n; ++k) (*x)(order_[k]) = y[k];
}

}  // namespace saltus::engine

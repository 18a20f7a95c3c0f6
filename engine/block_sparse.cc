#include "engine/block_sparse.h"

#include <Eigen/OrderingMethods>
#include <algorithm>
#include <cmath>

#include "engine/mechanical_system.h"

namespace saltus::engine {

// ---- BlockSparseRows -------------------------------------------------------------------------

void BlockSparseRows::Clear(int block_size_in, int cols_in) {
  block_size = block_size_in;
  cols = cols_in;
  row_start.clear();
  row_start.push_back(0);
  block_col.clear();
  values.clear();
}

double* BlockSparseRows::AddBlock(int col_block) {
  block_col.push_back(col_block);
  values.insert(values.end(), static_cast<std::size_t>(block_size), 0.0);
  return values.data() + values.size() - static_cast<std::size_t>(block_size);
}

void BlockSparseRows::AppendDenseRow(const Eigen::Ref<const Eigen::RowVectorXd>& row) {
  const int num_blocks = cols / block_size;
  for (int c = 0; c < num_blocks; ++c) {
    const auto seg = row.segment(static_cast<Eigen::Index>(c) * block_size, block_size);
    if ((seg.array() != 0.0).any()) {
      double* out = AddBlock(c);
      for (int j = 0; j < block_size; ++j) out[j] = seg(j);
    }
  }
  EndRow();
}

void BlockSparseRows::Multiply(const Eigen::VectorXd& x, Eigen::VectorXd* y) const {
  const int m = rows();
  y->resize(m);
  for (int i = 0; i < m; ++i) {
    double sum = 0.0;
    for (int k = row_start[static_cast<std::size_t>(i)];
         k < row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      const double* g = values.data() + static_cast<std::ptrdiff_t>(k) * block_size;
      const double* xc =
          x.data() +
          static_cast<std::ptrdiff_t>(block_col[static_cast<std::size_t>(k)]) * block_size;
      for (int j = 0; j < block_size; ++j) sum += g[j] * xc[j];
    }
    (*y)(i) = sum;
  }
}

double BlockSparseRows::MaxAbs() const {
  double out = 0.0;
  for (double value : values) out = std::max(out, std::abs(value));
  return out;
}

Eigen::MatrixXd BlockSparseRows::ToDense() const {
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(rows(), cols);
  for (int i = 0; i < rows(); ++i) {
    for (int k = row_start[static_cast<std::size_t>(i)];
         k < row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      for (int j = 0; j < block_size; ++j) {
        A(i, block_col[static_cast<std::size_t>(k)] * block_size + j) +=
            values[static_cast<std::size_t>(k * block_size + j)];
      }
    }
  }
  return A;
}

// ---- SparseDelassus --------------------------------------------------------------------------

namespace {

// out = B x for block c of a b × nv matrix of b × b blocks (column-major, block c contiguous at
// data + b² c). Spatial (6) and planar (3) blocks use fixed-size products: Eigen's dynamic-size
// product of a middleCols block dispatches to its general matrix-vector kernel, whose setup
// costs more than the 36 multiply-adds.
template <int B>
void FixedBlockTimes(const double* block, const double* x, double* out) {
  Eigen::Map<Eigen::Matrix<double, B, 1>>(out).noalias() =
      Eigen::Map<const Eigen::Matrix<double, B, B>>(block) *
      Eigen::Map<const Eigen::Matrix<double, B, 1>>(x);
}
void BlockTimes(const Eigen::MatrixXd& blocks, int b, Eigen::Index c, const double* x,
                double* out) {
  const double* block = blocks.data() + c * b * b;
  if (b == 6) return FixedBlockTimes<6>(block, x, out);
  if (b == 3) return FixedBlockTimes<3>(block, x, out);
  Eigen::Map<Eigen::VectorXd>(out, b).noalias() =
      Eigen::Map<const Eigen::MatrixXd>(block, b, b) * Eigen::Map<const Eigen::VectorXd>(x, b);
}

}  // namespace

bool SparseDelassus::SetMetric(const MassBlocks& N) {
  const int b = N.block_size;
  const auto nv = N.blocks.cols();
  identity_ = false;
  block_size_ = b;
  ninv_.resize(b, nv);
  for (Eigen::Index c = 0; c * b < nv; ++c) {
    block_ = N.blocks.middleCols(c * b, b);
    block_llt_.compute(block_);
    if (block_llt_.info() != Eigen::Success) return false;
    auto out = ninv_.middleCols(c * b, b);
    out.setIdentity();
    block_llt_.solveInPlace(out);
  }
  return true;
}

void SparseDelassus::SetIdentityMetric(int block_size, int nv) {
  identity_ = true;
  block_size_ = block_size;
  ninv_.resize(0, nv);
}

void SparseDelassus::AnalyzePattern(const BlockSparseRows& G) {
  const int m = G.rows();
  const int b = G.block_size;
  const int num_blocks = G.cols / b;
  const auto nnz = static_cast<int>(G.block_col.size());
  // Entries of G by column block.
  std::vector<int> entry_row(static_cast<std::size_t>(nnz));
  std::vector<int> col_start(static_cast<std::size_t>(num_blocks) + 1, 0);
  for (int i = 0; i < m; ++i) {
    for (int k = G.row_start[static_cast<std::size_t>(i)];
         k < G.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
      entry_row[static_cast<std::size_t>(k)] = i;
      ++col_start[static_cast<std::size_t>(G.block_col[static_cast<std::size_t>(k)]) + 1];
    }
  }
  for (int c = 0; c < num_blocks; ++c) {
    col_start[static_cast<std::size_t>(c) + 1] += col_start[static_cast<std::size_t>(c)];
  }
  std::vector<int> col_entries(static_cast<std::size_t>(nnz));
  {
    std::vector<int> fill(col_start.begin(), col_start.end() - 1);
    for (int k = 0; k < nnz; ++k) {
      const auto c = static_cast<std::size_t>(G.block_col[static_cast<std::size_t>(k)]);
      col_entries[static_cast<std::size_t>(fill[c]++)] = k;
    }
  }
  // Pairs of entries sharing a column block; W(i, j) gets G_ka N⁻¹ G_kbᵀ.
  std::vector<int> pair_a, pair_b;
  std::vector<Eigen::Triplet<double, int>> pattern;
  for (int c = 0; c < num_blocks; ++c) {
    for (int p = col_start[static_cast<std::size_t>(c)];
         p < col_start[static_cast<std::size_t>(c) + 1]; ++p) {
      for (int r = p; r < col_start[static_cast<std::size_t>(c) + 1]; ++r) {
        const int ka = col_entries[static_cast<std::size_t>(p)];
        const int kb = col_entries[static_cast<std::size_t>(r)];
        pair_a.push_back(ka);
        pair_b.push_back(kb);
        const int i = entry_row[static_cast<std::size_t>(ka)];
        const int j = entry_row[static_cast<std::size_t>(kb)];
        pattern.emplace_back(i, j, 1.0);
        if (i != j) pattern.emplace_back(j, i, 1.0);
      }
    }
  }
  for (int i = 0; i < m; ++i) pattern.emplace_back(i, i, 1.0);  // empty rows still get a pivot
  Eigen::SparseMatrix<double> full(m, m);
  full.setFromTriplets(pattern.begin(), pattern.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> Pinv;
  Eigen::AMDOrdering<int> amd;
  amd(full, Pinv);
  const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> P = Pinv.inverse();
  perm_.assign(P.indices().data(), P.indices().data() + m);

  // Upper triangle of P W Pᵀ.
  std::vector<Eigen::Triplet<double, int>> upper;
  upper.reserve(pattern.size() / 2 + static_cast<std::size_t>(m));
  for (int col = 0; col < full.outerSize(); ++col) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(full, col); it; ++it) {
      const int pi = perm_[static_cast<std::size_t>(it.row())];
      const int pj = perm_[static_cast<std::size_t>(it.col())];
      if (pi <= pj) upper.emplace_back(pi, pj, 0.0);
    }
  }
  W_.resize(m, m);
  W_.setFromTriplets(upper.begin(), upper.end());
  W_.makeCompressed();
  pair_pos_.resize(pair_a.size());
  for (std::size_t p = 0; p < pair_a.size(); ++p) {
    int pi = perm_[static_cast<std::size_t>(entry_row[static_cast<std::size_t>(pair_a[p])])];
    int pj = perm_[static_cast<std::size_t>(entry_row[static_cast<std::size_t>(pair_b[p])])];
    if (pi > pj) std::swap(pi, pj);
    const int* begin = W_.innerIndexPtr() + W_.outerIndexPtr()[pj];
    const int* end = W_.innerIndexPtr() + W_.outerIndexPtr()[pj + 1];
    pair_pos_[p] = static_cast<int>(std::lower_bound(begin, end, pi) - W_.innerIndexPtr());
  }
  ldlt_.Analyze(W_);
  int max_entries = 0;
  for (int c = 0; c < num_blocks; ++c) {
    max_entries = std::max(max_entries, col_start[static_cast<std::size_t>(c) + 1] -
                                            col_start[static_cast<std::size_t>(c)]);
  }
  y_block_.resize(static_cast<std::size_t>(max_entries) * static_cast<std::size_t>(b));
  z_.resize(2 * static_cast<std::size_t>(b));
  col_start_ = std::move(col_start);
  col_entries_ = std::move(col_entries);
  entry_row_ = std::move(entry_row);
  structure_ = G;
  x_perm_.resize(m);
  ++analyses_;
}

bool SparseDelassus::Factor(const BlockSparseRows& G, double rank_tolerance) {
  G_ = &G;
  const int b = G.block_size;
  if (b != block_size_) return false;
  if (!G.SameStructure(structure_)) AnalyzePattern(G);
  // Body block by body block (one pass over G, no stored N⁻¹Gᵀ: the working set of a long chain
  // then fits in cache, issue 3 §8): y_k = N_c⁻¹ G_kᵀ for the entries k of column block c, then
  // W(i, j) += G_ka y_kb for the pairs of those entries, in the order of pair_pos_.
  double* w = W_.valuePtr();
  std::fill(w, w + W_.nonZeros(), 0.0);
  const auto ub = static_cast<std::size_t>(b);
  const int num_blocks = static_cast<int>(col_start_.size()) - 1;
  std::size_t pair = 0;
  for (int c = 0; c < num_blocks; ++c) {
    const int begin = col_start_[static_cast<std::size_t>(c)];
    const int end = col_start_[static_cast<std::size_t>(c) + 1];
    for (int p = begin; p < end; ++p) {
      const double* g = G.values.data() +
                        static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]) * ub;
      double* y = y_block_.data() + static_cast<std::size_t>(p - begin) * ub;
      if (identity_) {
        std::copy(g, g + b, y);
      } else {
        BlockTimes(ninv_, b, c, g, y);
      }
    }
    for (int p = begin; p < end; ++p) {
      const double* ga = G.values.data() +
                         static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]) * ub;
      for (int r = p; r < end; ++r) {
        const double* yb = y_block_.data() + static_cast<std::size_t>(r - begin) * ub;
        double sum = 0.0;
        for (int j = 0; j < b; ++j) sum += ga[j] * yb[j];
        w[pair_pos_[pair++]] += sum;
      }
    }
  }
  w_max_abs_ = 0.0;
  for (Eigen::Index k = 0; k < W_.nonZeros(); ++k)
    w_max_abs_ = std::max(w_max_abs_, std::abs(w[k]));
  ldlt_.Factorize(W_);
  if (ldlt_.info() != Eigen::Success) return false;
  const Eigen::VectorXd& d = ldlt_.D();
  if (d.size() == 0) return true;
  if (!d.allFinite()) return false;
  const double d_max = d.maxCoeff();
  return d_max > 0.0 && d.minCoeff() > rank_tolerance * d_max;
}

void SparseDelassus::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) {
  const auto m = static_cast<Eigen::Index>(perm_.size());
  for (Eigen::Index i = 0; i < m; ++i) x_perm_(perm_[static_cast<std::size_t>(i)]) = b(i);
  ldlt_.matrixL().solveInPlace(x_perm_);
  x_perm_.array() /= ldlt_.D().array();
  ldlt_.matrixU().solveInPlace(x_perm_);
  x->resize(m);
  for (Eigen::Index i = 0; i < m; ++i) (*x)(i) = x_perm_(perm_[static_cast<std::size_t>(i)]);
}

void SparseDelassus::ApplyNinv(const Eigen::VectorXd& f, Eigen::VectorXd* x) const {
  x->resize(f.size());
  if (identity_) {
    *x = f;
    return;
  }
  const int b = block_size_;
  for (Eigen::Index c = 0; c * b < f.size(); ++c) {
    BlockTimes(ninv_, b, c, f.data() + c * b, x->data() + c * b);
  }
}

void SparseDelassus::AddNinvGt(const Eigen::VectorXd& lambda, Eigen::VectorXd* x) const {
  const BlockSparseRows& G = *G_;
  const int b = G.block_size;
  const auto ub = static_cast<std::size_t>(b);
  const int num_blocks = static_cast<int>(col_start_.size()) - 1;
  // Per column block c: z = Σ_k λ_row(k) G_kᵀ over its entries, then x_c += N_c⁻¹ z.
  double* z = z_.data();
  double* ninv_z = z_.data() + b;
  for (int c = 0; c < num_blocks; ++c) {
    const int begin = col_start_[static_cast<std::size_t>(c)];
    const int end = col_start_[static_cast<std::size_t>(c) + 1];
    if (begin == end) continue;
    std::fill(z, z + b, 0.0);
    for (int p = begin; p < end; ++p) {
      const auto k = static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]);
      const double l = lambda(entry_row_[k]);
      const double* g = G.values.data() + k * ub;
      for (int j = 0; j < b; ++j) z[j] += l * g[j];
    }
    double* out = x->data() + static_cast<std::ptrdiff_t>(c) * b;
    if (identity_) {
      for (int j = 0; j < b; ++j) out[j] += z[j];
    } else {
      BlockTimes(ninv_, b, c, z, ninv_z);
      for (int j = 0; j < b; ++j) out[j] += ninv_z[j];
    }
  }
}

// ---- ConstraintRate ----------------------------------------------------------------------------

void ConstraintRate(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                    const Eigen::VectorXd& v, std::span<const int> rows, Eigen::VectorXd* g_dot) {
  thread_local BlockSparseRows G_sparse;
  thread_local Eigen::MatrixXd G_dense;
  thread_local Eigen::VectorXd g_t;
  if (system.BlockSparseMatrices(t, q, rows, nullptr, &G_sparse)) {
    G_sparse.Multiply(v, g_dot);
  } else {
    system.ConstraintJacobian(t, q, rows, &G_dense);
    g_dot->resize(G_dense.rows());
    g_dot->noalias() = G_dense * v;
  }
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  *g_dot += g_t;
}

}  // namespace saltus::engine

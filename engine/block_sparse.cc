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
  const std::size_t size = values.size();
  values.resize(size + static_cast<std::size_t>(block_size), 0.0);
  return values.data() + size;
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
  if (values.empty()) return 0.0;
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()))
      .cwiseAbs()
      .maxCoeff();
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

// a · b for b-vectors (fixed-size for spatial blocks: vectorized).
double Dot(const double* a, const double* b, int n) {
  if (n == 6) {
    return Eigen::Map<const Eigen::Matrix<double, 6, 1>>(a).dot(
        Eigen::Map<const Eigen::Matrix<double, 6, 1>>(b));
  }
  double sum = 0.0;
  for (int j = 0; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

// Kernels of the block LDLᵀ (column-major blocks). A positive size parameter fixes the block
// sizes at compile time (3: the rows of a spherical joint), 0 takes them from the arguments.
// Dense unpivoted LDLᵀ of the n × n block L (lower triangle in, unit L below the diagonal out).
template <int N>
void DiagonalLdlt(double* L, double* d, int n_rt) {
  const int n = N > 0 ? N : n_rt;
  for (int c = 0; c < n; ++c) {
    double dc = L[c + c * n];
    for (int p = 0; p < c; ++p) dc -= L[c + p * n] * L[c + p * n] * d[p];
    d[c] = dc;
    for (int r = c + 1; r < n; ++r) {
      double v = L[r + c * n];
      for (int p = 0; p < c; ++p) v -= L[r + p * n] * L[c + p * n] * d[p];
      L[r + c * n] = v / dc;
    }
  }
}
// B = W_ik L_kk⁻ᵀ (ni × nk), then L_ik = B D_k⁻¹ in place of W_ik.
template <int NI, int NK>
void OffDiagonalBlock(double* Lik, double* B, const double* Lkk, const double* dk, int ni_rt,
                      int nk_rt) {
  const int ni = NI > 0 ? NI : ni_rt;
  const int nk = NK > 0 ? NK : nk_rt;
  for (int c = 0; c < nk; ++c) {
    for (int r = 0; r < ni; ++r) {
      double v = Lik[r + c * ni];
      for (int p = 0; p < c; ++p) v -= B[r + p * ni] * Lkk[c + p * nk];
      B[r + c * ni] = v;
    }
  }
  for (int c = 0; c < nk; ++c) {
    for (int r = 0; r < ni; ++r) Lik[r + c * ni] = B[r + c * ni] / dk[c];
  }
}
// T −= B_ik L_jkᵀ (ni × nj; only the lower triangle when T is the diagonal block of i = j).
template <int N>
void SchurUpdate(double* T, const double* B, const double* Ljk, int ni_rt, int nj_rt, int nk_rt,
                 bool diagonal) {
  const int ni = N > 0 ? N : ni_rt;
  const int nj = N > 0 ? N : nj_rt;
  const int nk = N > 0 ? N : nk_rt;
  for (int s = 0; s < nj; ++s) {
    for (int r = diagonal ? s : 0; r < ni; ++r) {
      double v = 0.0;
      for (int p = 0; p < nk; ++p) v += B[r + p * ni] * Ljk[s + p * nj];
      T[r + s * ni] -= v;
    }
  }
}

}  // namespace

bool SparseDelassus::SetMetric(const MassBlocks& N) {
  const int b = N.block_size;
  const auto nv = N.blocks.cols();
  identity_ = false;
  block_size_ = b;
  ninv_.resize(b, nv);
  diagonal_ = true;
  for (Eigen::Index c = 0; c * b < nv; ++c) {
    block_ = N.blocks.middleCols(c * b, b);
    block_llt_.compute(block_);
    if (block_llt_.info() != Eigen::Success) return false;
    auto out = ninv_.middleCols(c * b, b);
    out.setIdentity();
    block_llt_.solveInPlace(out);
    for (Eigen::Index j = 0; j < b && diagonal_; ++j) {
      for (Eigen::Index i = 0; i < b; ++i) {
        if (i != j && out(i, j) != 0.0) {
          diagonal_ = false;
          break;
        }
      }
    }
  }
  // Diagonal blocks (bodies with their centre of mass at the frame origin and principal axes):
  // N⁻¹ x is an element-wise product, exactly the sum of the full block product (the other terms
  // are zeros), on a sixth of the data.
  if (diagonal_) ninv_diagonal_ = ninv_.colwise().sum().transpose();
  return true;
}

void SparseDelassus::SetIdentityMetric(int block_size, int nv) {
  identity_ = true;
  diagonal_ = false;
  block_size_ = block_size;
  ninv_.resize(0, nv);
}

void SparseDelassus::AnalyzePattern(const BlockSparseRows& G) {
  using Index = std::size_t;
  const int m = G.rows();
  const int b = G.block_size;
  const int num_blocks = G.cols / b;
  const auto nnz = static_cast<int>(G.block_col.size());
  // Entries of G by column block.
  std::vector<int> entry_row(static_cast<Index>(nnz));
  std::vector<int> col_start(static_cast<Index>(num_blocks) + 1, 0);
  for (int i = 0; i < m; ++i) {
    for (int k = G.row_start[static_cast<Index>(i)]; k < G.row_start[static_cast<Index>(i) + 1];
         ++k) {
      entry_row[static_cast<Index>(k)] = i;
      ++col_start[static_cast<Index>(G.block_col[static_cast<Index>(k)]) + 1];
    }
  }
  for (int c = 0; c < num_blocks; ++c) {
    col_start[static_cast<Index>(c) + 1] += col_start[static_cast<Index>(c)];
  }
  std::vector<int> col_entries(static_cast<Index>(nnz));
  {
    std::vector<int> fill(col_start.begin(), col_start.end() - 1);
    for (int k = 0; k < nnz; ++k) {
      const auto c = static_cast<Index>(G.block_col[static_cast<Index>(k)]);
      col_entries[static_cast<Index>(fill[c]++)] = k;
    }
  }

  // Groups: runs of consecutive rows with the same column blocks.
  std::vector<int> group_of(static_cast<Index>(m));
  std::vector<int> group_first;  // first row of each group
  auto same_pattern = [&](int i, int j) {
    const int bi = G.row_start[static_cast<Index>(i)], ei = G.row_start[static_cast<Index>(i) + 1];
    const int bj = G.row_start[static_cast<Index>(j)], ej = G.row_start[static_cast<Index>(j) + 1];
    return ei - bi == ej - bj &&
           std::equal(G.block_col.begin() + bi, G.block_col.begin() + ei, G.block_col.begin() + bj);
  };
  for (int i = 0; i < m; ++i) {
    if (i == 0 || !same_pattern(i, i - 1)) group_first.push_back(i);
    group_of[static_cast<Index>(i)] = static_cast<int>(group_first.size()) - 1;
  }
  const int ng = static_cast<int>(group_first.size());
  group_first.push_back(m);

  // Group graph (groups sharing a column block), ordered by AMD.
  std::vector<Eigen::Triplet<double, int>> pattern;
  for (int g = 0; g < ng; ++g) pattern.emplace_back(g, g, 1.0);
  for (int c = 0; c < num_blocks; ++c) {
    for (int p = col_start[static_cast<Index>(c)]; p < col_start[static_cast<Index>(c) + 1]; ++p) {
      for (int r = p + 1; r < col_start[static_cast<Index>(c) + 1]; ++r) {
        const int gi = group_of[static_cast<Index>(
            entry_row[static_cast<Index>(col_entries[static_cast<Index>(p)])])];
        const int gj = group_of[static_cast<Index>(
            entry_row[static_cast<Index>(col_entries[static_cast<Index>(r)])])];
        if (gi != gj) {
          pattern.emplace_back(gi, gj, 1.0);
          pattern.emplace_back(gj, gi, 1.0);
        }
      }
    }
  }
  Eigen::SparseMatrix<double> full(ng, ng);
  full.setFromTriplets(pattern.begin(), pattern.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> Pinv;
  Eigen::AMDOrdering<int> amd;
  amd(full, Pinv);
  const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> P = Pinv.inverse();
  std::vector<int> position(P.indices().data(), P.indices().data() + ng);  // group → position

  // Sizes and scalar offsets in elimination order; the permutation of the rows.
  size_.assign(static_cast<Index>(ng), 0);
  for (int g = 0; g < ng; ++g) {
    size_[static_cast<Index>(position[static_cast<Index>(g)])] =
        group_first[static_cast<Index>(g) + 1] - group_first[static_cast<Index>(g)];
  }
  offset_.assign(static_cast<Index>(ng) + 1, 0);
  for (int k = 0; k < ng; ++k) {
    offset_[static_cast<Index>(k) + 1] =
        offset_[static_cast<Index>(k)] + size_[static_cast<Index>(k)];
  }
  perm_.resize(static_cast<Index>(m));
  for (int i = 0; i < m; ++i) {
    const int g = group_of[static_cast<Index>(i)];
    perm_[static_cast<Index>(i)] = offset_[static_cast<Index>(position[static_cast<Index>(g)])] +
                                   i - group_first[static_cast<Index>(g)];
  }

  // Symbolic factorization on the groups: the blocks below the diagonal of column k are its
  // neighbours after k and those of its children in the elimination tree (parent = first one).
  std::vector<std::vector<int>> below(static_cast<Index>(ng));
  for (int col = 0; col < ng; ++col) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(full, col); it; ++it) {
      const int i = position[static_cast<Index>(it.row())];
      const int k = position[static_cast<Index>(col)];
      if (i > k) below[static_cast<Index>(k)].push_back(i);
    }
  }
  for (int k = 0; k < ng; ++k) {
    auto& list = below[static_cast<Index>(k)];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    if (list.empty()) continue;
    const int parent = list.front();
    auto& up = below[static_cast<Index>(parent)];
    up.insert(up.end(), list.begin() + 1, list.end());  // sorted and deduplicated at `parent`
  }
  // Storage: column k's diagonal block, then its blocks below.
  diag_.resize(static_cast<Index>(ng));
  below_start_.assign(1, 0);
  below_group_.clear();
  below_pos_.clear();
  std::size_t total = 0, work = 0;
  for (int k = 0; k < ng; ++k) {
    const auto nk = static_cast<std::size_t>(size_[static_cast<Index>(k)]);
    diag_[static_cast<Index>(k)] = static_cast<int>(total);
    total += nk * nk;
    std::size_t column = 0;
    for (const int i : below[static_cast<Index>(k)]) {
      below_group_.push_back(i);
      below_pos_.push_back(static_cast<int>(total));
      total += static_cast<std::size_t>(size_[static_cast<Index>(i)]) * nk;
      column += static_cast<std::size_t>(size_[static_cast<Index>(i)]) * nk;
    }
    below_start_.push_back(static_cast<int>(below_group_.size()));
    work = std::max(work, column);
  }
  store_.assign(total, 0.0);
  work_.assign(work, 0.0);
  // Position of entry (r, s), r ≥ s in permuted scalar order, of the lower triangle.
  std::vector<int> group_at(static_cast<Index>(m));  // position → group in elimination order
  for (int k = 0; k < ng; ++k) {
    for (int r = offset_[static_cast<Index>(k)]; r < offset_[static_cast<Index>(k) + 1]; ++r) {
      group_at[static_cast<Index>(r)] = k;
    }
  }
  auto block_pos = [&](int gi, int k) {  // gi > k, gi among the blocks below column k
    const auto begin = below_group_.begin() + below_start_[static_cast<Index>(k)];
    const auto end = below_group_.begin() + below_start_[static_cast<Index>(k) + 1];
    const auto it = std::lower_bound(begin, end, gi);
    return below_pos_[static_cast<Index>(it - below_group_.begin())];
  };
  auto lower_pos = [&](int r, int s) {
    if (r < s) std::swap(r, s);
    const int gr = group_at[static_cast<Index>(r)], gs = group_at[static_cast<Index>(s)];
    const int lr = r - offset_[static_cast<Index>(gr)], ls = s - offset_[static_cast<Index>(gs)];
    const int ns = size_[static_cast<Index>(gs)];
    if (gr == gs) return diag_[static_cast<Index>(gs)] + lr + ls * ns;
    return block_pos(gr, gs) + lr + ls * size_[static_cast<Index>(gr)];
  };
  // Pairs of entries sharing a column block; W(i, j) gets G_ka N⁻¹ G_kbᵀ.
  pair_pos_.clear();
  for (int c = 0; c < num_blocks; ++c) {
    for (int p = col_start[static_cast<Index>(c)]; p < col_start[static_cast<Index>(c) + 1]; ++p) {
      for (int r = p; r < col_start[static_cast<Index>(c) + 1]; ++r) {
        const int i = entry_row[static_cast<Index>(col_entries[static_cast<Index>(p)])];
        const int j = entry_row[static_cast<Index>(col_entries[static_cast<Index>(r)])];
        pair_pos_.push_back(lower_pos(perm_[static_cast<Index>(i)], perm_[static_cast<Index>(j)]));
      }
    }
  }
  // Targets of the updates L_ik D_k L_jkᵀ (i ≥ j among the blocks below k): the diagonal block
  // of i when i = j, else block i below column j.
  update_pos_.clear();
  for (int k = 0; k < ng; ++k) {
    for (int e = below_start_[static_cast<Index>(k)]; e < below_start_[static_cast<Index>(k) + 1];
         ++e) {
      for (int f = below_start_[static_cast<Index>(k)]; f <= e; ++f) {
        const int i = below_group_[static_cast<Index>(e)];
        const int j = below_group_[static_cast<Index>(f)];
        update_pos_.push_back(i == j ? diag_[static_cast<Index>(i)] : block_pos(i, j));
      }
    }
  }
  int max_entries = 0;
  for (int c = 0; c < num_blocks; ++c) {
    max_entries = std::max(max_entries,
                           col_start[static_cast<Index>(c) + 1] - col_start[static_cast<Index>(c)]);
  }
  y_block_.resize(static_cast<Index>(max_entries) * static_cast<Index>(b));
  z_.resize(2 * static_cast<Index>(b));
  col_start_ = std::move(col_start);
  col_entries_ = std::move(col_entries);
  entry_row_ = std::move(entry_row);
  structure_ = G;
  x_perm_.resize(m);
  d_.resize(m);
  ++analyses_;
}

bool SparseDelassus::Factor(const BlockSparseRows& G, double rank_tolerance) {
  return FactorImpl(G, rank_tolerance, nullptr, nullptr);
}

bool SparseDelassus::Factor(const BlockSparseRows& G, double rank_tolerance,
                            const Eigen::VectorXd& x, Eigen::VectorXd* Gx) {
  return FactorImpl(G, rank_tolerance, &x, Gx);
}

bool SparseDelassus::FactorImpl(const BlockSparseRows& G, double rank_tolerance,
                                const Eigen::VectorXd* x, Eigen::VectorXd* Gx) {
  G_ = &G;
  const int b = G.block_size;
  if (b != block_size_) return false;
  if (!G.SameStructure(structure_)) AnalyzePattern(G);
  // Body block by body block (one pass over G, no stored N⁻¹Gᵀ: the working set of a long chain
  // then fits in cache, issue 3 §8): y_k = N_c⁻¹ G_kᵀ for the entries k of column block c, then
  // W(i, j) += G_ka y_kb for the pairs of those entries, in the order of pair_pos_.
  double* w = store_.data();
  std::fill(store_.begin(), store_.end(), 0.0);
  const auto ub = static_cast<std::size_t>(b);
  const int num_blocks = static_cast<int>(col_start_.size()) - 1;
  std::size_t pair = 0;
  if (Gx != nullptr) Gx->setZero(G.rows());
  for (int c = 0; c < num_blocks; ++c) {
    const int begin = col_start_[static_cast<std::size_t>(c)];
    const int end = col_start_[static_cast<std::size_t>(c) + 1];
    for (int p = begin; p < end; ++p) {
      const auto k = static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]);
      const double* g = G.values.data() + k * ub;
      double* y = y_block_.data() + static_cast<std::size_t>(p - begin) * ub;
      if (Gx != nullptr) {
        (*Gx)(entry_row_[k]) += Dot(g, x->data() + static_cast<std::ptrdiff_t>(c) * b, b);
      }
      if (identity_) {
        std::copy(g, g + b, y);
      } else if (diagonal_) {
        const double* d = ninv_diagonal_.data() + static_cast<std::ptrdiff_t>(c) * b;
        for (int j = 0; j < b; ++j) y[j] = d[j] * g[j];
      } else {
        BlockTimes(ninv_, b, c, g, y);
      }
    }
    for (int p = begin; p < end; ++p) {
      const double* ga = G.values.data() +
                         static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]) * ub;
      for (int r = p; r < end; ++r) {
        const double* yb = y_block_.data() + static_cast<std::size_t>(r - begin) * ub;
        const double sum = Dot(ga, yb, b);
        w[pair_pos_[pair++]] += sum;
      }
    }
  }
  // Vectorized reductions (a scalar std::max chain is latency-bound).
  g_max_abs_ = G.values.empty() ? 0.0
                                : Eigen::Map<const Eigen::VectorXd>(
                                      G.values.data(), static_cast<Eigen::Index>(G.values.size()))
                                      .cwiseAbs()
                                      .maxCoeff();
  w_max_abs_ = store_.empty() ? 0.0
                              : Eigen::Map<const Eigen::VectorXd>(
                                    store_.data(), static_cast<Eigen::Index>(store_.size()))
                                    .cwiseAbs()
                                    .maxCoeff();

  // Right-looking block LDLᵀ, column of groups k after column: L_kk D_k L_kkᵀ = W_kk (dense,
  // unpivoted), B_ik = W_ik L_kk⁻ᵀ, L_ik = B_ik D_k⁻¹, then W_ij −= B_ik L_jkᵀ for the blocks
  // i ≥ j below k.
  const int ng = static_cast<int>(size_.size());
  std::size_t update = 0;
  for (int k = 0; k < ng; ++k) {
    const int nk = size_[static_cast<std::size_t>(k)];
    double* Lkk = w + diag_[static_cast<std::size_t>(k)];  // column-major nk × nk
    double* dk = d_.data() + offset_[static_cast<std::size_t>(k)];
    if (nk == 3) {
      DiagonalLdlt<3>(Lkk, dk, nk);
    } else {
      DiagonalLdlt<0>(Lkk, dk, nk);
    }
    const int e_begin = below_start_[static_cast<std::size_t>(k)];
    const int e_end = below_start_[static_cast<std::size_t>(k) + 1];
    double* Bk = work_.data();
    std::size_t b_off = 0;
    for (int e = e_begin; e < e_end; ++e) {
      const int ni = size_[static_cast<std::size_t>(below_group_[static_cast<std::size_t>(e)])];
      double* Lik = w + below_pos_[static_cast<std::size_t>(e)];  // ni × nk
      if (ni == 3 && nk == 3) {
        OffDiagonalBlock<3, 3>(Lik, Bk + b_off, Lkk, dk, ni, nk);
      } else {
        OffDiagonalBlock<0, 0>(Lik, Bk + b_off, Lkk, dk, ni, nk);
      }
      b_off += static_cast<std::size_t>(ni) * static_cast<std::size_t>(nk);
    }
    std::size_t bi_off = 0;
    for (int e = e_begin; e < e_end; ++e) {
      const int ni = size_[static_cast<std::size_t>(below_group_[static_cast<std::size_t>(e)])];
      const double* Bik = Bk + bi_off;
      for (int f = e_begin; f <= e; ++f) {
        const int nj = size_[static_cast<std::size_t>(below_group_[static_cast<std::size_t>(f)])];
        const double* Ljk = w + below_pos_[static_cast<std::size_t>(f)];  // nj × nk
        double* target = w + update_pos_[update++];                       // ni × nj
        if (ni == 3 && nj == 3 && nk == 3) {
          SchurUpdate<3>(target, Bik, Ljk, ni, nj, nk, e == f);
        } else {
          SchurUpdate<0>(target, Bik, Ljk, ni, nj, nk, e == f);
        }
      }
      bi_off += static_cast<std::size_t>(ni) * static_cast<std::size_t>(nk);
    }
  }
  if (d_.size() == 0) return true;
  if (!d_.allFinite()) return false;
  const double d_max = d_.maxCoeff();
  return d_max > 0.0 && d_.minCoeff() > rank_tolerance * d_max;
}

void SparseDelassus::Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x) {
  const auto m = static_cast<Eigen::Index>(perm_.size());
  for (Eigen::Index i = 0; i < m; ++i) x_perm_(perm_[static_cast<std::size_t>(i)]) = b(i);
  const double* w = store_.data();
  double* xp = x_perm_.data();
  const int ng = static_cast<int>(size_.size());
  // L y = P b.
  for (int k = 0; k < ng; ++k) {
    const int nk = size_[static_cast<std::size_t>(k)];
    const double* Lkk = w + diag_[static_cast<std::size_t>(k)];
    double* xk = xp + offset_[static_cast<std::size_t>(k)];
    for (int c = 0; c < nk; ++c) {
      for (int r = c + 1; r < nk; ++r) xk[r] -= Lkk[r + c * nk] * xk[c];
    }
    for (int e = below_start_[static_cast<std::size_t>(k)];
         e < below_start_[static_cast<std::size_t>(k) + 1]; ++e) {
      const int i = below_group_[static_cast<std::size_t>(e)];
      const int ni = size_[static_cast<std::size_t>(i)];
      const double* Lik = w + below_pos_[static_cast<std::size_t>(e)];
      double* xi = xp + offset_[static_cast<std::size_t>(i)];
      for (int c = 0; c < nk; ++c) {
        for (int r = 0; r < ni; ++r) xi[r] -= Lik[r + c * ni] * xk[c];
      }
    }
  }
  x_perm_.array() /= d_.array();
  // Lᵀ x = y.
  for (int k = ng - 1; k >= 0; --k) {
    const int nk = size_[static_cast<std::size_t>(k)];
    const double* Lkk = w + diag_[static_cast<std::size_t>(k)];
    double* xk = xp + offset_[static_cast<std::size_t>(k)];
    for (int e = below_start_[static_cast<std::size_t>(k)];
         e < below_start_[static_cast<std::size_t>(k) + 1]; ++e) {
      const int i = below_group_[static_cast<std::size_t>(e)];
      const int ni = size_[static_cast<std::size_t>(i)];
      const double* Lik = w + below_pos_[static_cast<std::size_t>(e)];
      const double* xi = xp + offset_[static_cast<std::size_t>(i)];
      for (int c = 0; c < nk; ++c) {
        double v = 0.0;
        for (int r = 0; r < ni; ++r) v += Lik[r + c * ni] * xi[r];
        xk[c] -= v;
      }
    }
    for (int c = nk - 1; c >= 0; --c) {
      for (int r = c + 1; r < nk; ++r) xk[c] -= Lkk[r + c * nk] * xk[r];
    }
  }
  x->resize(m);
  for (Eigen::Index i = 0; i < m; ++i) (*x)(i) = x_perm_(perm_[static_cast<std::size_t>(i)]);
}

void SparseDelassus::ApplyNinv(const Eigen::VectorXd& f, Eigen::VectorXd* x) const {
  x->resize(f.size());
  if (identity_) {
    *x = f;
    return;
  }
  if (diagonal_) {
    x->array() = ninv_diagonal_.array() * f.array();
    return;
  }
  const int b = block_size_;
  for (Eigen::Index c = 0; c * b < f.size(); ++c) {
    BlockTimes(ninv_, b, c, f.data() + c * b, x->data() + c * b);
  }
}

void SparseDelassus::AddNinvGt(const Eigen::VectorXd& lambda, Eigen::VectorXd* x) const {
  AddNinvGtImpl(lambda, x, nullptr);
}

void SparseDelassus::AddNinvGt(const Eigen::VectorXd& lambda, Eigen::VectorXd* x,
                               Eigen::VectorXd* Gx) const {
  AddNinvGtImpl(lambda, x, Gx);
}

void SparseDelassus::AddNinvGtImpl(const Eigen::VectorXd& lambda, Eigen::VectorXd* x,
                                   Eigen::VectorXd* Gx) const {
  const BlockSparseRows& G = *G_;
  if (Gx != nullptr) Gx->setZero(G.rows());
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
    } else if (diagonal_) {
      const double* d = ninv_diagonal_.data() + static_cast<std::ptrdiff_t>(c) * b;
      for (int j = 0; j < b; ++j) out[j] += d[j] * z[j];
    } else {
      BlockTimes(ninv_, b, c, z, ninv_z);
      for (int j = 0; j < b; ++j) out[j] += ninv_z[j];
    }
    if (Gx != nullptr) {  // x_c is final: its share of every row through block c
      for (int p = begin; p < end; ++p) {
        const auto k = static_cast<std::size_t>(col_entries_[static_cast<std::size_t>(p)]);
        (*Gx)(entry_row_[k]) += Dot(G.values.data() + k * ub, out, b);
      }
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

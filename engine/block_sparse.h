// Block-sparse linear algebra of large mechanisms (issue 3 §8): the index-1 KKT system
// (Haddouni et al. 2017, eq. 8-9) and the projections (eq. 35-36) reduce to the Delassus matrix
//
//   W = G N⁻¹ Gᵀ     (N = M or I, m × m),
//
// which for a mechanism in absolute coordinates is sparse: N is block diagonal (one b × b block per
// body: b = 6 spatial, 3 planar) and each joint row of G touches at most two bodies, so W(i, j) ≠ 0
// only when rows i and j share a body. For a chain of n bodies W has O(n) entries and a sparse
// LDLᵀ factorization with a fill-reducing ordering costs O(n), against O(n³) for the dense path.
//
//   MassBlocks        the diagonal blocks of M,
//   BlockSparseRows   G stored by rows, each row a list of (column block, b values),
//   SparseDelassus    N⁻¹ by blocks, W = Σ_bodies G_c N_c⁻¹ G_cᵀ assembled into a fixed pattern,
//                     its LDLᵀ factorization by dense blocks (the rows of one joint form a
//                     supernode; groups ordered once by the approximate minimum degree ordering,
//                     Amestoy, Davis & Duff 1996, on the group graph; symbolic analysis once per
//                     structure of G, numeric factorization in place, e.g. Davis, Direct Methods
//                     for Sparse Linear Systems, SIAM 2006, ch. 4 and 9), and the products
//                     N⁻¹ f, N⁻¹ Gᵀ λ, G x in O(nv + nnz).
//
// The LDLᵀ factorization does not pivot, so it is used only when W is positive definite (G of
// full row rank, M positive definite). A pivot d_k ≤ tolerance · max_k d_k reports W as
// numerically singular (redundant rows, e.g. Bricard's mechanism), and callers fall back to the
// dense minimum-norm path (engine::MinNormSolver). After the first call with a given block
// structure of G, nothing here allocates (the pattern and the symbolic factorization are reused
// while G's blocks are the same).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <span>
#include <vector>

namespace saltus::engine {

class MechanicalSystem;

// Which factorization of W the solvers use. kAuto: the sparse one when the system provides its
// block structure and nv ≥ kSparseMinimumNv, else dense.
enum class LinearAlgebra { kAuto, kDense, kSparse };

// Smallest nv for which kAuto takes the sparse path. bench/n_chain_scaling.cc measures the sparse
// solve already faster at N = 4 spatial bodies (2.2 against 5.4 µs CPU per KKT solve; 4.4 against
// 20 µs at N = 8); below nv = 48 the dense rank-revealing path costs a few µs and is kept, so
// that small systems get the minimum-norm multipliers without a singularity test.
inline constexpr int kSparseMinimumNv = 48;

// M = diag(M_0, …, M_{k−1}), every block b × b (nv = k b).
struct MassBlocks {
  int block_size = 0;
  Eigen::MatrixXd blocks;  // b × nv: block c in columns [b c, b c + b)
};

// An m × cols matrix sparse by column blocks of width b: row i holds the blocks
// block_col[k], k ∈ [row_start[i], row_start[i + 1]), with values values[b k, b k + b).
struct BlockSparseRows {
  int block_size = 0;
  int cols = 0;
  std::vector<int> row_start{0};
  std::vector<int> block_col;
  std::vector<double> values;

  int rows() const { return static_cast<int>(row_start.size()) - 1; }
  // Empties the matrix (keeps the capacity).
  void Clear(int block_size_in, int cols_in);
  // Appends a block to the current row and returns its b values, set to zero.
  double* AddBlock(int col_block);
  // Closes the current row.
  void EndRow() { row_start.push_back(static_cast<int>(block_col.size())); }
  // Appends a dense row (cols entries), keeping the blocks that have a non-zero entry.
  void AppendDenseRow(const Eigen::Ref<const Eigen::RowVectorXd>& row);
  // y = A x (y resized to rows()).
  void Multiply(const Eigen::VectorXd& x, Eigen::VectorXd* y) const;
  // Largest |entry| (0 when empty).
  double MaxAbs() const;
  Eigen::MatrixXd ToDense() const;
  // True when both have the same blocks in the same places.
  bool SameStructure(const BlockSparseRows& other) const {
    return block_size == other.block_size && cols == other.cols && row_start == other.row_start &&
           block_col == other.block_col;
  }
};

class SparseDelassus {
 public:
  // N = M: inverts each block (Cholesky). False when a block is not positive definite.
  bool SetMetric(const MassBlocks& N);
  // N = I with blocks of size b (nv = cols).
  void SetIdentityMetric(int block_size, int nv);

  // Forms W = G N⁻¹ Gᵀ and factorizes it. False when W is numerically singular or indefinite
  // (a pivot ≤ rank_tolerance · largest pivot); then Solve must not be called.
  bool Factor(const BlockSparseRows& G, double rank_tolerance);
  // The same, and Gx = G x (m) in the same pass over G (x of size nv; Gx must not alias x).
  bool Factor(const BlockSparseRows& G, double rank_tolerance, const Eigen::VectorXd& x,
              Eigen::VectorXd* Gx);
  // x = W⁻¹ b (x must not alias b).
  void Solve(const Eigen::VectorXd& b, Eigen::VectorXd* x);
  // x = N⁻¹ f.
  void ApplyNinv(const Eigen::VectorXd& f, Eigen::VectorXd* x) const;
  // x = y + N⁻¹ Gᵀ λ for the G of the last Factor (x may alias y).
  void AddNinvGt(const Eigen::VectorXd& lambda, Eigen::VectorXd* x) const;
  // The same, and Gx = G x for the updated x in the same pass over G (Gx must not alias x).
  void AddNinvGt(const Eigen::VectorXd& lambda, Eigen::VectorXd* x, Eigen::VectorXd* Gx) const;
  // Largest |W(i, j)| and largest |G(i, j)| of the last Factor (the latter equals G.MaxAbs()
  // without another pass over G).
  double WMaxAbs() const { return w_max_abs_; }
  double GMaxAbs() const { return g_max_abs_; }
  // Symbolic analyses done so far (one per new block structure of G): for tests.
  int analyses() const { return analyses_; }

 private:
  void AnalyzePattern(const BlockSparseRows& G);
  bool FactorImpl(const BlockSparseRows& G, double rank_tolerance, const Eigen::VectorXd* x,
                  Eigen::VectorXd* Gx);
  void AddNinvGtImpl(const Eigen::VectorXd& lambda, Eigen::VectorXd* x, Eigen::VectorXd* Gx) const;

  int block_size_ = 0;
  bool identity_ = true;
  bool diagonal_ = false;          // every block of N⁻¹ diagonal: ninv_diagonal_ is used
  Eigen::MatrixXd ninv_;           // b × nv, the blocks of N⁻¹
  Eigen::VectorXd ninv_diagonal_;  // nv, their diagonals (when diagonal_)
  Eigen::LLT<Eigen::MatrixXd> block_llt_;
  Eigen::MatrixXd block_;

  BlockSparseRows structure_;  // structure of the G the pattern was built for (values unused)
  const BlockSparseRows* G_ = nullptr;
  // G's block entries by column block: those of block c are col_entries_[col_start_[c] …
  // col_start_[c + 1]); entry k lies in row entry_row_[k].
  std::vector<int> col_start_, col_entries_, entry_row_;
  std::vector<double> y_block_;    // N_c⁻¹ G_kᵀ for the entries of one column block (Factor)
  mutable std::vector<double> z_;  // 2 b: Gᵀλ and N⁻¹Gᵀλ on one column block (AddNinvGt)
  std::vector<int> perm_;          // row i of W is row perm_[i] of the permuted matrix
  // Block LDLᵀ of P W Pᵀ by supernodes: consecutive rows of G with the same column blocks (the
  // rows of one joint) form a group whose rows have the same pattern in W; the groups are ordered
  // by AMD on the group graph and W is factorized as dense blocks. Group k (in elimination order)
  // has size_[k] rows from position offset_[k]; its diagonal block (unit L_kk below the diagonal,
  // d on it) is at store_[diag_[k] …], and its off-diagonal blocks L_ik (i > k, column-major
  // size_[i] × size_[k]) for i = below_group_[e] at store_[below_pos_[e] …], e ∈
  // [below_start_[k], below_start_[k + 1]). W is assembled into the same storage (lower
  // triangle): G_p N⁻¹ G_rᵀ of the pair-th pair goes to store_[pair_pos_[pair]]. The update of
  // the pairs of blocks of column k goes to store_[update_pos_[u] …] in loop order.
  std::vector<int> size_, offset_, diag_, below_start_, below_group_, below_pos_, update_pos_;
  std::vector<int> pair_pos_;
  std::vector<double> store_;
  std::vector<double> work_;  // B_ik = L_ik D_k for the blocks of one column
  Eigen::VectorXd d_;         // pivots (permuted order)
  Eigen::VectorXd x_perm_;
  double w_max_abs_ = 0.0;
  double g_max_abs_ = 0.0;
  int analyses_ = 0;
};

// ġ = G v + ∂g/∂t on `rows`, in O(nv + nnz) when the system provides its block-sparse G (else
// through the dense G). Uses a thread-local workspace: no allocation after the first call with
// the same sizes.
void ConstraintRate(const MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                    const Eigen::VectorXd& v, std::span<const int> rows, Eigen::VectorXd* g_dot);

}  // namespace saltus::engine

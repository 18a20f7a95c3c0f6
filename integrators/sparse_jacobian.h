// Finite-difference Jacobians of residual functions F: Rⁿ → Rᵐ, dense and sparse (grouped
// columns), for the corrector iterations of the implicit integrators (Arnold, Fuchs & Führer,
// "Efficient corrector iteration for DAE time integration in multibody dynamics", Sec. 2.2 and
// 3.1; equation numbers below are that paper's).
//
// Dense (eq. 16–17): n + 1 evaluations, column r is (F(y + δ_r e_r) − F(y)) / δ_r with
//   δ_r = max(|y_r|, ε^(1/4)) · √ε,   ε the machine epsilon.
//
// Sparse (eq. 19–20, Curtis–Powell–Reid / TOMS 618): columns are split into groups such that no
// two columns of a group have a non-zero in the same row (structurally orthogonal columns); all
// columns of group k are perturbed at once, F^[k] = F(y + Σ_{γ(r)=k} δ_r e_r), and
//   J_ir = (F_i^[γ(r)] − F_i(y)) / δ_r  for (i, r) in the pattern, 0 elsewhere,
// so a Jacobian costs n_k + 1 evaluations, n_k = number of groups. The grouping is a colouring
// of the column-intersection graph (vertices = columns, an edge between two columns that share a
// row), computed by Boost.Graph's greedy sequential colouring in largest-degree-first order (the
// "largest-first ordering" of Curtis, Powell & Reid and TOMS 618). With the exact sparsity pattern
// the result equals the dense difference quotient (mathematically; here up to round-off of the
// function's own evaluation order).
//
// Pattern estimation (Sec. 3.1): the pattern Ω is initialized from one dense difference
// approximation (entries with |J_ir| > threshold) and refreshed — union with the entries of a
// new dense approximation — whenever the corrector iteration signals that the sparse Jacobian is
// no longer good enough (UpdatePattern reports whether anything was added, and the colouring is
// then recomputed).
//
// References: M. Arnold, A. Fuchs, C. Führer, Efficient corrector iteration for DAE time
// integration in multibody dynamics, Comput. Methods Appl. Mech. Engrg. 195 (2006);
// A. R. Curtis, M. J. D. Powell, J. K. Reid, On the estimation of sparse Jacobian matrices,
// J. Inst. Math. Appl. 13 (1974); T. F. Coleman, B. S. Garbow, J. J. Moré, Algorithm 618,
// ACM TOMS 10 (1984).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <functional>
#include <vector>

namespace saltus::integrators {

// F(y, out): fills out (m) for y (n). Must not resize y.
using ResidualFunction = std::function<void(const Eigen::VectorXd& y, Eigen::VectorXd* out)>;

// Row indices of the non-zeros of each column (ascending), m rows × n columns.
struct SparsityPattern {
  int rows = 0;
  int cols = 0;
  std::vector<std::vector<int>> column_rows;
  long nonzeros() const;
};

// Column groups: colour[r] ∈ [0, num_colours) for each column r.
struct ColumnColouring {
  std::vector<int> colour;
  int num_colours = 0;
};

// δ_r of eq. (17).
double DifferenceIncrement(double y_r);

// Dense difference approximation (eq. 16): J (m × n), n + 1 evaluations of F (F0 given: F(y)).
// Returns the number of evaluations made (n).
int DenseDifferenceJacobian(const ResidualFunction& F, const Eigen::VectorXd& y,
                            const Eigen::VectorXd& F0, Eigen::MatrixXd* J);

// Pattern of the entries of J with |J_ir| > threshold (threshold ≥ 0; 0 keeps every exact
// non-zero). Throws std::invalid_argument for a negative threshold.
SparsityPattern PatternOf(const Eigen::MatrixXd& J, double threshold = 0.0);

// Adds the entries of J above threshold to the pattern; returns true if any was new. Throws
// std::invalid_argument when the sizes differ.
bool UpdatePattern(const Eigen::MatrixXd& J, double threshold, SparsityPattern* pattern);

// Greedy colouring of the column-intersection graph with Boost.Graph
// (sequential_vertex_coloring, largest-first order). Every group is structurally orthogonal.
ColumnColouring ColourColumns(const SparsityPattern& pattern);

// True when no two columns with the same colour share a row.
bool IsConsistentColouring(const SparsityPattern& pattern, const ColumnColouring& colouring);

// Sparse difference approximation (eq. 20): J (m × n, dense storage, zeros off the pattern),
// num_colours evaluations of F besides F0 = F(y). Returns the number of evaluations made.
// Throws std::invalid_argument when sizes of y, F0, pattern and colouring disagree.
int SparseDifferenceJacobian(const ResidualFunction& F, const Eigen::VectorXd& y,
                             const Eigen::VectorXd& F0, const SparsityPattern& pattern,
                             const ColumnColouring& colouring, Eigen::MatrixXd* J);

}  // namespace saltus::integrators

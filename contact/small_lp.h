// Small dense pivoting methods: linear programs by the simplex method and linear complementarity
// problems by Lemke's method.
//
// Linear programs over small dense polyhedra, by the two-phase simplex method with Bland's rule:
//
//   minimize cᵀx   subject to   A x = b,  x ≥ 0        (A: m × n, b: m, c: n).
//
// Used by the exact classification of small frictional contact problems
// (contact/friction_cone.h, "Enumeration"), where each mode combination is such a polyhedron:
// phase 1 decides whether it is empty, phase 2 bounds linear functions (the accelerations) on it.
//
// Phase 1 minimizes the sum of m artificial variables (rows first negated so that b ≥ 0); the
// polyhedron is reported empty when that minimum exceeds `feasibility_tolerance` (absolute, in
// the units of b: a point violating A x = b by less is accepted). Artificial variables left in
// the basis at zero are pivoted out where a non-artificial pivot exists; the rows where none
// exists are redundant and stay inert. Bland's rule (the smallest index enters; ties of the ratio
// test leave by the smallest basic index) makes the method finite on degenerate polyhedra
// (Bland, Math. Oper. Res. 2 (1977) 103–107), which redundant contacts produce. Pivots smaller
// than 1e-11 times the largest |A_ij| (at least 1e-11) are not used; an iteration limit of
// 50 (m + n) guards against cycling through round-off and is reported as such.
//
// Dense tableau, O(m (n + m)) per pivot: meant for m, n up to a few dozen.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace saltus::contact {

enum class LpStatus { kOptimal, kInfeasible, kUnbounded, kIterationLimit };

// Lemke's method (Scheme I, covering vector d = 1) for w = M z + q, 0 ≤ w ⊥ z ≥ 0, with the
// lexicographic minimum-ratio test on the rows of (B⁻¹ q, B⁻¹), which never cycles on degenerate
// problems (Cottle, Pang & Stone, "The Linear Complementarity Problem", 1992, Alg. 4.4.5 and
// Sec. 4.9). It computes a solution whenever M is copositive and every x ≥ 0 with Mx ≥ 0,
// xᵀMx = 0 has xᵀq ≥ 0 (ibid., Thm 4.4.13), e.g. the faceted friction LCPs of
// contact/friction_cone.h; it stops on a secondary ray otherwise (`ray`), which proves
// infeasibility only for copositive-plus M. Dense tableau of n × (2n + 2), O(n²) per pivot;
// pivots below 1e-11 times the largest |M_ij| (at least 1e-11) are not used. `z` is returned
// clipped to ≥ 0; the caller checks the residual.
struct LemkeResult {
  bool ok = false;   // terminated with z₀ = 0 (a complementary basis)
  bool ray = false;  // stopped on a secondary ray
  Eigen::VectorXd z;
  int pivots = 0;
};
// Throws std::invalid_argument on inconsistent sizes or non-finite data.
LemkeResult SolveLcpByLemke(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, int max_pivots);

class SmallLp {
 public:
  // Runs phase 1. Throws std::invalid_argument on inconsistent sizes, non-finite data or a
  // feasibility tolerance that is not finite and > 0.
  SmallLp(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, double feasibility_tolerance);

  // kOptimal (a feasible basic point was found), kInfeasible or kIterationLimit.
  LpStatus phase1_status() const { return phase1_; }
  bool feasible() const { return phase1_ == LpStatus::kOptimal; }
  // The current basic point (n). Entries are ≥ 0; A x = b holds to the feasibility tolerance.
  Eigen::VectorXd x() const;

  // Phase 2 from the current feasible basis: minimizes cᵀx (c: n entries). kOptimal leaves x()
  // at a minimizer; kUnbounded means cᵀx has no lower bound on the polyhedron. May be called
  // repeatedly with different c. Throws std::logic_error when the polyhedron is not feasible.
  LpStatus Minimize(const Eigen::VectorXd& c);

 private:
  LpStatus Iterate(int allowed_columns);
  void Pivot(int row, int col);
  void SetObjective(const Eigen::VectorXd& cost);  // cost over all n + m columns

  int m_ = 0, n_ = 0;
  Eigen::MatrixXd T_;       // (m + 1) × (n + m + 1): rows, reduced costs; last column the values
  std::vector<int> basis_;  // column basic in each row
  double pivot_tolerance_ = 0, cost_tolerance_ = 0;
  LpStatus phase1_ = LpStatus::kInfeasible;
};

}  // namespace saltus::contact

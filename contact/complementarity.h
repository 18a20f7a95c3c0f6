// The one wrapper around Siconos Numerics' LCP solvers.
//
//   find z (n):   w = W z + b,   0 ≤ w ⊥ z ≥ 0.
//
// This is the LCP of the impact problem (Haddouni et al. 2017, eq. 4) and of the contact problem
// at acceleration level (eq. 12) once the bilateral rows are eliminated (contact/impact_problem.h);
// there W is a (reduced) Delassus matrix, symmetric positive semidefinite.
//
// Solvers:
//   lemke  lexicographic Lemke pivoting (Siconos SICONOS_LCP_LEMKE, the default). Finite and exact
//          up to round-off on P-matrices and on copositive-plus matrices when the LCP is feasible,
//          so also on the positive semidefinite Delassus matrices of redundant contacts.
//   pgs    projected Gauss-Seidel (SICONOS_LCP_PGS). Needs a positive diagonal; converges on
//          symmetric positive definite W; on semidefinite W it may stall or need many iterations.
//   enum   enumeration of the 2^n complementary bases (SICONOS_LCP_ENUM), each solved by LU; finds
//          a basic solution whenever one exists with a nonsingular basis. Refused (failure status)
//          above kMaxEnumerativeSize unknowns.
// A failure is a status, never an exit(): only solver ids from this file's table ever reach
// Siconos, Siconos' verbose mode is forced off (nothing is printed) and calls into Siconos are
// serialized (its enumeration solver keeps global state). n = 0 and n = 1 are solved here in
// closed form. After every solve w = W z + b is recomputed here and the complementarity residual
//
//   r = ‖min(w, z)‖∞ / max(1, ‖b‖∞)   (natural-map error; min taken entrywise)
//
// is checked: the solve is reported failed when Siconos' info code is non-zero, when z or w is
// not finite, or when r exceeds the tolerance. Slightly negative entries of z (round-off of the
// pivoting) are clipped to 0 before w and r are computed.
//
// Known upstream defect: Siconos 4.4's lcp_enum leaks 32 bytes per call (its enumeration state is
// never freed); lemke and pgs do not leak.
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <string_view>

namespace saltus::contact {

enum class LcpSolver { kLemke, kPgs, kEnumerative };
std::string_view ToString(LcpSolver s);                       // "lemke", "pgs", "enum"
std::optional<LcpSolver> ParseLcpSolver(std::string_view s);  // accepts the same names

// Largest n accepted by the enumerative solver (2^n bases, each an n × n LU).
constexpr int kMaxEnumerativeSize = 16;

struct LcpOptions {
  LcpSolver solver = LcpSolver::kLemke;
  double tolerance = 1e-10;    // on the natural-map residual above, > 0
  int max_iterations = 10000;  // pivots (lemke) or sweeps (pgs), > 0; unused by enum
  // When the chosen solver fails, try enumeration (n ≤ kMaxEnumerativeSize) and then PGS; the
  // result's message then says which one solved it.
  bool fallback = true;
};

struct LcpResult {
  bool ok = false;
  Eigen::VectorXd z, w;  // n; w = W z + b recomputed here
  double residual = 0;   // natural-map residual r above
  int iterations = 0;    // pivots (lemke), sweeps (pgs), bases tried (enum)
  std::string message;   // why it failed (solver info code, residual too large, ...)
};

// W (n × n), b (n). n = 0 is a valid, trivially solved problem. Throws std::invalid_argument
// on inconsistent sizes, non-finite entries, tolerance ≤ 0, max_iterations ≤ 0 or an invalid
// solver value. Thread-safe (Siconos calls are serialized).
LcpResult SolveLcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, const LcpOptions& options);

}  // namespace saltus::contact

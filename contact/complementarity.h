// The one wrapper around Siconos Numerics' LCP solvers.
//
//   find z (n):   w = W z + b,   0 ≤ w ⊥ z ≥ 0.
//
// Solvers: Lemke (default; pivoting, exact on P- and copositive-plus matrices, so also on the
// positive semidefinite Delassus matrices of redundant contacts), projected Gauss-Seidel, and
// enumeration. A failure is a status, never an exit(): Siconos' own error paths are guarded
// (unknown ids cannot reach it). After every solve the complementarity residual
//
//   r = ‖min(w, z)‖∞ / max(1, ‖b‖∞)   (natural-map error)
//
// is recomputed here and the solve is reported failed when r exceeds the tolerance.
#pragma once

#include <Eigen/Dense>
#include <optional>
#include <string>
#include <string_view>

namespace saltus::contact {

enum class LcpSolver { kLemke, kPgs, kEnumerative };
std::string_view ToString(LcpSolver s);                       // "lemke", "pgs", "enum"
std::optional<LcpSolver> ParseLcpSolver(std::string_view s);  // accepts the same names

struct LcpOptions {
  LcpSolver solver = LcpSolver::kLemke;
  double tolerance = 1e-10;   // on the natural-map residual above
  int max_iterations = 10000;
};

struct LcpResult {
  bool ok = false;
  Eigen::VectorXd z, w;
  double residual = 0;
  int iterations = 0;
  std::string message;  // why it failed (solver info code, residual too large, ...)
};

// W (n × n), b (n). n = 0 is a valid, trivially solved problem. Throws std::invalid_argument
// on inconsistent sizes or non-finite entries.
LcpResult SolveLcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, const LcpOptions& options);

}  // namespace saltus::contact

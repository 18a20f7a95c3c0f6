// The dense Delassus problem with the bilateral rows eliminated, shared by the frictionless
// impact and contact problems (contact/impact_problem.h) and the frictional ones
// (contact/friction_problem.h), and the input checks these problems share.
//
// With M = L Lᵀ (Cholesky, never inverted) and A = L⁻¹ Gᵀ (nv × m), an unknown x (v⁺ or v̇) is
// written in the scaled variable y = Lᵀ x:
//
//   y = y0 + A_B z_B + A_U z_U,   A_Bᵀ y + c_B = 0,   w_U = A_Uᵀ y + d_U,
//
// B the bilateral rows (equalities, multipliers z_B free), U the other rows (contact rows whose
// multipliers z_U obey a contact law). A complete orthogonal decomposition of A_B (column-pivoting
// QR, relative rank threshold kBilateralRankTolerance) gives an orthonormal basis Q₁ of
// range(A_B); with s solving (A_Bᵀ Q₁) s = −c_B (least squares if redundant rows are
// inconsistent) and C = (I − Q₁ Q₁ᵀ) A_U,
//
//   y = y_free + C z_U,   y_free = (I − Q₁ Q₁ᵀ) y0 + Q₁ s,
//   w_U = W z_U + b,      W = Cᵀ C = W_UU − W_UB W_BB⁺ W_BU,   b = A_Uᵀ y_free + d_U,
//
// without squaring the condition number of A_B. W is symmetric positive semidefinite, and
// ‖C Δz‖ = ‖Lᵀ Δx‖ = (Δxᵀ M Δx)^½: two multipliers z, z' give the same x iff W (z − z') = 0.
// z_B is recovered as the minimum-norm solution of A_B z_B = y − y0 − A_U z_U.
#pragma once

#include <Eigen/Dense>
#include <span>
#include <string>

#include "engine/mechanical_system.h"

namespace saltus::contact {

// A pivot of the factorization of L⁻¹ G_Bᵀ counts as non-zero when larger than this times the
// largest pivot.
constexpr double kBilateralRankTolerance = 1e-10;

// "row 7 ('box.c1')": a global row with its name, for messages.
std::string RowLabel(const engine::MechanicalSystem& system, int row);

// Throws std::invalid_argument (message starting with `who`) on a non-finite t, q of a size other
// than nq, v of a size other than nv, or a non-finite entry of q or v (`v_name` names v).
void ValidateState(const char* who, const engine::MechanicalSystem& system, double t,
                   const Eigen::VectorXd& q, const Eigen::VectorXd& v, const char* v_name);

// Throws std::invalid_argument on a row outside the system or a row listed twice, within or
// across the two lists.
void ValidateRows(const char* who, const engine::MechanicalSystem& system,
                  std::span<const int> bilateral_rows, std::span<const int> unilateral_rows);

// X ← L⁻¹ X in place, L the lower triangle of `lower` (n × n, X n × k): Eigen's
// TriangularView<Lower>::solveInPlace, whose matrix kernel (triangular_solve_matrix) computes, for
// a triangle no wider than its small panel (max(mr, nr) ≥ 4 rows for double), every column as
// x_i ← x_i · (1/L_ii), then x_k ← x_k − x_i L_ki for k > i, i ascending. For n ≤
// kSmallTriangle those operations in that order (the same numbers, bit for bit) without the
// kernel's blocking and packing set-up, which costs more than the solve for the three coordinates
// of a planar body; Eigen's solve otherwise.
inline constexpr Eigen::Index kSmallTriangle = 4;
void SolveLowerInPlace(const Eigen::MatrixXd& lower, Eigen::MatrixXd* X);

// M factorized and the scaled Jacobians of two row lists at (t, q).
struct DenseAssembly {
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::MatrixXd G_b, G_u;  // rows × nv
  Eigen::MatrixXd A_b, A_u;  // L⁻¹ Gᵀ, nv × rows
  std::string error;         // non-empty: the system data cannot be used (then nothing else is)
  // llt holds the factor of a constant mass matrix (MechanicalSystem::HasConstantMassMatrix)
  // from an earlier assembly on the same system: AssembleDenseInto with keep_mass reuses it.
  bool mass_kept = false;
  Eigen::MatrixXd M;  // workspace
};

DenseAssembly AssembleDense(const engine::MechanicalSystem& system, double t,
                            const Eigen::VectorXd& q, std::span<const int> bilateral_rows,
                            std::span<const int> unilateral_rows);
// The same into *a, reusing its storage. With keep_mass and a system whose mass matrix is
// constant, M is factorized once: the factor of an earlier call (a->mass_kept) is reused and M is
// neither evaluated nor factorized again. The caller guarantees that *a was last assembled for
// the same system (contact::ImpactWorkspace).
void AssembleDenseInto(const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
                       std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
                       bool keep_mass, DenseAssembly* a);

// The elimination above for given A_B (nv × n_B), A_U (nv × n_U), y0 (nv) and c_B (n_B). Keeps
// pointers to A_B and A_U: they must outlive the object.
class BilateralElimination {
 public:
  BilateralElimination(const Eigen::MatrixXd& A_b, const Eigen::MatrixXd& A_u,
                       const Eigen::VectorXd& y0, const Eigen::VectorXd& c_b);
  BilateralElimination(const BilateralElimination&) = delete;
  BilateralElimination& operator=(const BilateralElimination&) = delete;

  int rank() const { return rank_; }               // rank of A_B
  const Eigen::MatrixXd& W() const { return W_; }  // n_U × n_U
  const Eigen::MatrixXd& C() const { return C_; }  // nv × n_U
  const Eigen::VectorXd& y_free() const { return y_free_; }
  // b = A_Uᵀ y_free + d_U (n_U).
  Eigen::VectorXd Rhs(const Eigen::VectorXd& d_u) const;
  // y = y_free + C z_U, the minimum-norm z_B and ‖A_Bᵀ y + c_B‖∞ (0 without bilateral rows).
  void Recover(const Eigen::VectorXd& z_u, Eigen::VectorXd* y, Eigen::VectorXd* z_b,
               double* bilateral_residual) const;

 private:
  const Eigen::MatrixXd* A_b_;
  const Eigen::MatrixXd* A_u_;
  Eigen::VectorXd y0_, c_b_;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod_;
  int rank_ = 0;
  Eigen::MatrixXd C_, W_;
  Eigen::VectorXd y_free_;
};

}  // namespace saltus::contact

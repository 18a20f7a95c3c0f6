// Block-sparse assembly of the velocity-level and acceleration-level contact problems of a system
// whose mass matrix is block diagonal (engine::MechanicalSystem::BlockSparseMatrices): M =
// diag(M_c) and the contact rows G by body blocks, shared by the frictionless problems
// (contact/impact_problem.h, "Sparse assembly") and the frictional time step
// (contact/sparse_friction_step.h). Internal to saltus::contact (not installed as an API).
//
// With M block diagonal, W = G M⁻¹ Gᵀ = Σ_c G_c M_c⁻¹ G_cᵀ has W_ij ≠ 0 only when rows i and j
// share a body, so the rows split into independent components: the connected components of the
// graph whose vertices are the bodies and whose edges are the rows (the ground is no vertex). W is
// never formed m × m: Block and SparseBlock assemble it per component in O(Σ_c k_c² b) (k_c rows
// touching body c, b the block size), and M⁻¹ f, M⁻¹ Gᵀ z cost O(nv b + nnz(G) b).
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/mechanical_system.h"

namespace saltus::contact {

struct SparseAssembled {
  engine::MassBlocks M;
  engine::BlockSparseRows G;
  std::vector<Eigen::LLT<Eigen::MatrixXd>> llt;  // of each M_c
  std::vector<double> Y;                         // M_c⁻¹ g_k for every block k of G
  // Blocks of G by body: (row, block index k) for every body.
  std::vector<std::vector<std::pair<int, int>>> by_body;
  // Rows grouped by the bodies they share (impact_problem.h, "Components"): label of each row,
  // number of components, component of each body (−1: no row).
  std::vector<int> component_of_row, component_of_body;
  int num_components = 0;
  std::string error;
  bool available = false;

  // W restricted to the rows `idx` (ascending) of one component: Σ over its bodies of
  // g_i · M_c⁻¹ g_j.
  void Block(const std::vector<int>& idx, Eigen::MatrixXd* W_c) const;
  // The same as a sparse matrix (large components: contact/sparse_lcp.h).
  void SparseBlock(const std::vector<int>& idx, Eigen::SparseMatrix<double>* W_c) const;
  // The bodies of a component (ascending): those touched by its rows. Per-thread storage, valid
  // until the next call.
  const std::vector<int>& Bodies(const std::vector<int>& idx) const;
};

// `all_bodies`: factor every M_c (M⁻¹ F needs them), else only those of the bodies the rows touch
// (an impact: O(rows) factorizations instead of O(bodies) in a large pile). available = false when
// the system does not provide its block structure; error non-empty on a non-finite or indefinite
// M or a non-finite G.
SparseAssembled AssembleSparse(const engine::MechanicalSystem& system, double t,
                               const Eigen::VectorXd& q, std::span<const int> rows,
                               bool all_bodies);

// x += M⁻¹ Gᵀ z (blocks Y = M_c⁻¹ g_k).
void AddMinvGtz(const SparseAssembled& a, const Eigen::VectorXd& z, Eigen::VectorXd* x);

// x = M⁻¹ f by blocks (needs every M_c factored: all_bodies).
Eigen::VectorXd MinvTimes(const SparseAssembled& a, const Eigen::VectorXd& f);

// M x by blocks (x: nv).
Eigen::VectorXd MTimes(const SparseAssembled& a, const Eigen::VectorXd& x);

// What a velocity-level time step (the frictional and rolling steps) needs before its contact
// problem: the rows' explicit time derivative ∂g/∂t, the free velocity v_free = v + M⁻¹ f, and
// the rows' velocities before the step, u⁻ = G v + ∂g/∂t, and under the smooth forces alone,
// u_free = G v_free + ∂g/∂t.
struct StepRates {
  Eigen::VectorXd gt, v_free, u_minus, u_free;
};

// Fills `out` (needs every M_c factored: all_bodies). Returns an error message (non-finite
// ∂g/∂t), or an empty string.
std::string ComputeStepRates(const engine::MechanicalSystem& system, const SparseAssembled& a,
                             double t, const Eigen::VectorXd& q, std::span<const int> rows,
                             const Eigen::VectorXd& v, const Eigen::VectorXd& f, StepRates* out);

}  // namespace saltus::contact

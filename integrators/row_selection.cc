#include "integrators/row_selection.h"

#include <algorithm>

#include "engine/block_sparse.h"

namespace saltus::integrators {

std::vector<int> IndependentRows(const engine::MechanicalSystem& system, double t,
                                 const Eigen::VectorXd& q, std::span<const int> rows,
                                 double tolerance) {
  std::vector<int> all(rows.begin(), rows.end());
  if (rows.size() < 2) return all;
  // Certificate of independence (header): a sparse LDLᵀ of G Gᵀ with every pivot clear of zero.
  thread_local engine::BlockSparseRows G_sparse;
  thread_local engine::SparseDelassus gram;
  if (system.nv() >= engine::kSparseMinimumNv &&
      system.BlockSparseMatrices(t, q, rows, nullptr, &G_sparse)) {
    gram.SetIdentityMetric(G_sparse.block_size, system.nv());
    if (gram.Factor(G_sparse, std::max(kIndependenceCertificateTolerance, tolerance * tolerance)))
      return all;
  }
  Eigen::MatrixXd G;
  system.ConstraintJacobian(t, q, rows, &G);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(G.transpose());
  qr.setThreshold(tolerance);
  const auto rank = qr.rank();
  if (rank == G.rows()) return all;
  std::vector<int> kept;
  kept.reserve(static_cast<std::size_t>(rank));
  const auto& pivots = qr.colsPermutation().indices();
  for (Eigen::Index k = 0; k < rank; ++k) kept.push_back(all[static_cast<std::size_t>(pivots(k))]);
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace saltus::integrators

// Selection of an independent subset of constraint rows (structural redundancy).
//
// A mechanism may have more constraint rows than their rank: the Bricard linkage (30 rows, rank
// 29), a planar linkage modelled with spatial revolute joints (each closed loop adds three
// redundant rows), a box resting flat on four coplanar corner contacts (4 rows, rank 3). The
// index-1 solve and the projections handle this with minimum-norm least squares (engine/
// constrained_dynamics.h, engine/projection.h); the implicit schemes (generalized-α, BDF,
// half-implicit) instead factorize the full Newton matrix [S, −Gᵀ; G, 0], which is singular
// whenever G has dependent rows. For them the active rows are reduced, at every (re)start, to a
// subset of rank(G) rows with the same span: the column-pivoted QR of Gᵀ (Golub & Van Loan,
// Matrix Computations, 4th ed., Sec. 5.4.2) orders the rows by how much each adds to the span of
// those before it, and the first r pivots (r the numerical rank) are kept. The dropped rows
// stay satisfied to first order because their gradients are combinations of the kept ones; the
// kept rows' multipliers carry the reaction (a particular, not minimum-norm, distribution of a
// statically indeterminate load; the event loop's reported multipliers are still minimum-norm).
//
// The choice is made at a configuration that satisfies the constraints (the event loop projects
// before every restart), where structural redundancy gives singular values at round-off level
// while a genuine rank drop only happens at isolated singular configurations; hence the
// relative tolerance kDefaultRedundancyTolerance on the pivots of R.
#pragma once

#include <span>
#include <vector>

#include <Eigen/Dense>

#include "engine/mechanical_system.h"

namespace saltus::integrators {

// |R_kk| ≤ tolerance · |R_11| counts as dependent (|R_11| the largest pivot).
inline constexpr double kDefaultRedundancyTolerance = 1e-9;

// Large systems (nv ≥ engine::kSparseMinimumNv with block-sparse G: long chains, piles of
// bodies in contact) first try a cheap certificate that every row is independent, which is the
// common case at a restart: the sparse LDLᵀ of the Gram matrix G Gᵀ (engine::SparseDelassus with
// N = I, fill-reducing ordering), O(nnz) for a chain against O(m² nv) for the dense QR. Its
// pivots d_k are the squared diagonal of the R of a QR of Gᵀ in the elimination order; when all
// d_k > kIndependenceCertificateTolerance · max d (|R_kk| ≥ 1e-4 of the largest, far above the
// QR's 1e-9 and far above structural redundancy, whose pivots are round-off, ~1e-16 relative)
// the rows are kept as they are (a caller's tolerance above 1e-4 raises the pivot threshold to
// tolerance²). Otherwise (a redundant or nearly redundant set) the QR decides.
inline constexpr double kIndependenceCertificateTolerance = 1e-8;

// The rows of `rows` (global constraint indices) whose gradients G_i(q) at (t, q) are linearly
// independent, in their original order; `rows` itself when they all are (also when empty).
std::vector<int> IndependentRows(const engine::MechanicalSystem& system, double t,
                                 const Eigen::VectorXd& q, std::span<const int> rows,
                                 double tolerance = kDefaultRedundancyTolerance);

}  // namespace saltus::integrators

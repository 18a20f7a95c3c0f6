// Frictional contact problems in local form, their solvers and their exact classification.
//
// A local problem is given by a Delassus matrix W (m × m, symmetric positive semidefinite, the
// rows of n_c contacts: one normal row and 0, 1 or 2 tangential rows each) and b (m):
//
//   w = W z + b,
//
// z the contact impulses (impact) or forces (acceleration level), w the post-impact velocities
// (with e u⁻ added on the normal rows) or the accelerations g̈. Per contact, with μ ≥ 0:
//   normal:          0 ≤ w_N ⊥ z_N ≥ 0;
//   stick candidate: Coulomb, ‖z_T‖ ≤ μ z_N and either w_T = 0 or z_T = −μ z_N w_T/‖w_T‖;
//                    written with De Saxcé's modified velocity û = w + μ‖w_T‖ e_N as
//                    K_μ ∋ z ⊥ û ∈ K_μ*, K_μ = {‖z_T‖ ≤ μ z_N} (Acary & Brogliato 2008,
//                    Sec. 3.9.2);
//   sliding:         (acceleration level) a contact sliding in the unit direction d of its tangent
//                    plane (plane: d = ±1) has z_T = −μ z_N d substituted, so only the normal
//                    condition remains, on the column W_·N − μ W_·T d (non-symmetric);
//   frictionless:    μ = 0 or no tangential rows: the normal condition only.
//
// Faceted LCP (BuildFacetedLcp). The disk ‖z_T‖ ≤ μ z_N is replaced by the polygon with vertices
// μ z_N D_k, D_k = (cos 2πk/N, sin 2πk/N), k < N, in the plane of two tangential rows, and by the
// interval (D = ±1, N = 2) for one tangential row, where it is exact. With z_T = Σ_k β_k D_k and
// a slack σ per frictional contact (the largest −D_kᵀ w_T; Stewart & Trinkle, IJNME 39 (1996)
// 2673–2691; Anitescu & Potra, Nonlinear Dyn. 14 (1997) 231–247):
//
//   0 ≤ w_N                 ⊥ z_N ≥ 0,
//   0 ≤ D_kᵀ w_T + σ         ⊥ β_k ≥ 0     (k < N),
//   0 ≤ μ z_N − Σ_k β_k      ⊥ σ ≥ 0,
//
// an LCP in x = (z_N, β, σ) of size n = n_c + Σ (N_i + 1): z = S x, LCP matrix P W S plus the
// ±1/μ coupling of σ, q = P b (P picks w_N and D_kᵀ w_T). Without sliding contacts the matrix is
// copositive (xᵀ M x = (Sx)ᵀ W (Sx) + Σ μ_i z_N,i σ_i); when in addition W is nonsingular, or
// b ∈ range(W) (impacts with e = 0 and scleronomic rows), every x ≥ 0 with Mx ≥ 0, xᵀMx = 0
// has xᵀq = (Sx)ᵀ b ≥ 0, and Lemke's method computes a solution (Cottle, Pang & Stone, "The
// Linear Complementarity Problem", 1992, Thm 4.4.13; this is Anitescu & Potra's argument): a ray
// termination there is a numerical failure, never a proof. With sliding contacts (Painlevé) the
// matrix is not copositive in general and Lemke proves nothing by itself.
//
// Exact cone (SolveLocal with FrictionCone::kExact and a contact with two tangential rows):
// Siconos fc3d (contact/complementarity.h: Alart–Curnier semismooth Newton, NSGS fallback) on
// 3 unknowns per contact; contacts with fewer than two frictional tangential rows get inert
// unknowns (μ = 0 or a unit diagonal with no coupling), sliding contacts carry their substituted
// column. The answer is accepted only when CoulombResidual meets the tolerance.
//
// Residual (CoulombResidual): per contact the natural map of the law above with unit parameter,
// ‖z_i − P_K(z_i − û_i)‖₂ (normal-only contacts: |min(w_N, z_N)|), the largest over the contacts,
// divided by max(1, ‖b‖∞) as for the LCPs (contact/complementarity.h). Faceted problems with two
// tangential rows are checked with the residual of their LCP instead (the polygon is the law).
//
// Enumeration (exact classification, EnumerateSolutions). Every solution of the faceted LCP lies
// in one of the per-contact complementary patterns
//   normal-only:     closed (z_N basic) | open (z_N = 0);
//   stick candidate: open (z_N = β = 0, σ free) | stick (z_N, β basic, σ = 0, which forces
//                    w_T = 0) | slip on a vertex k or on an edge (k, k+1) of the polygon (z_N, σ
//                    basic with Σβ = μ z_N, β basic on those directions only; plane: slip ±);
// and each combination of patterns is a polyhedron {x_α ≥ 0, (Mx + q)_α = 0, (Mx + q)_ᾱ ≥ 0}
// (α the basic unknowns), decided by the simplex method (contact/small_lp.h). The solution set
// is the union of these polyhedra; the problem is
//   inconsistent   when all are empty;
//   indeterminate  when the velocity (impact) or acceleration (v̇) differs between two solutions,
//                  measured by ‖R Δz‖ with W = Rᵀ R (‖R Δz‖² = Δv̇ᵀ M Δv̇, contact/delassus.h);
//                  inside one polyhedron by minimizing and maximizing every row of R S over it;
//   unique         otherwise (a continuum of z with one v̇, e.g. redundant contacts, is unique).
// Differences below 1e-6 times the solutions' scale, or within the feasibility tolerance
// (‖R Δz‖ ≤ tolerance/√λ_max(W)), are not told apart. A solution taken from
// the enumeration whose residual is above the tolerance (the LP's feasibility tolerance is ten
// times larger) is corrected once on its support (the positive unknowns' rows made exactly
// complementary, minimum-norm for redundant rows) and kept corrected when that lowers it. The cost
// is one small LP per combination (4 per planar contact, 3 + 2N per faceted one): only for small
// components (LocalOptions::max_combinations = 4096: up to 6 planar frictional contacts in one
// component; larger components are solved, not classified).
//
// Choice among solutions (impacts, LocalProblem::energy_rate given). The solution Lemke's method
// returns for an indeterminate problem depends on its pivoting order, hence on round-off (the
// woodpecker's jammed sleeve: the impulse goes to one diagonal corner or the other). When the
// enumeration is complete and finds more than one post-impact velocity, the solution taken is the
// one of least post-impact kinetic energy, T⁺ − T₀ = cᵀz + ½ zᵀWz with c = Cᵀ y_free
// (contact/delassus.h: y⁺ = y_free + C z, W = CᵀC, T = ½‖y‖²): the impact that dissipates the
// most, the maximum-dissipation selection that Coulomb's law itself expresses at one contact
// (Moreau 1988; Stewart, SIAM Rev. 42 (2000) 3–39). Energy is a continuous function of
// the data, so a perturbation of round-off size changes the choice only where two solutions'
// energies are equal to within that size: energies within kEnergyTieTolerance (relative to the
// largest |T⁺ − T₀| of the solutions compared) count as equal, and the earlier in the enumeration's
// fixed order wins (an odometer over the contacts in input order, the first turning fastest;
// patterns open, stick, then the friction impulse along D₀, D₁, …: in the plane +1, then −1). T is
// convex in z, so on a polyhedron over which the velocity varies (a continuum) the least energy is
// found by Frank–Wolfe iterations from the LP vertex (exact line search; the LP over the same
// polyhedron gives the direction), stopped when the duality gap is below kEnergyTieTolerance of the
// scale or after 200 iterations; on the others T is constant.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "contact/complementarity.h"

namespace saltus::contact {

enum class FrictionCone { kExact, kFaceted };

// Decided state of a contact after a solve: open (z_N = 0 and w_N > 0), closed (frictionless,
// w_N = 0), stick (w_T = 0) or slip (slip_direction d, z_T = −μ z_N d).
enum class ContactMode { kOpen, kClosed, kStick, kSlip };
std::string_view ToString(ContactMode mode);  // "open", "closed", "stick", "slip"

// How a problem was classified. kUnique, kIndeterminate and kInconsistent are proofs (by
// enumeration, or by the monotonicity of frictionless problems: all solutions of an LCP with a
// symmetric positive semidefinite W share W z); kSolved means a solution was found and its
// uniqueness not examined; kNoSolutionFound means the solvers failed, which proves nothing.
enum class Solvability { kUnique, kSolved, kIndeterminate, kInconsistent, kNoSolutionFound };
std::string_view ToString(Solvability s);

struct LocalContact {
  int normal = -1;                      // row of W
  std::array<int, 2> tangents{-1, -1};  // rows of W, the first num_tangents are used
  int num_tangents = 0;
  double mu = 0.0;
  bool sliding = false;                                 // z_T = −μ z_N d substituted
  Eigen::Vector2d direction = Eigen::Vector2d::Zero();  // d, unit (first num_tangents entries)
  bool frictional() const { return mu > 0.0 && num_tangents > 0; }
  bool stick_candidate() const { return frictional() && !sliding; }
};

struct LocalProblem {
  Eigen::MatrixXd W;  // m × m
  Eigen::VectorXd b;  // m
  std::vector<LocalContact> contacts;
  // Impacts: c (m) with T⁺ − T₀ = cᵀz + ½ zᵀWz, the kinetic energy after the impulses z relative
  // to that of the free velocity (see "Choice among solutions"); empty: no energy rule.
  Eigen::VectorXd energy_rate;
};

double CoulombResidual(const LocalProblem& p, const Eigen::VectorXd& z, const Eigen::VectorXd& w);

struct FacetedLcp {
  Eigen::MatrixXd M;        // n × n
  Eigen::VectorXd q;        // n
  Eigen::MatrixXd S;        // m × n: z = S x
  std::vector<int> first;   // first unknown of each contact (z_N; then β_0..β_{N−1}, σ)
  std::vector<int> facets;  // N of each contact (0: normal only)
};
// `facets` (≥ 3) is used for contacts with two tangential rows; one tangential row gives N = 2.
FacetedLcp BuildFacetedLcp(const LocalProblem& p, int facets);

// Energies of two solutions closer than this (relative to the larger |T⁺ − T₀|) are a tie.
inline constexpr double kEnergyTieTolerance = 1e-9;

struct LocalEnumeration {
  bool complete = false;  // every combination decided (none skipped, no LP iteration limit)
  int combinations = 0;   // combinations examined
  std::vector<Eigen::VectorXd> solutions;  // x, one per distinct velocity/acceleration
  bool continuum = false;          // the velocity/acceleration varies inside one combination
  Eigen::VectorXd most_impulsive;  // a solution with the largest Σ z_N (when asked for; else empty)
  // With LocalProblem::energy_rate: the solution of least kinetic energy (see "Choice among
  // solutions"), and that energy cᵀz + ½ zᵀWz; else empty.
  Eigen::VectorXd least_energy;
  double least_energy_value = 0.0;
};
// Number of pattern combinations of the problem (saturates at max_combinations + 1).
long CountCombinations(const FacetedLcp& lcp, long max_combinations);
// `tolerance`: absolute feasibility tolerance on w (see the residual); with
// `find_most_impulsive`, also maximizes Σ z_N over every nonempty combination.
LocalEnumeration EnumerateSolutions(const LocalProblem& p, const FacetedLcp& lcp, double tolerance,
                                    bool find_most_impulsive);

struct LocalOptions {
  FrictionCone cone = FrictionCone::kExact;
  int facets = 8;              // faceted cone, N ≥ 3
  double tolerance = 1e-10;    // residual (see above)
  int max_iterations = 10000;  // Lemke pivots; fc3d: Newton iterations min(this, 200)
  bool diagnose = true;        // enumerate when at most max_combinations combinations
  long max_combinations = 4096;
  // Return the enumerated solution with the largest Σ z_N (the solver's answer instead when
  // that vertex misses the tolerance and the solver's meets it).
  bool prefer_impulsive = false;
  const Eigen::VectorXd* warm_start = nullptr;  // exact cone: z of a previous solve (m)
};

struct LocalResult {
  bool ok = false;       // z, w satisfy the law to the tolerance
  Eigen::VectorXd z, w;  // m
  Eigen::VectorXd x;     // faceted-LCP unknowns when they were computed, else empty
  double residual = 0;
  Solvability status = Solvability::kNoSolutionFound;
  std::vector<ContactMode> modes;           // per contact
  std::vector<Eigen::Vector2d> directions;  // per contact: slip direction when kSlip
  int iterations = 0;
  int combinations = 0;  // enumerated pattern combinations (0: no enumeration)
  int solutions = 0;     // distinct velocities/accelerations found by the enumeration
  std::string message;
};

// Solves one local problem (an independent component): z = 0 when b_N ≥ 0 (then nothing pushes
// or approaches), else the faceted LCP by Lemke (plane, faceted cone, contacts without a 3D
// stick candidate) or the exact cone by fc3d; then, with `diagnose`, the enumeration when
// affordable. Throws std::invalid_argument on inconsistent sizes or rows.
LocalResult SolveLocal(const LocalProblem& p, const LocalOptions& options);

}  // namespace saltus::contact

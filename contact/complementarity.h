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
// The chain (LcpOptions::fallback): the chosen solver, then enumeration where affordable, then
// SolveMonotoneLcp (contact/monotone_lcp.h: interior point and active-set refinement, which
// finds a solution whenever one exists for symmetric positive semidefinite W, and otherwise
// reports the Farkas certificate of infeasibility), then PGS. The cheap solvers stay the fast
// paths; Lemke's termination guarantee does not survive round-off on degenerate piles (it
// stopped on a ray on the 122- and 134-row acceleration problems of the generated 50- and
// 60-sphere piles, which have solutions: tests/contact/lcp_bank_test.cc).
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
// Independent components (SolveLcpByComponents). When the unknowns split into groups with
// W_ij = 0 for i, j in different groups (contacts that share no body, through any chain of
// contacts), the LCP is the product of the LCPs of the groups: (z_c) solves it iff every z_c
// solves (W_cc, b_c). Each group is solved alone — exact, O(Σ m_c³) pivoting instead of O(m³)
// — and a group with b_c ≥ 0 is not solved at all: z_c = 0, w_c = b_c is a solution (the only
// one when W_cc is positive definite; on a semidefinite W_cc every solution has the same w_c).
// Every solved group meets the tolerance relative to max(1, ‖b_c‖∞) ≤ max(1, ‖b‖∞), so the
// whole solution meets the residual test above with the tolerance of one SolveLcp call.
// Large groups (m ≥ LcpOptions::sparse_minimum_size, when the caller gives W_c as a sparse
// matrix) go to the exact sparse path SolveLcpSparse (contact/sparse_lcp.h: PGS guess, proximal
// block-principal-pivoting active-set solve, the same residual test, dense fallback) instead of
// dense Lemke, whose O(m³) pivoting makes a pile's component of thousands of rows impossible.
//
// Known upstream defect: Siconos 4.4's lcp_enum leaks 32 bytes per call (its enumeration state is
// never freed); lemke and pgs do not leak.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace saltus::contact {

enum class LcpSolver { kLemke, kPgs, kEnumerative };
std::string_view ToString(LcpSolver s);                       // "lemke", "pgs", "enum"
std::optional<LcpSolver> ParseLcpSolver(std::string_view s);  // accepts the same names

// Largest n accepted by the enumerative solver (2^n bases, each an n × n LU).
constexpr int kMaxEnumerativeSize = 16;

// Smallest group solved by the sparse path in SolveLcpByComponents (LcpOptions default).
// Measured (bench/lcp_scaling.cc, pile-like lattice problems, Release, the 2-core development
// machine under load, 2026-11; wall time per solve, Lemke / sparse): 10 rows 0.002 / 0.003 ms,
// 21 rows 0.009 / 0.007 ms, 50 rows 0.12 / 0.020 ms, 160 rows 3.8 / 0.11 ms, 930 rows 1.6 s /
// 2.5 ms. Below the crossover (~20 rows) Lemke is kept.
constexpr int kSparseLcpMinimumSize = 24;

struct LcpWarmStart;

struct LcpOptions {
  LcpSolver solver = LcpSolver::kLemke;
  double tolerance = 1e-10;    // on the natural-map residual above, > 0
  int max_iterations = 10000;  // pivots (lemke) or sweeps (pgs), > 0; unused by enum
  // When the chosen solver fails, try enumeration (n ≤ kMaxEnumerativeSize), then the solver
  // with a guarantee for symmetric positive semidefinite W (contact/monotone_lcp.h, when
  // `monotone_stage`), then PGS; the result's message then says which one solved it.
  bool fallback = true;
  // The last stage of the chain (with `fallback`): SolveMonotoneLcp, which finds a solution
  // whenever one exists for symmetric positive semidefinite W. Off only to measure the cheaper
  // stages alone (tests, benchmarks).
  bool monotone_stage = true;
  // SolveLcpByComponents: a group of at least this many unknowns goes to the sparse path
  // (contact/sparse_lcp.h) instead of the dense solver, when a sparse block is available (the
  // dense-W overload always has one). Default: measured crossover, see kSparseLcpMinimumSize.
  int sparse_minimum_size = kSparseLcpMinimumSize;
  // SolveLcpByComponents: solutions of earlier sparse groups, keyed by the caller's identity of
  // each unknown, to warm-start the sparse path (see LcpWarmStart). nullptr: cold starts. The
  // object is written by the solve: options holding it must not be shared between threads.
  LcpWarmStart* warm_start = nullptr;
};

// Warm start of the sparse path across calls (SolveLcpByComponents). An event-driven run solves
// the acceleration-level LCP (Haddouni et al. 2017, eq. 12) of a settled pile again after almost
// every event, on nearly the same closed rows with nearly the same forces. Before a call the
// caller sets `ids` (one per unknown: e.g. its global constraint row); every group solved by the
// sparse path starts PGS (contact/sparse_lcp.h, step 1) from the z of the latest sparse solve of
// each id (0 for an id not seen, or not seen in the last `max_age` calls), and records its
// solution. The answer passes the same residual test as a cold start: only the iterations
// change, and on a semidefinite W (redundant contacts) which z of the solution set is returned
// (w, hence v̇ or v⁺, is the same up to the tolerance). Ids must be ≥ 0.
// Measured: pile-like problems with b moved by 1e-3 of ‖b‖∞ (bench/lcp_scaling.cc,
// BM_SparseNearby) need 1–5 factorizations instead of 4–14, CPU per solve 160 rows 0.11 → 0.035
// ms, 930 rows 1.8 → 0.44 ms, 1,426 rows 5.9 → 3.4 ms. Not used by events::Simulation: wired into
// its acceleration problems, the N = 100 sphere pile to 0.7 s showed no measurable gain (LCP
// 21.6 % → 22.9 % of the wall time; mostly impact cascades and small components) while the
// closed set first differed at t = 0.6629 s (a row whose force the semidefinite W leaves open).
struct LcpWarmStart {
  std::vector<int> ids;  // set by the caller before each call: id of unknown i
  int max_age = 1;       // calls after which a recorded z is no longer used
  // Recorded solutions by id (grown on demand), with the call that recorded them.
  std::vector<double> z_of_id;
  std::vector<long> call_of_id;
  long calls = 0;
  long warm_groups = 0;  // sparse groups started from a recorded z (at least one entry found)
};

struct LcpResult {
  bool ok = false;
  Eigen::VectorXd z, w;  // n; w = W z + b recomputed here
  double residual = 0;   // natural-map residual r above
  int iterations = 0;    // pivots (lemke), sweeps (pgs), bases tried (enum)
  std::string message;   // why it failed (solver info code, residual too large, ...)
  // SolveLcpByComponents only: number of groups, groups solved (b_c has a negative entry) and
  // unknowns of the largest group solved (0 when none needed solving).
  int components = 0, components_solved = 0, largest_component = 0;
  // Groups solved by the sparse path (contact/sparse_lcp.h).
  int components_sparse = 0;
  // Stages of the solver chain that ended without a verified answer before the one that gave
  // this result (0: the first stage verified; summed over the groups of SolveLcpByComponents).
  int failed_stages = 0;
};

// W (n × n), b (n). n = 0 is a valid, trivially solved problem. Throws std::invalid_argument
// on inconsistent sizes, non-finite entries, tolerance ≤ 0, max_iterations ≤ 0 or an invalid
// solver value. Thread-safe (Siconos calls are serialized).
LcpResult SolveLcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& b, const LcpOptions& options);

// The same LCP solved per independent group (see "Independent components" above).
// `component[i]` ∈ [0, num_components) is the group of unknown i (n = b.size() entries); the
// caller guarantees W_ij = 0 across groups. `block(c, unknowns, &W_c)` fills W_c with W restricted
// to the unknowns of group c (ascending); it is called only for groups with a negative b entry,
// so W is never formed as n × n. Returns z, w, the whole-problem residual; iterations summed
// over the groups; on failure the message names the first group that failed (its unknowns'
// first index and size). Throws std::invalid_argument on a label outside [0, num_components),
// a size mismatch, non-finite entries, or bad options (as SolveLcp).
using LcpBlockFunction =
    std::function<void(int c, const std::vector<int>& unknowns, Eigen::MatrixXd* W_c)>;
LcpResult SolveLcpByComponents(const std::vector<int>& component, int num_components,
                               const LcpBlockFunction& block, const Eigen::VectorXd& b,
                               const LcpOptions& options);

// The same with a sparse block: a group of m ≥ options.sparse_minimum_size unknowns gets its
// W_c from `sparse_block` (same contract, m × m, symmetric) and is solved by SolveLcpSparse
// (contact/sparse_lcp.h: exact, same residual test, dense fallback); smaller groups use `block`.
// An empty `sparse_block` means the dense path only.
using LcpSparseBlockFunction =
    std::function<void(int c, const std::vector<int>& unknowns, Eigen::SparseMatrix<double>* W_c)>;
LcpResult SolveLcpByComponents(const std::vector<int>& component, int num_components,
                               const LcpBlockFunction& block,
                               const LcpSparseBlockFunction& sparse_block, const Eigen::VectorXd& b,
                               const LcpOptions& options);

// Dense W (n × n): the groups are the connected components of the graph of the exact non-zero
// entries W_ij ≠ 0 or W_ji ≠ 0 (an exact zero decouples exactly, so the split never changes the
// problem). Same validation as SolveLcp.
LcpResult SolveLcpByComponents(const Eigen::MatrixXd& W, const Eigen::VectorXd& b,
                               const LcpOptions& options);

// ---- Frictional contact in 3D (Siconos fc3d) --------------------------------------------------
// Find r, u (3 n_c): u = M r + q and, for each contact i with entries (3i, 3i+1, 3i+2) =
// (normal, tangent 1, tangent 2) in an orthonormal local frame,
//
//   r_i ∈ K_i = {‖r_T‖ ≤ μ_i r_N},   û_i = u_i + μ_i ‖u_T,i‖ e_N ∈ K_i*,   r_iᵀ û_i = 0,
//
// Coulomb's law written with De Saxcé's modified velocity û (Acary & Brogliato, "Numerical
// Methods for Nonsmooth Dynamical Systems", LNACM 35, 2008, Sec. 3.9.2). μ_i = 0 makes contact i
// frictionless (r_T = 0, u_T free). M need not be symmetric.
//   kAlartCurnierNewton  Siconos SICONOS_FRICTION_3D_NSN_AC: semismooth Newton on the
//                        Alart–Curnier function, with line search; locally quadratic.
//   kNsgs                SICONOS_FRICTION_3D_NSGS: Gauss–Seidel over contacts with an exact
//                        local solver; slower, more robust far from the solution.
//   kAdmm                SICONOS_FRICTION_3D_ADMM: alternating direction method of multipliers
//                        (Siconos' fc3d_admm: factorizations of M + ρI, projections on the
//                        cones, the De Saxcé term updated between iterations).
//   kProximal            SICONOS_FRICTION_3D_PROX: the proximal point method. Each outer
//                        iteration solves the problem with M + σI and q − σ r_k by the
//                        Alart–Curnier Newton above and takes its answer as r_{k+1}; a fixed
//                        point solves the original problem, and M + σI keeps the Newton
//                        Jacobian regular when M is rank-deficient (redundant contacts). Siconos
//                        adapts σ to the error. Use it with a dense M (its inner Newton leaks on
//                        NM_SPARSE, below).
// The result is Siconos' answer with its info code: the caller checks the law itself (e.g.
// contact::CoulombResidual in contact/friction_cone.h). With `fallback`, a failed Newton solve is
// retried by NSGS from the Newton iterate, and an M of deficient rank (redundant contacts) goes
// to NSGS directly: there Siconos' Newton Jacobian is singular, and Siconos prints
// "NM_LU_factorize: ... failed" to stderr whatever its verbose level. r0 (3 n_c, optional) is the
// initial reaction (warm start); otherwise 0. Serialized with the other Siconos calls; never
// exits.
enum class Fc3dSolver { kAlartCurnierNewton, kNsgs, kAdmm, kProximal };

struct Fc3dOptions {
  Fc3dSolver solver = Fc3dSolver::kAlartCurnierNewton;
  double tolerance = 1e-10;  // Siconos' error (its fc3d_compute_error), relative to max(1, ‖q‖∞)
  int max_iterations = 200;  // Newton or proximal iterations or Gauss–Seidel sweeps, > 0
  bool fallback = true;
};

struct Fc3dResult {
  bool ok = false;       // Siconos reported convergence (info 0) and r, u are finite
  Eigen::VectorXd r, u;  // 3 n_c
  double error = 0;      // Siconos' final error estimate
  int iterations = 0;
  std::string message;  // solver(s) used, info code on failure
};

// Throws std::invalid_argument on sizes (M: 3 n_c square, q: 3 n_c, mu: n_c, r0: 3 n_c),
// non-finite entries, μ < 0 or bad options.
Fc3dResult SolveFrictionContact3d(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& mu, const Fc3dOptions& options,
                                  const Eigen::VectorXd* r0 = nullptr);
// The same with M sparse (Siconos NM_SPARSE): the Moreau–Jean step of a large pile
// (contact/sparse_friction_step.h). NSGS then costs O(nnz) per sweep. Siconos 4.4's
// Alart–Curnier Newton on NM_SPARSE leaks about 200 KB per Newton iteration on a 167-contact
// pile problem (resident memory +85 MB over 40 calls of 11 iterations; none with NM_DENSE or
// with NSGS): use kNsgs with sparse matrices in long runs.
Fc3dResult SolveFrictionContact3d(const Eigen::SparseMatrix<double>& M, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& mu, const Fc3dOptions& options,
                                  const Eigen::VectorXd* r0 = nullptr);

// ---- Rolling friction contact in 3D (Siconos rolling_fc3d) -----------------------------------
// Find r, u (5 n_c): u = M r + q and, for each contact i with entries (5i, …, 5i+4) = (normal,
// tangent 1, tangent 2, rolling 1, rolling 2) in an orthonormal local frame,
//
//   r_i ∈ K_i = {‖r_T‖ ≤ μ_i r_N, ‖r_R‖ ≤ μ_R,i r_N},
//   û_i = u_i + (μ_i ‖u_T,i‖ + μ_R,i ‖u_R,i‖) e_N ∈ K_i*,   r_iᵀ û_i = 0,
//
// Siconos Numerics' RollingFrictionContactProblem (rolling_fc3d_compute_error defines û this
// way). K_i* = {u_N ≥ μ‖u_T‖ + μ_R‖u_R‖}, so û ∈ K* is u_N ≥ 0, and r ᵀû = r_N u_N + (r_Tᵀu_T +
// μ r_N ‖u_T‖) + (r_Rᵀu_R + μ_R r_N ‖u_R‖) is a sum of three non-negative terms: the law is
// Signorini on (r_N, u_N) and two Coulomb disks with the same r_N, on the tangential impulse
// (r_T = −μ r_N u_T/‖u_T‖ when u_T ≠ 0) and on the rolling torque impulse (r_R = −μ_R r_N
// u_R/‖u_R‖ when u_R ≠ 0). μ_R is a length: r_R is a torque impulse, u_R an angular velocity.
// Solver: SICONOS_ROLLING_FRICTION_3D_NSGS (Gauss–Seidel over contacts, projection on K_i with
// local iterations; the only Siconos 4.4 solver of this problem besides ADMM). As for fc3d the
// caller checks the law itself (contact/rolling_friction_step.h, RollingFrictionResidual).
// Serialized with the other Siconos calls; never exits.
struct RollingFc3dOptions {
  double tolerance = 1e-10;   // Siconos' error, relative to max(1, ‖q‖∞), > 0
  int max_iterations = 1000;  // Gauss–Seidel sweeps, > 0
};

// Throws std::invalid_argument on sizes (M: 5 n_c square, q: 5 n_c, mu and mu_r: n_c, r0: 5 n_c),
// non-finite entries, μ or μ_R < 0 or bad options. r0: initial reaction (warm start), else 0.
Fc3dResult SolveRollingFrictionContact3d(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& mu, const Eigen::VectorXd& mu_r,
                                         const RollingFc3dOptions& options,
                                         const Eigen::VectorXd* r0 = nullptr);

}  // namespace saltus::contact

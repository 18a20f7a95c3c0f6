// Unilateral contacts between shapes attached to the bodies of a SpatialModel (issue 4): one
// constraint row per feature of each pair's contact manifold (contact_manifold.h), so a box on
// a plane gives 8 rows (its corners), a capsule 2 (its end balls), a sphere 1.
//
// Body i has q_i = (r, Q), v_i = (ṙ, ω) with ω in the body frame (engine/spatial_model.h); the
// ground (engine::kGround) has the identity pose. For a row with gap g, unit normal n (from A to
// B) and witness points p_a, p_b (geometry3d.h, all in the world frame) the Jacobian with
// respect to v is (docs/contact-geometry.md, "Conventions"; Haddouni et al. 2017, Section 2.1)
//
//   G_b = ( nᵀ,  (s̄_b × R_bᵀ n)ᵀ ),   s̄_b = R_bᵀ (p_b − r_b),
//   G_a = −( nᵀ, (s̄_a × R_aᵀ n)ᵀ ),   s̄_a = R_aᵀ (p_a − r_a),
//
// i.e. ġ = n · (velocity of the material point of B at p_b − that of A at p_a); the support and
// rim rows of an ellipsoid or a cylinder against a mesh or a box add, where their normal turns
// with the centre c (beside an edge or a vertex), the same blocks for the direction w at the
// point c (contact_manifold.h, NormalTurn: ġ += w · (v_B(c) − v_A(c))). The rows are
// scleronomic and γ = Ġ v (g̈ = G v̇ + γ) is, with world angular velocities ω^w = R ω, material
// point velocities ẋ = ṙ + ω^w × (x − r) and v̇-free accelerations ẍ = ω^w × (ω^w × (x − r)):
//
//   plane–point features (plane – box corner, plane – convex-mesh vertex, plane – capsule end
//   ball, plane – sphere): g = n·(x_b − x_a) − ρ with x the body-fixed point of each side (the
//   vertex or ball centre on the convex side, the witness point on the plane side), n fixed in the
//   plane's body P, ρ the ball radius (0 for a vertex); with d = x_b − x_a,
//       γ = (ω_P^w × (ω_P^w × n))·d + 2 (ω_P^w × n)·ḋ + n·d̈                      (analytic);
//   sphere – sphere: d = c_b − c_a (centres), n = d/‖d‖,
//       γ = n·d̈ + (‖ḋ‖² − (n·ḋ)²)/‖d‖                                            (analytic);
//   plane – cylinder rim (centre c of the end circle, axis e fixed in the cylinder, radius r):
//   g = n·(x_b − x_a) − r s, s = √(1 − μ²), μ = n·e, with x = c on the cylinder side,
//       γ = [the plane–point γ of c] − r s̈,  s̈ = −μ̇²/s³ − μ μ̈/s,  μ̇ = ṅ·e + n·ė,
//       μ̈ = n̈·e + 2 ṅ·ė + n·ë  (analytic; central difference below at n ∥ e, where the
//       gap is not differentiable);
//   box corner – box K, and capsule end ball – box K (the ball centre as the corner, g + r): by
//   the corner's Voronoi region of K (count of box-frame coordinates
//   beyond the half sizes): face (0 or 1: the plane–point form with n fixed in K, ρ = 0),
//   vertex (3: the sphere–sphere form with the two material points), edge (2: g = ‖u‖,
//   u = d − (d·e) e with the edge direction e fixed in K, g̈ = m·ü + (‖u̇‖² − (m·u̇)²)/‖u‖,
//   m = u/‖u‖)                                                                  (analytic);
//   triangle mesh M – sphere (centre c, radius ρ), – box or convex-mesh vertex (c the vertex,
//   ρ = 0), – capsule end ball (c its centre, ρ = r), signed (geometry3d.h, MeshPointDistance:
//   the edge and vertex forms times s = MeshPointSide): by the Voronoi region of the closest
//   point x on the closest triangle (ClosestPointOnMesh), with d = c − x and x fixed in M:
//   face interior (the plane–point form with the face normal n_f fixed in M), edge
//   (g = ‖u‖ − ρ, the edge form above with the edge direction e fixed in M), vertex (the
//   sphere–sphere form with the two material points)                             (analytic;
//   central difference below when c lies on an edge or vertex, d = 0);
//   every other feature (pairs through the general signed distance; the support and rim rows
//   against a mesh or a box, whose γ jumps where the centre changes region, contact_manifold.h):
//   γ = d/dε [G(q ⊕ ε v) v] at ε = 0 by a central difference with
//   ε = ∛(machine ε) / max(1, ‖v_a‖∞, ‖v_b‖∞) (a displacement of about 6e-6 in the
//   coordinates), which balances the O(ε²) truncation against the O(machine ε/ε) round-off:
//   γ to about 1e-10 relative to ‖v‖² · curvature. Where the witness features of a signed
//   distance switch, G jumps and this difference (like Ġ itself) is not meaningful.
//
// Cost of an evaluation. Each body's rotation R(Q) is computed at most once per distinct Q and
// thread (a cache keyed by the quaternion's values, shared by every call: Values over k rows and
// the row-by-row AppendJacobianBlocks both cost O(k)); sphere–sphere and plane–sphere rows are
// computed directly from the centres (no manifold, no Isometry products) and need no rotation at
// all when the spheres are centred on their bodies and the planes fixed (the pile); ValuesAndRates
// gives g and G v of the same rows in one pass.
//
// Rows are named "<pair>" when the pair's manifold has one feature and "<pair>.<k>" (k the
// feature index, e.g. the corner number) otherwise; every row carries the pair's restitution
// and friction coefficient μ.
//
// Tangential rows (Coulomb friction, issue 18 §1). Every normal row of a pair with μ > 0 gets
// two rows "<row>.t1", "<row>.t2" (kind kTangential, level kVelocity, normal_row the normal
// row), all listed after ALL normal rows (normal row order, t1 before t2): a frictionless block
// has exactly the rows above, and CandidateRows lists normal rows only. With the row's witness
// points x_a, x_b (x_b − x_a = g n) and the unit tangents t_k (k = 1, 2),
//
//   ġ_T,k = t_k·(v_B(x_b) − v_A(x_a)):   G_T,b = (t_kᵀ, (s̄_b × R_bᵀ t_k)ᵀ), s̄_b = R_bᵀ(x_b − r_b),
//                                          G_T,a = −(t_kᵀ, (s̄_a × R_aᵀ t_k)ᵀ),
//
// the material-point velocities at the witness points themselves (a sphere's lever is its
// contact point, not its centre: ℓ × t changes along n, unlike ℓ × n); the normal-turn term of a
// support or rim row belongs to the gap's rate only. Values() = 0 (velocity level).
//
// The frame. (t1, t2, n) is the image of a reference frame (e1, e2 = a × e1, a) fixed in a body
// K under the smallest rotation that takes the reference axis a to n (a, e1 turned by R_K):
//
//   t1 = e1 − (n·e1)/(1 + a·n) (a + n),   t2 = n × t1,
//
// orthonormal, C^∞ in n and q except at n = −a (where it is undefined; 1/(1 + a·n) bounds its
// rate). K and a per row: a plane's body and a = the row's normal in that body (n ≡ a: the frame
// is fixed in the plane's body, no singular point is ever reached); a box or triangle mesh (the
// surface side of corner, end-ball, vertex, support and rim rows) and a = ±R_S a* in its body
// (R_S the shape's pose, + when the surface is side A; the frame is then fixed in K while n is a
// face normal, and turns with n beside edges and vertices); every other pair (sphere–sphere and
// the signed-distance pairs) the world and a = a*, with a* = (2, 3, 6)/7, a direction along no
// face, edge or diagonal of a box so that the singular point is no symmetric configuration.
//
// γ_T (g̈_T = G_T v̇ + γ_T). With v̇ = 0 (ṙ and ω constant), ẋ the rate of a geometric witness
// point (not of the material point) and ṫ_k from ṅ, ȧ = ω_K × a, ė1 = ω_K × e1:
//
//   γ_T,k = ṫ_k·(v_B(x_b) − v_A(x_a)) + t_k·(ω_B × (ẋ_b − ṙ_B) − ω_A × (ẋ_a − ṙ_A)),
//   ṫ1 = ė1 − (β̇/(1 + c) − β ċ/(1 + c)²)(a + n) − β/(1 + c) (ȧ + ṅ),  β = n·e1, c = a·n,
//   ṫ2 = ṅ × t1 + n × ṫ1.
//
// For the rows with a closed-form γ (above) ṅ and ẋ are closed forms too: with C the side of the
// body-fixed point c (vertex, corner, ball or sphere centre, rim circle centre; σ = +1 when C is
// B, −1 when A), ρ its radius, S the other side (plane, box, mesh, or sphere A):
//   n fixed in S (a plane, a box or mesh face region):  ṅ = ω_S × n;
//   n along u = d − (d·e) e, d = c − x_S (x_S the witness on S, a material point of S; e the
//   edge direction fixed in S, e = 0 beside a vertex and for two spheres):
//       ṅ = (n·m) (I − n nᵀ) u̇/‖u‖,  m = u/‖u‖,  u̇ = ḋ − (ḋ·e + d·ė) e − (d·e) ė;
//   ẋ_C = v_C(c) − σ ρ ŵ̇ with ŵ = n (balls, vertices: ρ = 0) or, for a rim of radius ρ and axis
//   e_C, ŵ = (n − μ e_C)/s (μ = n·e_C, s = √(1 − μ²)): the rim point lowest along σ n;
//   ẋ_S = ẋ_C − σ (ġ n + g ṅ), ġ = n·(v_B(x_b) − v_A(x_a)).
// Every other row (the rows whose normal γ is a central difference, above) takes γ_T as the
// same central difference of G_T v.
//
// Resistance rows (rolling and spinning resistance, issue 18 §1; docs/friction.md). A normal row
// of a pair with rolling_friction μ_R > 0 gets two rows "<row>.r1", "<row>.r2", one with
// spinning_friction μ_S > 0 a row "<row>.s" (kind kResistance, level kVelocity, normal_row the
// normal row; ConstraintRowInfo::spinning), listed after all tangential rows (normal row order,
// r1, r2, s). With the frame (t1, t2, n) above, u = t_k (rolling) or n (spinning), and the world
// angular velocities ω^w = R ω of the two bodies,
//
//   ġ_R,u = u·(ω_B^w − ω_A^w):   G_b = (0, (R_bᵀ u)ᵀ),   G_a = −(0, (R_aᵀ u)ᵀ),
//
// the Jacobian on the angular velocities only. With v̇ = 0 (ω constant in the body frame, so
// d(R ω)/dt = R (ω × ω) = 0) the rate of change comes from the turning frame alone:
//
//   γ_R,u = u̇·(ω_B^w − ω_A^w),   u̇ = ṫ_k or ṅ of "γ_T" below,
//
// in closed form where the normal row's γ_T is, else the central difference of G_R v. Their
// forces are the torques τ_R ∈ ℝ², ‖τ_R‖ ≤ μ_R λ_N (Siconos Numerics' rolling friction cone) and
// τ_S, |τ_S| ≤ μ_S λ_N, acting as ±u τ on the two bodies. The rows are defined for the pairs with
// a sphere on one side (a sphere, box, mesh, cylinder, … or a plane on the other): a sphere's
// contact has a single point whose rolling is the relative rotation about t_k; a box, cylinder
// or mesh resting on a face has several rows whose normal-force distribution already resists
// rolling. Values() = 0 (velocity level).
//
// Candidate rows (ConstraintBlock::CandidateRows, used by the event loop to watch only nearby
// pairs): the distinct shapes of the pairs ("proxies": same body, type, pose and bounds). A
// material point of body i at distance ≤ ρ_i from the body origin r_i moves at
// ‖ṙ_i + ω_i × (x − r_i)‖ ≤ ‖ṙ_i‖ + ρ_i ‖ω_i‖, so over a horizon H with |v_j| ≤ s_j it moves by
// at most δ_i = H (‖s_lin,i‖ + ρ_i ‖s_ang,i‖) (ρ_i = ‖translation of the shape in the body‖ + its
// bounding radius). Every feature gap of a pair is a distance between material points of the two
// shapes (or a point and a plane), so it decreases by at most δ_a + δ_b over the horizon. Each
// proxy gets the grown box of Broadphase (broadphase.h: its local AABB grown by m/2 + δ_i on
// every side, at the shape's world pose, bounded by the world AABB that FCL 0.7 computes for it),
// so two proxies within m + δ_a + δ_b have overlapping boxes; planes (fixed in the world) are
// tested against each proxy's bounding ball, n·c − d − R ≤ m + δ. The rows of all other pairs
// stay > m over the horizon. The overlapping boxes are found by an AabbGrid (broadphase.h) that
// keeps the pairs of boxes grown by a further quarter of their size and tests only those while
// every box stays inside its grown box (the loop asks again after each step and event, with
// bodies that moved a little): the same candidates as the FCL tree, at a fraction of the cost
// (bench/contact_detection, BM_PileCandidateRows). The declared pairs of two proxies are found by
// their place in the sorted entries of the lower proxy (O(1) when every pair is declared). A
// pair's rows are listed together (a box–plane pair: its 8 corners). A plane carried by a moving
// body can sweep arbitrarily far points when it turns: its pairs are always candidates. Cost per
// call O(S + K + F) for S proxies, K candidate pairs and F pairs of grown boxes, plus O(S P) for
// P planes and O(S) expected for a rebuild of the grid; independent of the number of declared
// pairs. CandidateRows serializes concurrent callers (its workspace is mutable state).
//
// Contacts at nodes of flexible bodies (issue 22 §1; SpatialContactPair::node_a, node_b). A side
// may be a sphere (radius ρ: a point contact rounded by ρ) centred at node k of a flexible body
// (engine/flexible_beam_spatial.h): its centre is the node of the deformed centreline,
// p = r + R ū(X_k, η), and it is carried by the node's cross-section, which turns with the
// floating frame and, relative to it, with the section's bending slopes and twist (Λ,
// ω_s = E η̇ of SpatialFlexibleBeam::Section). A material point x of the sphere therefore moves
// as a point of the frame with lever x − r plus the node's elastic motion plus the section's turn
// about the node (B = ∂ū/∂η at X_k, ω^w = R ω):
//
//   ẋ = ṙ + ω^w × (x − r) + e_v + (R E η̇) × (x − p),    e_v = R B η̇,
//   ẍ_free = ω^w × (ω^w × (x − r)) + e_a + (turn terms),  e_a = R (2 ω × B η̇ − (η̇ᵀ H η̇) e_x)
//
// (the node terms of the spatial joints at nodes, engine/spatial_model.h). Every row above keeps
// its form with these kinematics. G gains ±(R B)ᵀ u on the body's η̇ columns, u the row's
// direction (the normal plus a normal-turn w, or the tangent t_k); a tangential row also
// ±(R E)ᵀ ((x − p) × t_k) at its witness point x, and a resistance row ±(R E)ᵀ u (the sphere's
// angular velocity is R (ω + E η̇)). A normal row gains nothing from the turn (a sphere's gap does
// not depend on its orientation): a sphere at a node on a plane has
//   G_b = (nᵀ, (ū × Rᵀ n)ᵀ, nᵀ R B) = n·[I, −R [ū]×, R B]
// on (ṙ, ω, η̇). The analytic γ of the normal rows take ẍ_free without the turn terms (the gap
// of a sphere does not depend on its turn, so neither do its ġ and g̈); the tangential and
// resistance rows of a pair with a
// node take the central difference of G v along q ⊕ ε v (as along the centreline), which moves
// η by ε η̇. A pair with a node is always a candidate (its sphere moves with η̇, beyond the
// bounds of a rigid body's points), and ValuesAndRates and AppendJacobianBlocks return false
// when a pair has a node: the callers' dense path (a flexible model has no block-sparse one).
//
// Contacts along the centreline of flexible bodies (issue 22 §1; node_a/node_b =
// kAlongCentreline). A side may instead be the tube swept by a sphere (radius ρ) along the whole
// deformed centreline: the contact is at the material point X* of the centreline nearest to the
// partner, which must be a sphere (centre c: X* minimizes ‖p(X) − c‖,
// SpatialFlexibleBeam::NearestX) or a plane (outward normal n: X* minimizes n·p(X), LowestX),
// found again at every evaluation, between nodes too. With f(X, q) = ‖p(X) − c‖ (sphere) or
// n·p(X) (plane), the gap is g(q) = f(X*(q), q) − const, and at an interior X* f_X = 0, so
//   ġ = ∂f/∂q q̇ at fixed X = X*:
// the row is that of the sphere centred at the material point X* (the node rows above, with B
// and H of the point X*: the shape functions at X* enter G), and every row form above is kept.
// Differentiating once more, X* moves along the beam at Ẋ* = −ḟ_X/f_XX (ḟ_X the rate of f_X at
// fixed X), which adds to the fixed-point γ of the normal row
//   γ = γ(X fixed) − ḟ_X² / f_XX,
//   sphere: f_XX = m·p_XX + (‖p_X‖² − (m·p_X)²)/‖d‖,  ḟ_X = m·ṗ_X + (ḋ·p_X − (m·ḋ)(m·p_X))/‖d‖,
//   plane:  f_XX = n·p_XX,                            ḟ_X = n·ṗ_X + ṅ·p_X,
// with d = p − c, m = d/‖d‖, ḋ = ṗ − ċ (material points), p_X = R ū_X, p_XX = R ū_XX,
// ṗ_X = ω^w × p_X + R B_X η̇ (SpatialBeamCurve), ṅ = ω_P^w × n (the planar disk_beam's Ẋ*,
// contact/planar_contacts.h, in space). At an end (X* = 0 or L with f_X pushing outwards) X*
// is fixed and the term is 0; where f_XX ≤ 0 (a straight centreline parallel to the plane: a
// line contact, X* not a function of q) it is left out. The tangential rows are the slip of the
// material points at the witness points (as at nodes: the section at X* turns with the slopes
// and twist there); their γ_T and the resistance rows' γ_R
// are the central difference of G v along q ⊕ ε v (which moves X* with q), not a closed form.
// The partner may not be a centreline or node side, nor on the same body.
//
// Storage: a Shape is a shared handle (shapes.h), so a pair holds two handles to the shapes of
// the scene, its name and restitution; a row its info, pair, feature and path; only the pairs
// evaluated through a ContactManifold keep one. About 180 bytes per single-row pair (names of
// ≤ 15 characters) plus the caller's copy of the pairs (docs/contact-geometry.md, "Storage").
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "contact/broadphase.h"
#include "contact/contact_manifold.h"
#include "contact/contact_site.h"
#include "contact/shapes.h"
#include "engine/constraint_block.h"
#include "engine/spatial_model.h"

namespace saltus::contact {

// The default shapes of a SpatialContactPair (built once; a Shape is a shared handle, so a default
// pair costs no allocation).
const Shape& DefaultPairPlane();   // Shape::Plane(e_z, 0)
const Shape& DefaultPairSphere();  // Shape::Sphere(0.1)

// World-frame kinematics of one side of a row (spatial_contacts.cc).
struct ContactBodyMotion;

struct SpatialContactPair {
  std::string name;
  int body_a = engine::kGround;  // carries shape_a (engine::kGround: fixed in the world)
  Shape shape_a = DefaultPairPlane();
  int body_b = 0;  // carries shape_b
  Shape shape_b = DefaultPairSphere();
  double restitution = -1.0;  // Newton coefficient in [0, 1]; negative: the simulation's global one
  double friction = 0.0;      // Coulomb μ ≥ 0; > 0: two tangential rows per normal row
  // Rolling and spinning resistance (lengths in m, ≥ 0; header, "Resistance rows"); > 0 only on
  // a pair with a sphere on one side: two rolling rows, resp. one spinning row, per normal row.
  double rolling_friction = 0.0;
  double spinning_friction = 0.0;
  // A node k ∈ [0, n] of the flexible body_a / body_b (−1: the shape is fixed in the body frame;
  // header, "Contacts at nodes"), or kAlongCentreline (header, "Contacts along the centreline").
  // With a node that side's shape must be a sphere centred on its own origin (identity pose): its
  // centre is the node of the deformed centreline (or the centreline point nearest the partner).
  int node_a = -1;
  int node_b = -1;
};

// SpatialContactPair::node_a/node_b: the side's sphere is swept along the whole centreline.
inline constexpr int kAlongCentreline = -2;

class SpatialContacts : public engine::ConstraintBlock {
 public:
  // Validates every pair and throws std::invalid_argument naming it ("contact pair 'x': ..."):
  // non-empty unique name, bodies in [kGround, num_bodies), different, not both the ground,
  // restitution in [0, 1] or negative, friction finite and ≥ 0, a pair of shapes the manifold
  // accepts (not two planes, not
  // a plane or a triangle mesh against a triangle mesh). Values, Jacobian and Gamma throw
  // std::invalid_argument if q (7 per body) or v (6 per body) has the wrong size.
  SpatialContacts(std::shared_ptr<const engine::SpatialModel> model,
                  std::vector<SpatialContactPair> pairs, DistanceOptions options = {});

  // The checks of the constructor on one pair (index `index` in messages about an empty name),
  // without building anything but the pair's manifold: for callers that validate pairs one by
  // one (the scene loader, for line numbers) before building one block of all of them. The
  // uniqueness of names is checked by the constructor only.
  static void CheckPair(const engine::SpatialModel& model, const SpatialContactPair& pair,
                        std::size_t index = 0, const DistanceOptions& options = {});

  const std::vector<SpatialContactPair>& pairs() const { return pairs_; }
  // Number of normal (unilateral) rows: rows [0, num_normal_rows()); the tangential rows follow,
  // then the resistance rows from first_resistance_row().
  int num_normal_rows() const { return static_cast<int>(row_pair_.size()); }
  int first_resistance_row() const {
    return num_normal_rows() + 2 * static_cast<int>(tangent_normal_.size());
  }
  // The normal row of a local row (itself for a normal row).
  int NormalRowOf(int row) const {
    if (row < num_normal_rows()) return row;
    if (row < first_resistance_row()) {
      return tangent_normal_[static_cast<std::size_t>(row - num_normal_rows()) / 2];
    }
    return resistance_normal_[static_cast<std::size_t>(row - first_resistance_row())];
  }
  // Pair and manifold feature of a local row (a tangential row: those of its normal row).
  int RowPair(int row) const { return row_pair_[static_cast<std::size_t>(NormalRowOf(row))]; }
  int RowFeature(int row) const { return row_feature_[static_cast<std::size_t>(NormalRowOf(row))]; }
  // Gap, normal and witness points (world frame) of a local row's normal row at q.
  PairDistance Evaluate(const Eigen::VectorXd& q, int row) const;
  // The unit tangents t1, t2 of a normal row at q (the frame above; also for frictionless rows).
  std::pair<Eigen::Vector3d, Eigen::Vector3d> Tangents(const Eigen::VectorXd& q, int row) const;
  // True if γ of the row is computed in closed form (false: central difference, see above).
  bool HasAnalyticGamma(int row) const;

  int num_rows() const override { return static_cast<int>(infos_.size()); }
  const engine::ConstraintRowInfo& row_info(int i) const override {
    return infos_[static_cast<std::size_t>(i)];
  }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override;
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override;
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override;
  // The row's G as 6-blocks of its (at most two) bodies, the same entries as Jacobian: O(1)
  // per row instead of O(nv), so that block-sparse solvers and ġ = G v cost O(rows), not
  // O(rows · nv), in piles of many bodies. False when G->block_size ≠ 6.
  bool AppendJacobianBlocks(double t, const Eigen::VectorXd& q, int local_row,
                            engine::BlockSparseRows* G) const override;
  // g and ġ = G v (the rows are scleronomic) of `rows` in one pass, with the geometry of each
  // row evaluated once (the event loop asks for both at the same (t, q, v)): the same numbers,
  // bit for bit, as Values and engine::ConstraintRate (G v from AppendJacobianBlocks, summed in
  // the same order). Returns true. Throws std::invalid_argument like Gamma.
  bool ValuesAndRates(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> g,
                      Eigen::Ref<Eigen::VectorXd> g_dot) const override;
  // Rows of the pairs the broadphase finds within margin + δ_a + δ_b (see above). Throws
  // std::invalid_argument if q or speed_bound has the wrong size, or horizon/margin < 0.
  void CandidateRows(const Eigen::VectorXd& q, const Eigen::VectorXd& speed_bound, double horizon,
                     double margin, std::vector<int>* rows) const override;
  bool CandidateRowsDependOnSpeed() const override { return true; }
  // The witness points' midpoint and the normal of local row `row` at q (contact/contact_site.h),
  // from the same geometry as Values. Throws std::out_of_range for a bad row.
  ContactSite Site(const Eigen::VectorXd& q, int row) const;
  // Number of distinct shapes in the broadphase.
  int num_proxies() const { return static_cast<int>(proxy_body_.size()); }

 private:
  // How a row is evaluated: sphere–sphere and plane–sphere directly from the centres (no
  // manifold, no Isometry products), everything else through ContactManifold::Evaluate.
  enum class RowPath : unsigned char { kSphereSphere, kPlaneSphere, kSpherePlane, kManifold };
  // Gap, normal, witness points and the lever arms ℓ = x − r of the row's Jacobian on each side
  // (x: the witness point, or on a sphere side the centre, whose lever gives the same G because
  // ℓ × n is unchanged by a shift along n; exactly zero for a sphere centred on its body).
  // turn: the normal-turn term of a support or rim row (contact_manifold.h, NormalTurn), w
  // applied at the point c with levers turn_lever_a, turn_lever_b (w = 0: none).
  // angular: a resistance row (d.normal the axis u; G on the angular velocities only).
  struct RowGeometry {
    PairDistance d;
    bool angular = false;
    Eigen::Vector3d lever_a, lever_b;
    NormalTurn turn;
    Eigen::Vector3d turn_lever_a = Eigen::Vector3d::Zero(), turn_lever_b = Eigen::Vector3d::Zero();
  };
  RowGeometry Geometry(const Eigen::VectorXd& q, int row) const;
  // A tangential row's RowGeometry: its normal row's witness points with d.normal = t_k, the
  // levers of the witness points themselves, gap 0 and no normal turn (so that every G path
  // serves both kinds of rows).
  RowGeometry TangentGeometry(const Eigen::VectorXd& q, int row) const;
  // The axis of a tangential or resistance row in its normal row's frame: 0 (t1), 1 (t2), 2 (n).
  int FrameAxis(int row) const;
  double Gap(const Eigen::VectorXd& q, int row) const;
  // The manifold feature of a row ({kSignedDistance, 0} on the direct paths).
  ContactFeature Feature(int row) const;
  Eigen::Isometry3d BodyPose(const Eigen::VectorXd& q, int body) const;
  // A side at a node (header, "Contacts at nodes"): the node's world position p, R B (3 × m) and,
  // with v, the elastic velocity e_v and v̇-free acceleration e_a of the sphere's points.
  struct NodeState {
    Eigen::Vector3d point, e_v = Eigen::Vector3d::Zero(), e_a = Eigen::Vector3d::Zero();
    Eigen::Matrix<double, 3, Eigen::Dynamic> RB;
    Eigen::Matrix<double, 3, Eigen::Dynamic> RE;  // R E: the section's turn (SpatialBeamMotion)
  };
  NodeState Node(const Eigen::VectorXd& q, const Eigen::VectorXd* v, int pair, int side) const;
  bool AtNode(int pair, int side) const;  // side 0: a, 1: b (a node or the centreline)
  bool AlongCentreline(int pair, int side) const;
  // X* of a centreline side at q, and the term −ḟ_X²/f_XX of its normal row's γ (header,
  // "Contacts along the centreline").
  double CentrelineX(const Eigen::VectorXd& q, int pair, int side) const;
  double CentrelineGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int pair,
                         int side) const;
  // The pose of side `side`'s body with, at a node, the node as origin; the world origin of the
  // side's shape (a node sphere: the node); the world kinematics of the side's material points.
  Eigen::Isometry3d SidePose(const Eigen::VectorXd& q, int pair, int side) const;
  Eigen::Vector3d SideOrigin(const Eigen::VectorXd& q, int pair, int side) const;
  ContactBodyMotion SideMotion(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int pair,
                               int side) const;
  // G row (1 × nv) of a local row at q, added into `out` (already zeroed).
  void JacobianRow(const Eigen::VectorXd& q, int row,
                   Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> out) const;
  // The 6 entries of G on `body` (not the ground) for lever ℓ, normal n and sign ±1:
  // ±(n, Rᵀ(ℓ × n)) (= ±(n, s̄ × Rᵀn) of the header, s̄ = Rᵀℓ).
  void SideBlock(const Eigen::VectorXd& q, int body, const Eigen::Vector3d& lever,
                 const Eigen::Vector3d& n, double sign, double* out) const;
  // SideBlock of the row's side (sign −1: a, +1: b) plus its normal-turn term, if any.
  void RowSideBlock(const Eigen::VectorXd& q, const RowGeometry& geo, int body, double sign,
                    double* out) const;
  double AnalyticGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;
  // γ_T of a tangential row or γ_R of a resistance row in closed form (the header); false when
  // the normal row has none.
  bool AnalyticTangentGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row,
                            double* gamma) const;
  // Reference body K, axis a and e1 (in K's frame; the world for K = kGround) of a normal row's
  // tangent frame, and a, e1 in the world at q.
  struct FrameReference {
    int body = engine::kGround;
    Eigen::Vector3d axis = Eigen::Vector3d::UnitZ(), e1 = Eigen::Vector3d::UnitX();
  };
  FrameReference FrameReferenceOf(int normal_row) const;
  void WorldFrameReference(const Eigen::VectorXd& q, int normal_row, Eigen::Vector3d* axis,
                           Eigen::Vector3d* e1) const;
  double DifferenceGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;
  void CheckSizes(const Eigen::VectorXd& q, const Eigen::VectorXd* v, const char* where) const;

  std::shared_ptr<const engine::SpatialModel> model_;
  std::vector<SpatialContactPair> pairs_;
  std::vector<ContactManifold> manifolds_;  // of the pairs with RowPath::kManifold rows
  std::vector<int> pair_manifold_;          // index in manifolds_, −1: a direct path
  std::vector<engine::ConstraintRowInfo> infos_;
  std::vector<int> row_pair_;
  std::vector<int> row_feature_;
  std::vector<RowPath> row_path_;
  // The beam points of the pairs' nodes (indexed by pair, up to the last pair with a node).
  struct PairNodes {
    engine::SpatialBeamPoint a, b;
  };
  std::vector<PairNodes> pair_nodes_;
  bool has_nodes_ = false;
  // Tangential rows: num_normal_rows() + 2 k and + 2 k + 1 (t1, t2) belong to normal row
  // tangent_normal_[k].
  std::vector<int> tangent_normal_;
  // Resistance rows: first_resistance_row() + k belongs to normal row resistance_normal_[k] and
  // has axis resistance_axis_[k] (FrameAxis).
  std::vector<int> resistance_normal_;
  std::vector<signed char> resistance_axis_;

  // Broadphase proxies (see CandidateRows): body, ρ, one shape, its local AABB (centre, sizes)
  // and bounding radius of each proxy, the first row and row count of each pair, and the pairs
  // between proxies as entries sorted by (lower id a, higher id b): b and the rows of each entry,
  // the entries of a from proxy_first_entry_[a] to proxy_first_entry_[a + 1].
  std::vector<int> proxy_body_;
  std::vector<double> proxy_rho_;
  std::vector<Shape> proxy_shape_;
  std::vector<Eigen::Vector3d> proxy_aabb_centre_, proxy_aabb_size_;
  std::vector<double> proxy_bounding_radius_;
  std::vector<char> proxy_plain_;  // identity pose in the body and a centred local AABB
  std::vector<int> pair_first_row_, pair_num_rows_;
  std::vector<std::size_t> proxy_first_entry_;
  std::vector<int> entry_partner_;
  std::vector<std::pair<int, int>> entry_rows_;  // first row and row count of the entry's pair
  std::vector<int> always_pairs_;  // pairs with a plane on a moving body: always candidates
  // Workspace of CandidateRows (mutable state behind a const interface, serialized by the mutex):
  // the grown world boxes of the non-plane proxies with their proxy, body, δ and shape origin,
  // the planes with their δ, the grid and the pairs found.
  struct CandidateWorkspace {
    std::vector<Eigen::AlignedBox3d> boxes;
    std::vector<int> box_proxy, box_group;
    std::vector<double> box_inflation;
    std::vector<Eigen::Vector3d> box_origin;
    std::vector<std::pair<int, double>> planes;
    AabbGrid grid;
    std::vector<std::pair<int, int>> pairs;
  };
  std::unique_ptr<CandidateWorkspace> candidates_;
  std::unique_ptr<std::mutex> candidates_mutex_;
};

}  // namespace saltus::contact

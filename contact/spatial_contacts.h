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
// i.e. ġ = n · (velocity of the material point of B at p_b − that of A at p_a). The rows are
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
//   box corner – box K: by the corner's Voronoi region of K (count of box-frame coordinates
//   beyond the half sizes): face (0 or 1: the plane–point form with n fixed in K, ρ = 0),
//   vertex (3: the sphere–sphere form with the two material points), edge (2: g = ‖u‖,
//   u = d − (d·e) e with the edge direction e fixed in K, g̈ = m·ü + (‖u̇‖² − (m·u̇)²)/‖u‖,
//   m = u/‖u‖)                                                                  (analytic);
//   every other feature (pairs through the general signed distance):
//   γ = d/dε [G(q ⊕ ε v) v] at ε = 0 by a central difference with
//   ε = ∛(machine ε) / max(1, ‖v_a‖∞, ‖v_b‖∞) (a displacement of about 6e-6 in the
//   coordinates), which balances the O(ε²) truncation against the O(machine ε/ε) round-off:
//   γ to about 1e-10 relative to ‖v‖² · curvature. Where the witness features of a signed
//   distance switch, G jumps and this difference (like Ġ itself) is not meaningful.
//
// Rows are named "<pair>" when the pair's manifold has one feature and "<pair>.<k>" (k the
// feature index, e.g. the corner number) otherwise; every row carries the pair's restitution.
//
// Candidate rows (ConstraintBlock::CandidateRows, used by the event loop to watch only nearby
// pairs): the distinct shapes of the pairs ("proxies": same body, type, pose and bounds) are kept
// in a Broadphase (broadphase.h). A material point of body i at distance ≤ ρ_i from the body
// origin r_i moves at ‖ṙ_i + ω_i × (x − r_i)‖ ≤ ‖ṙ_i‖ + ρ_i ‖ω_i‖, so over a horizon H with
// |v_j| ≤ s_j it moves by at most δ_i = H (‖s_lin,i‖ + ρ_i ‖s_ang,i‖) (ρ_i = ‖translation of the
// shape in the body‖ + its bounding radius). Every feature gap of a pair is a distance between
// material points of the two shapes (or a point and a plane), so it decreases by at most
// δ_a + δ_b over the horizon; the broadphase with margin m and inflations δ_i returns every pair
// whose distance is ≤ m + δ_a + δ_b. The rows of all other pairs stay > m over the horizon.
// A pair's rows are listed together (a box–plane pair: its 8 corners). A plane carried by a moving
// body can sweep arbitrarily far points when it turns: its pairs are always candidates. Cost: O(S
// log S + K) for S proxies and K candidate pairs plus O(S P) for P planes, independent of the
// number of pairs. CandidateRows serializes concurrent callers (the broadphase is mutable state).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "contact/broadphase.h"
#include "contact/contact_manifold.h"
#include "contact/shapes.h"
#include "engine/constraint_block.h"
#include "engine/spatial_model.h"

namespace saltus::contact {

struct SpatialContactPair {
  std::string name;
  int body_a = engine::kGround;  // carries shape_a (engine::kGround: fixed in the world)
  Shape shape_a = Shape::Plane(Eigen::Vector3d::UnitZ(), 0.0);
  int body_b = 0;  // carries shape_b
  Shape shape_b = Shape::Sphere(0.1);
  double restitution = -1.0;  // Newton coefficient in [0, 1]; negative: the simulation's global one
};

class SpatialContacts : public engine::ConstraintBlock {
 public:
  // Validates every pair and throws std::invalid_argument naming it ("contact pair 'x': ..."):
  // non-empty unique name, bodies in [kGround, num_bodies), different, not both the ground,
  // restitution in [0, 1] or negative, a pair of shapes the manifold accepts (not two planes, not
  // a plane or a triangle mesh against a triangle mesh). Values, Jacobian and Gamma throw
  // std::invalid_argument if q (7 per body) or v (6 per body) has the wrong size.
  SpatialContacts(std::shared_ptr<const engine::SpatialModel> model,
                  std::vector<SpatialContactPair> pairs, DistanceOptions options = {});

  const std::vector<SpatialContactPair>& pairs() const { return pairs_; }
  // Pair and manifold feature of a local row.
  int RowPair(int row) const { return row_pair_[static_cast<std::size_t>(row)]; }
  int RowFeature(int row) const { return row_feature_[static_cast<std::size_t>(row)]; }
  // Gap, normal and witness points (world frame) of a local row at q.
  PairDistance Evaluate(const Eigen::VectorXd& q, int row) const;
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
  // Rows of the pairs the broadphase finds within margin + δ_a + δ_b (see above). Throws
  // std::invalid_argument if q or speed_bound has the wrong size, or horizon/margin < 0.
  void CandidateRows(const Eigen::VectorXd& q, const Eigen::VectorXd& speed_bound, double horizon,
                     double margin, std::vector<int>* rows) const override;
  // Number of distinct shapes in the broadphase.
  int num_proxies() const { return static_cast<int>(proxy_body_.size()); }

 private:
  Eigen::Isometry3d BodyPose(const Eigen::VectorXd& q, int body) const;
  // G row (1 × nv) of a local row at q, added into `out` (already zeroed).
  void JacobianRow(const Eigen::VectorXd& q, int row,
                   Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> out) const;
  double AnalyticGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;
  double DifferenceGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;
  void CheckSizes(const Eigen::VectorXd& q, const Eigen::VectorXd* v, const char* where) const;

  std::shared_ptr<const engine::SpatialModel> model_;
  std::vector<SpatialContactPair> pairs_;
  std::vector<ContactManifold> manifolds_;
  std::vector<engine::ConstraintRowInfo> infos_;
  std::vector<int> row_pair_, row_feature_;

  // Broadphase proxies (see CandidateRows): body and ρ of each proxy, the first row and row count
  // of each pair, and the pairs of each unordered proxy pair (key: lower id · 2³² + higher id).
  std::vector<int> proxy_body_;
  std::vector<double> proxy_rho_;
  std::vector<int> pair_first_row_, pair_num_rows_;
  std::unordered_map<unsigned long long, std::vector<int>> pairs_of_proxies_;
  std::vector<int> always_pairs_;  // pairs with a plane on a moving body: always candidates
  std::unique_ptr<Broadphase> broadphase_;  // mutable state behind a const interface
  std::unique_ptr<std::mutex> broadphase_mutex_;
};

}  // namespace saltus::contact

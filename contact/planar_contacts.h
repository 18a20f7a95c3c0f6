// Unilateral contacts between planar bodies (engine::PlanarModel), with analytic gap, normal and
// Jacobian row. Geometry is given in the frame of the body that carries it:
//
//   point–line  gap = n_a · (p_b − c_a)              (c_a a point of the line, n_a its unit normal,
//                                                      pointing to the free side)
//   disk–line   gap = n_a · (p_b − c_a) − r_b         (p_b the disk centre)
//   disk–disk   gap = ‖p_b − p_a‖ − r_a − r_b
//
// with p = r + R(θ) s for a point s of a body; body_a may be the ground (engine::kGround), or
// body_b (a point or disk fixed in the world touching a line or disk of a moving body), not both.
// The line is infinite; a point–line or disk–line gap is the signed distance to it.
// G is the derivative of the gap along v = (ẋ, ẏ, θ̇) of both bodies; γ = Ġ v, so that
// g̈ = G v̇ + γ (Haddouni et al. 2017, eq. 8; the rows are scleronomic, ∂g/∂t = 0). With
// ω the angular velocity of a body, ρ = R(θ) s its rotated point and J the rotation by π/2:
//
//   line:  n = R_a n_a, c = r_a + ρ_c,  G_b = [nᵀ, nᵀJρ_b],  G_a = [−nᵀ, (Jn)ᵀ(p_b − r_a)],
//          γ = 2 ω_a (Jn)·(ṗ_b − ċ) − ω_b² n·ρ_b + ω_a² n·ρ_c − ω_a² n·(p_b − c),
//   disks: d = p_b − p_a, n = d/‖d‖,  G_b = [nᵀ, nᵀJρ_b],  G_a = −[nᵀ, nᵀJρ_a],
//          γ = n·(ω_a² ρ_a − ω_b² ρ_b) + (‖ḋ‖² − (n·ḋ)²)/‖d‖.
//
// disk–beam   gap = ‖p_b − p_a‖ − r_a − r_b        (disk a against the beam of the flexible
//                                                    body b, whose faces are at r_b ≥ 0 from
//                                                    its centreline: half its thickness)
// where p_b = p(X*) is the centreline point nearest to the disk centre p_a, X* =
// engine::FlexibleBeam::NearestX (any point of the beam, between nodes too: Haddouni et al. 2017,
// Fig. 8, a beam under gravity on a cylinder). As p_b − p_a is normal to the centreline at X*
// (or X* is an end), the gap's derivative along q is that of the material point at X*
// (∂g/∂X* = 0): the disk–disk row with the material point X* of the beam (its elastic columns
// nᵀ A B(X*) included). X* moves with the beam; with w = ṗ_b − ṗ_a the material relative
// velocity, d = p_b − p_a, p_X = A ū_X, p_XX = A ū_XX and ṗ_X = ω J p_X + A B_X η̇ (the rate
// of p_X at fixed X; engine::BeamCurve), differentiating p_X·d = 0 gives
//   Ẋ* = −(ṗ_X·d + p_X·w)/(p_X·p_X + p_XX·d)    (0 when X* is an end),
// and g̈ = ṅ·w + n·(p̈_b + ṗ_X Ẋ* − p̈_a) with ṅ = (t·(w + p_X Ẋ*)/‖d‖) t, so γ is the disk–disk
// γ (with the node terms of the material point) plus (t·w)(t·p_X) Ẋ*/‖d‖ + (n·ṗ_X) Ẋ*.
// A frictional disk–beam contact's tangential row is the slip of the material points at the
// witness points, the beam's carried by the section at X* (the node rows below with the beam
// point X*); its γ_T, which would need Ẋ* in the witness and section terms too, is the central
// difference d/dε [G_T(q + ε v) v] at ε = 0 with ε = ∛(machine ε)/max(1, ‖v‖∞) (the step of
// the spatial contacts' difference γ; q̇ = v here), which moves X* with q.
//
// At a node of a flexible body b (node_b), ρ_b = A ū(X_k, η) and p_b gain the elastic terms of
// engine::PlanarPointState: G_b gets nᵀ ∂p_b/∂η on η and γ the term n·a_elastic.
// Coincident disk centres (‖d‖ = 0) have no normal: G and γ are NaN there (the gap is finite).
// One row per contact, named by the contact.
//
// Tangential rows (Coulomb friction, issue 17 §2). Every contact with friction μ > 0 gets one
// more row, kind kTangential, level kVelocity, named "<contact>.t", listed after ALL normal
// rows in contact order (so a frictionless block has exactly the rows above); the normal row's
// info carries μ and the tangential row's normal_row is the contact's index. With the unit
// tangent t = J n (n turned by +π/2) and the witness points of the two surfaces on the common
// normal,
//
//   x_b = p_b (point) or p_b − r_b n (disk),   x_a = x_b − g n (line: the foot of x_b on it)
//                                              or p_a + r_a n (disk a),
//
// (x_b − x_a = g n; the two coincide at g = 0, and away from contact each point stays on its own
// surface, as the spatial rows' witness points do) the row is the tangential relative velocity
// of the two material points there, ġ_T = t·(v_B(x_b) − v_A(x_a)), v_X(x) = ṙ_X + ω_X J(x − r_X):
//
//   G_T,b = [tᵀ, n·(x_b − r_b)],   G_T,a = −[tᵀ, n·(x_a − r_a)]      (t·J y = n·y),
//
// and Values() = 0 (a velocity-level row has no position function). Differentiating at v̇ = 0
// (ṙ, ω constant) with ẋ the rate of the geometric contact point (not the material velocity):
//
//   γ_T = ṫ·(v_B(x_b) − v_A(x_a)) + ω_b n·(ẋ_b − ṙ_b) − ω_a n·(ẋ_a − ṙ_a),
//
// where ẋ − v_X(x) is the rolling of the contact point over the surface of X. The turning of
// t = J n and the contact-point rates are
//   line:  ṅ = ω_a t, ṫ = −ω_a n;   ẋ_b = v_B(p_b) − r_b ṅ,   ẋ_a = ẋ_b − ġ n − g ṅ,
//   disks: ṅ = (t·ḋ/‖d‖) t, ṫ = −(t·ḋ/‖d‖) n, ḋ = v_B(p_b) − v_A(p_a);
//          ẋ_b = v_B(p_b) − r_b ṅ,  ẋ_a = v_A(p_a) + r_a ṅ,
// with ġ = n·(v_B(x_b) − v_A(x_a)) the normal rate (the point's r_b = 0).
//
// Tangential rows at a node of a flexible body b. The point or disk is carried by the node's
// cross-section: centre p_b (engine::PlanarPointState), rate Ω_b = ω_b + ψ η̇ (the section angle
// θ + ψ η), so v_B(x) = ṗ_b + Ω_b J (x − p_b) with ṗ_b = ṙ_b + ω_b J ρ_b + (∂p_b/∂η) η̇. Then
//
//   G_T,b = [tᵀ, n·(x_b − r_b), tᵀ ∂p_b/∂η + n·(x_b − p_b) ψ]     (n·(x_b − p_b) = −r_b),
//   γ_T   = ṫ·Δv + t·a_b + Ω_b n·(ẋ_b − ṗ_b) − ω_a n·(ẋ_a − ṙ_a),
//
// with a_b = −ω_b² ρ_b + a_elastic the velocity part of p̈_b and ẋ_b = ṗ_b − r_b ṅ; for a rigid
// body (p_b → r_b, Ω_b → ω_b, a_b → 0) these are the rows above.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "contact/contact_site.h"
#include "engine/constraint_block.h"
#include "engine/planar_model.h"

namespace saltus::contact {

enum class PlanarContactType { kPointLine, kDiskLine, kDiskDisk, kDiskBeam };

struct PlanarContact {
  std::string name;
  PlanarContactType type = PlanarContactType::kDiskLine;
  int body_a = engine::kGround;                         // carries the line (or disk a)
  int body_b = 0;                                       // carries the point (or disk b)
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();    // line point or disk-a centre, frame a
  Eigen::Vector2d normal_a = Eigen::Vector2d::UnitY();  // line normal, frame a (normalized)
  double radius_a = 0.0;                                // disk a radius (disk–disk)
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();    // point or disk-b centre, frame b
  double radius_b = 0.0;  // disk b radius (disk–line, disk–disk); disk–beam: half-thickness
  double restitution = -1.0;  // [0, 1]; negative: the global one
  double friction = 0.0;      // Coulomb μ ≥ 0; > 0 adds the tangential row "<name>.t"
  // A node of a flexible body_b (−1: point_b of the body frame): the point or disk centre is
  // then that node of the deformed centreline (point_b must be zero), and G has the body's
  // elastic columns (engine::PlanarModel::Point).
  int node_b = -1;
};

class PlanarContacts : public engine::ConstraintBlock {
 public:
  // Validates every contact (non-empty unique name, bodies exist and differ, not both ground,
  // finite geometry, radii ≥ 0 and > 0 for disks, non-zero normal, restitution in [0, 1] or
  // negative, friction finite and ≥ 0; disk–beam: body_b flexible, no node_b or point_b, no
  // friction) and throws std::invalid_argument naming it. Line normals
  // are stored normalized. node_b must be a node of a flexible body_b (with point_b zero).
  // Values, Jacobian and Gamma throw std::invalid_argument if q or v does not have the model's
  // num_coordinates() entries.
  PlanarContacts(std::shared_ptr<const engine::PlanarModel> model,
                 std::vector<PlanarContact> contacts);

  const std::vector<PlanarContact>& contacts() const { return contacts_; }
  // Normal rows [0, contacts), then the tangential rows of the frictional contacts.
  int num_rows() const override { return static_cast<int>(infos_.size()); }
  // The contact of a row (normal or tangential).
  int RowContact(int row) const;
  const engine::ConstraintRowInfo& row_info(int i) const override { return infos_[i]; }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override;
  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override;
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override;
  // g and ġ = G v from each row's geometry, without forming G (the event loop's gap and slip
  // samples); false for rows at nodes or beam points (their rates need the modal columns).
  bool ValuesAndRates(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> g,
                      Eigen::Ref<Eigen::VectorXd> g_dot) const override;
  // The contact point and normal of contact `i` at q (contact/contact_site.h): witness points
  // p_b and its foot on the line (point–line), p_b − r_b n and its foot (disk–line),
  // p_a + r_a n and p_b − r_b n (disk–disk). Throws std::out_of_range for a bad index.
  ContactSite Site(const Eigen::VectorXd& q, int i) const;

 private:
  // γ of the local row `row` as the central difference of its G v along q + ε v
  // (header, disk–beam friction).
  double DifferenceGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;

  std::shared_ptr<const engine::PlanarModel> model_;
  std::vector<PlanarContact> contacts_;
  std::vector<engine::ConstraintRowInfo> infos_;
  std::vector<int> tangent_contact_;  // contact of tangential row contacts_.size() + k
  std::vector<char> rotation_free_;   // per contact: its normal row needs no R(θ) (Jacobian)
  std::uint64_t memo_id_;             // this object's key in the per-thread geometry memo
};

}  // namespace saltus::contact

// Constraint and contact forces of a run at an output time, for the result writers (VTK frames,
// HDF5; docs/output-formats.md) and the facade (saltus::Simulation::ContactForces).
//
// The rows are those of the simulation's current phase (events::Simulation::active_rows(): the
// joints and drivers B, the closed contacts and, with friction, the tangential rows of the
// sticking ones); their multipliers λ at the output's (t, q, v) come from the index-1 solve
//   M v̇ = F + Hᵀλ,   G v̇ + γ = 0
// (Haddouni et al. 2017, eq. 8-9; engine::ConstrainedDynamics) on the system with the phase's
// sliding contacts (engine::SlidingFrictionView: H_n = G_n − μ d·G_T on a sliding contact's normal
// row, H = G elsewhere). Output times between events share the phase's modes (events::Simulation::
// ContactForces gives them, with the slip directions), so λ is that of the frozen active set.
//
// For every closed contact (a unilateral row of the phase) an arrow with its contact point
// (contact::ContactSite, the midpoint of the witness points), its mode and its forces:
//   normal λ_N                     its row's multiplier
//   tangential λ_T (basis of its tangential rows, one in the plane, two in space)
//                                  stick: the multipliers of its tangential rows;
//                                  slip: −μ λ_N d (d the phase's slip direction in the plane,
//                                  the current ġ_T/‖ġ_T‖ in space; engine/sliding_friction.h);
//                                  closed (frictionless): 0
// and as vectors on the contact's body b (world frame):
//   normal_force       λ_N n                        (n the contact normal from a to b)
//   tangential_force   Σ_k λ_T,k G_T,k,b  (or −Σ_k λ_T,k G_T,k,a when b is the ground)
// G_T,k,b being tangential row k's Jacobian on the translational velocity of body b: the
// direction in which the row pushes b. Rows of blocks other than contact::PlanarContacts and
// contact::SpatialContacts have no point and get no arrow.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "contact/planar_contacts.h"
#include "contact/spatial_contacts.h"
#include "engine/constrained_dynamics.h"
#include "engine/mechanical_system.h"
#include "engine/sliding_friction.h"
#include "events/simulation.h"

namespace saltus::tools {

class ContactForces {
 public:
  struct Arrow {
    int row = 0;   // the contact's unilateral row (global)
    int body = 0;  // body b of the contact (engine::kGround when b is the ground)
    Eigen::Vector3d point = Eigen::Vector3d::Zero();             // world (z = 0 in the plane)
    Eigen::Vector3d normal_force = Eigen::Vector3d::Zero();      // on body b, world
    Eigen::Vector3d tangential_force = Eigen::Vector3d::Zero();  // on body b, world
    contact::ContactMode mode = contact::ContactMode::kClosed;   // closed, stick or slip
    double normal = 0;                                           // λ_N (N)
    // λ_T and the slip direction d (unit when sliding, else 0) in the basis of the contact's
    // tangential rows (num_tangent_rows of them; the plane uses the first entry).
    Eigen::Vector2d tangential = Eigen::Vector2d::Zero();
    Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();
    int num_tangent_rows = 0;
  };

  // `system` gives the contacts' geometry (its contact blocks); the multipliers are solved on
  // simulation.system(), the system the simulation integrates, which may wrap `system` with the
  // same rows (the facade's host forces). Both must outlive this object. Throws
  // std::invalid_argument when the row counts differ.
  ContactForces(const engine::MechanicalSystem& system, const events::Simulation& simulation);

  // λ of the simulation's active rows at (t, q, v) and the arrows of the closed contacts, with
  // the modes of the simulation's current phase.
  void Evaluate(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const std::vector<int>& rows() const { return rows_; }     // active rows, ascending
  const Eigen::VectorXd& lambda() const { return lambda_; }  // per row; NaN if the solve failed
  const std::vector<Arrow>& arrows() const { return arrows_; }

 private:
  contact::ContactSite Site(const Eigen::VectorXd& q, int row) const;
  // The sliding contacts of the simulation's phase into view_, and each closed contact's mode and
  // slip direction (by row) into modes_.
  void UpdateModes();
  // λ at active row `row` (NaN when it is not active).
  double LambdaOf(int row) const;
  // The arrow of closed contact `row` from λ (mode and forces; header).
  Arrow MakeArrow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, int row) const;
  // Adds λ times the tangential row's direction on body b to the arrow's tangential force.
  void AddTangential(double t, const Eigen::VectorXd& q, int row, double lambda,
                     const contact::ContactSite& site, Arrow* arrow) const;

  const engine::MechanicalSystem& system_;
  const events::Simulation& simulation_;
  engine::SlidingFrictionView view_;  // system_ with the phase's sliding friction forces
  engine::ConstrainedDynamics dynamics_;
  bool frictional_ = false;                              // some unilateral row has μ > 0
  std::vector<events::Simulation::ContactForce> modes_;  // per closed contact (frictional_ only)
  std::vector<int> rows_;
  Eigen::VectorXd vdot_, lambda_;
  std::vector<Arrow> arrows_;
  // Per global row: the contact block holding its contact (the row itself, or for a tangential
  // row its normal row; null for other blocks) and that contact's local row there.
  std::vector<const contact::PlanarContacts*> planar_block_;
  std::vector<const contact::SpatialContacts*> spatial_block_;
  std::vector<int> local_row_;
};

}  // namespace saltus::tools

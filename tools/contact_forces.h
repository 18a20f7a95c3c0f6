// Constraint and contact forces of a run at an output time, for the result writers (VTK frames,
// HDF5; docs/output-formats.md).
//
// The rows are those of the simulation's current phase (events::Simulation::active_rows(): the
// joints and drivers B, the closed contacts and, with friction, the tangential rows of the
// sticking ones); their multipliers λ at the output's (t, q, v) come from the index-1 solve
// M v̇ − Gᵀλ = F, G v̇ + γ = 0 (Haddouni et al. 2017, eq. 8-9; engine::ConstrainedDynamics).
// Output times between events share the phase's rows, so λ is that of the frozen active set.
//
// For every active contact (a unilateral row among them) an arrow: the contact point
// (contact::ContactSite, the midpoint of the witness points) and the forces on the contact's
// body b (world frame):
//   normal       λ_N n                        (n the contact normal from a to b)
//   tangential   Σ_T λ_T G_T,b  (or −Σ_T λ_T G_T,a when b is the ground)
// summed over the active tangential rows whose normal row (ConstraintRowInfo::normal_row) is
// that contact, G_T,b being a row's Jacobian on the translational velocity of body b: the
// direction in which the row pushes b. Rows of blocks other than contact::PlanarContacts and
// contact::SpatialContacts have no point and get no arrow.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "contact/planar_contacts.h"
#include "contact/spatial_contacts.h"
#include "engine/constrained_dynamics.h"
#include "engine/mechanical_system.h"
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
  };

  // `system` and `simulation` must outlive this object.
  ContactForces(const engine::MechanicalSystem& system, const events::Simulation& simulation);

  // λ of the simulation's active rows at (t, q, v) and the arrows of the active contacts.
  void Evaluate(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const std::vector<int>& rows() const { return rows_; }     // active rows, ascending
  const Eigen::VectorXd& lambda() const { return lambda_; }  // per row; NaN if the solve failed
  const std::vector<Arrow>& arrows() const { return arrows_; }

 private:
  contact::ContactSite Site(const Eigen::VectorXd& q, int row) const;
  // Adds λ times the tangential row's direction on body b to the arrow's tangential force.
  void AddTangential(double t, const Eigen::VectorXd& q, int row, double lambda,
                     const contact::ContactSite& site, Arrow* arrow) const;

  const engine::MechanicalSystem& system_;
  const events::Simulation& simulation_;
  engine::ConstrainedDynamics dynamics_;
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

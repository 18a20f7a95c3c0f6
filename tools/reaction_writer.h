// reactions.csv of `saltus run --reactions` (spatial scenes; documented for users in
// docs/scene-format.md, "Output files"): the force and torque each joint exerts, and the effort
// of each driver, at the same times as the output rows of trajectory.csv (issue 3 §2: driving
// torques and bearing loads after a step).
//
// At each row the multipliers λ are those of the index-1 solve at (t, q, v) on the bilateral rows
// and the closed contacts (Haddouni et al. 2017, eq. 8-9; as /forces/lambda of results.h5), and
// each joint's generalized force Gᵀλ of its rows and of its drivers' rows is reduced to the
// joint point of one body (engine::SpatialMultibodySystem::JointReactions):
//
//   <joint>.fx .fy .fz   force the joint exerts on body_b (N, world frame); on body_a when body_b
//                        is the ground
//   <joint>.tx .ty .tz   torque it exerts on that body about the joint point on it (N·m, world
//                        frame); for a driven joint it includes the driver's torque or force
//   <driver>.effort      the driver's multiplier: the torque (N·m, angle drivers) or force (N,
//                        displacement drivers) it applies to body_b along the joint axis z_a,
//                        positive in the direction of increasing joint coordinate
//
// A row whose index-1 solve fails is written with NaN reactions.
#pragma once

#include <Eigen/Dense>
#include <ostream>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"

namespace saltus::tools {

class ReactionWriter : public events::Observer {
 public:
  // Writes the header. `simulation` gives the closed contacts at each row; rows_at_steps: also a
  // row at every accepted step (runs without an output grid). `system`, `simulation` and `out`
  // must outlive the writer.
  ReactionWriter(const engine::SpatialMultibodySystem& system, const events::Simulation& simulation,
                 std::ostream& out, bool rows_at_steps = false);

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // A second row at the same t as the previous one (the initial state written by the caller and
  // again by the simulation) is skipped.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;

  long rows() const { return rows_; }

 private:
  void WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const engine::SpatialMultibodySystem& system_;
  const events::Simulation& simulation_;
  std::ostream& out_;
  bool rows_at_steps_;
  engine::ConstrainedDynamics dynamics_;
  std::vector<int> bilateral_, active_;
  std::vector<int> driver_rows_;  // global row of each driver
  Eigen::VectorXd vdot_, lambda_;
  std::string line_;
  long rows_ = 0;
  bool have_last_ = false;
  double last_t_ = 0;
};

}  // namespace saltus::tools

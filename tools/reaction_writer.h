// reactions.csv of `saltus run --reactions` (planar and spatial scenes; documented for users in
// docs/scene-format.md, "Output files"): the force and torque each joint exerts, and the effort
// of each driver, at the same times as the output rows of trajectory.csv (issue 3 §2: driving
// torques and bearing loads after a step).
//
// At each row the multipliers λ are those of the index-1 solve at (t, q, v) on the bilateral rows
// and the closed contacts (Haddouni et al. 2017, eq. 8-9; as /forces/lambda of results.h5), and
// each joint's generalized force Gᵀλ of its rows and of its drivers' rows is reduced to the
// joint point of one body (engine::SpatialMultibodySystem::JointReactions,
// engine::PlanarMultibodySystem::JointReactions):
//
//   spatial <joint>.fx .fy .fz   force the joint exerts on body_b (N, world frame); on body_a
//   planar  <joint>.fx .fy       when body_b is the ground
//   spatial <joint>.tx .ty .tz   torque it exerts on that body about the joint point on it (N·m,
//   planar  <joint>.tz           world frame; planar: about +z); for a driven joint it includes
//                                the driver's torque or force (a planar angle_driver joint is a
//                                joint: its .tz is the driving torque, its force zero)
//   <driver>.effort              the driver's multiplier: the torque (N·m, angle drivers) or force
//                                (N, displacement drivers) it applies to body_b along the joint
//                                axis (spatial z_a, planar u_a; planar angles about +z), positive
//                                in the direction of increasing joint coordinate
//
// A row whose index-1 solve fails is written with NaN reactions.
#pragma once

#include <Eigen/Dense>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"

namespace saltus::tools {

// One joint's reaction in a representation shared by planar and spatial models (the columns of
// reactions.csv above, and saltus::Simulation::JointReactions of the embedding facade).
struct JointLoad {
  std::string joint;  // the joint's name
  std::string body;   // the body it acts on: body_b, or body_a when body_b is the ground
  // Force on `body` (N, world frame); planar models fill (fx, fy, 0).
  Eigen::Vector3d force = Eigen::Vector3d::Zero();
  // Torque on `body` about the joint point on it (N·m, world frame; for a driven joint it
  // includes the driver's); planar models fill (0, 0, tz).
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();
};

// A driver's multiplier: the torque (N·m, angle drivers) or force (N, displacement drivers) it
// applies to body_b of its joint along the joint axis, positive towards increasing joint
// coordinate; zero when its row is not among the rows passed.
struct DriverEffort {
  std::string driver;  // the driver's name
  std::string joint;   // the joint it drives
  double effort = 0.0;
};

struct JointLoads {
  std::vector<JointLoad> joints;      // in the model's joint order
  std::vector<DriverEffort> drivers;  // in the model's driver order
};

// Reduces the multipliers λ of some constraint rows (e.g. the index-1 solve on the bilateral rows
// and the closed contacts) to JointLoads, with engine::PlanarMultibodySystem::JointReactions or
// engine::SpatialMultibodySystem::JointReactions; rows that are not joint or driver rows are
// ignored.
class JointLoadEvaluator {
 public:
  // `system` (which must outlive the evaluator) must be a PlanarMultibodySystem or a
  // SpatialMultibodySystem; otherwise throws std::invalid_argument.
  explicit JointLoadEvaluator(const engine::MechanicalSystem& system);

  bool planar() const { return planar_ != nullptr; }
  // Names, bodies and drivers with zero values.
  const JointLoads& Empty() const { return empty_; }
  // Fills *out (reusing it when it already has this model's layout). Throws
  // std::invalid_argument if lambda and rows differ in size.
  void Evaluate(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                const Eigen::VectorXd& lambda, JointLoads* out) const;

 private:
  const engine::PlanarMultibodySystem* planar_ = nullptr;
  const engine::SpatialMultibodySystem* spatial_ = nullptr;
  JointLoads empty_;
  std::vector<bool> on_b_;        // per joint: the reaction on body_b (else on body_a)
  std::vector<int> driver_rows_;  // global row of each driver
};

class ReactionWriter : public events::Observer {
 public:
  // Writes the header. `simulation` gives the closed contacts at each row; rows_at_steps: also a
  // row at every accepted step (runs without an output grid). `system`, `simulation` and `out`
  // must outlive the writer.
  ReactionWriter(const engine::SpatialMultibodySystem& system, const events::Simulation& simulation,
                 std::ostream& out, bool rows_at_steps = false);
  ReactionWriter(const engine::PlanarMultibodySystem& system, const events::Simulation& simulation,
                 std::ostream& out, bool rows_at_steps = false);

  void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;
  // A second row at the same t as the previous one (the initial state written by the caller and
  // again by the simulation) is skipped.
  void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) override;

  long rows() const { return rows_; }

 private:
  ReactionWriter(const engine::MechanicalSystem& system, const events::Simulation& simulation,
                 std::ostream& out, bool rows_at_steps);
  void WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  const events::Simulation& simulation_;
  std::ostream& out_;
  bool rows_at_steps_;
  JointLoadEvaluator evaluator_;
  engine::ConstrainedDynamics dynamics_;
  std::vector<int> bilateral_, active_;
  Eigen::VectorXd vdot_, lambda_;
  JointLoads loads_;
  std::string line_;
  long rows_ = 0;
  bool have_last_ = false;
  double last_t_ = 0;
};

}  // namespace saltus::tools

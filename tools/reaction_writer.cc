#include "tools/reaction_writer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "tools/json_writer.h"

namespace saltus::tools {
namespace {

// The JointLoad and on_b_ entry of a joint between body_a and body_b (kGround or an index into
// `bodies`): the reaction is reported on body_b unless it is the ground.
template <class Joint, class Body>
JointLoad NamedLoad(const Joint& joint, const std::vector<Body>& bodies, bool* on_b) {
  *on_b = joint.body_b != engine::kGround;
  const int body = *on_b ? joint.body_b : joint.body_a;
  JointLoad load;
  load.joint = joint.name;
  load.body = body == engine::kGround ? "ground" : bodies[static_cast<std::size_t>(body)].name;
  return load;
}

}  // namespace

JointLoadEvaluator::JointLoadEvaluator(const engine::MechanicalSystem& system)
    : planar_(dynamic_cast<const engine::PlanarMultibodySystem*>(&system)),
      spatial_(dynamic_cast<const engine::SpatialMultibodySystem*>(&system)) {
  bool on_b = true;
  if (planar_ != nullptr) {
    const engine::PlanarModel& model = planar_->model();
    for (const engine::PlanarJoint& j : model.joints()) {
      empty_.joints.push_back(NamedLoad(j, model.bodies(), &on_b));
      on_b_.push_back(on_b);
    }
    for (std::size_t d = 0; d < model.drivers().size(); ++d) {
      const engine::PlanarDriver& driver = model.drivers()[d];
      empty_.drivers.push_back(
          {driver.name, model.joints()[static_cast<std::size_t>(driver.joint)].name, 0.0});
      driver_rows_.push_back(model.DriverRow(static_cast<int>(d)));
    }
  } else if (spatial_ != nullptr) {
    const engine::SpatialModel& model = spatial_->model();
    for (const engine::SpatialJoint& j : model.joints()) {
      empty_.joints.push_back(NamedLoad(j, model.bodies(), &on_b));
      on_b_.push_back(on_b);
    }
    for (const engine::SpatialDriver& driver : model.drivers()) {
      int row = -1;
      for (int r = 0; r < spatial_->num_joint_rows(); ++r) {
        if (spatial_->constraint_info(r).name == driver.name) row = r;
      }
      if (row < 0)
        throw std::logic_error("JointLoadEvaluator: no row for driver '" + driver.name + "'");
      empty_.drivers.push_back(
          {driver.name, model.joints()[static_cast<std::size_t>(driver.joint)].name, 0.0});
      driver_rows_.push_back(row);
    }
  } else {
    throw std::invalid_argument(
        "joint reactions: the system is not a planar or spatial multibody system (it has no "
        "joints)");
  }
}

void JointLoadEvaluator::Evaluate(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                                  const Eigen::VectorXd& lambda, JointLoads* out) const {
  if (lambda.size() != static_cast<Eigen::Index>(rows.size())) {
    throw std::invalid_argument("joint reactions: lambda has size " +
                                std::to_string(lambda.size()) + ", expected " +
                                std::to_string(rows.size()));
  }
  if (out->joints.size() != empty_.joints.size() || out->drivers.size() != empty_.drivers.size()) {
    *out = empty_;
  }
  if (planar_ != nullptr) {
    const std::vector<engine::PlanarJointReaction> reactions =
        planar_->JointReactions(t, q, rows, lambda);
    for (std::size_t j = 0; j < reactions.size(); ++j) {
      const engine::PlanarJointReaction& r = reactions[j];
      const Eigen::Vector2d& f = on_b_[j] ? r.force_on_b : r.force_on_a;
      out->joints[j].force = Eigen::Vector3d(f.x(), f.y(), 0.0);
      out->joints[j].torque = Eigen::Vector3d(0.0, 0.0, on_b_[j] ? r.torque_on_b : r.torque_on_a);
    }
  } else {
    const std::vector<engine::JointReaction> reactions =
        spatial_->JointReactions(t, q, rows, lambda);
    for (std::size_t j = 0; j < reactions.size(); ++j) {
      const engine::JointReaction& r = reactions[j];
      out->joints[j].force = on_b_[j] ? r.force_on_b : r.force_on_a;
      out->joints[j].torque = on_b_[j] ? r.torque_on_b : r.torque_on_a;
    }
  }
  for (std::size_t d = 0; d < driver_rows_.size(); ++d) {
    const auto it = std::find(rows.begin(), rows.end(), driver_rows_[d]);
    out->drivers[d].effort = it == rows.end() ? 0.0 : lambda[std::distance(rows.begin(), it)];
  }
}

ReactionWriter::ReactionWriter(const engine::SpatialMultibodySystem& system,
                               const events::Simulation& simulation, std::ostream& out,
                               bool rows_at_steps)
    : ReactionWriter(static_cast<const engine::MechanicalSystem&>(system), simulation, out,
                     rows_at_steps) {}

ReactionWriter::ReactionWriter(const engine::PlanarMultibodySystem& system,
                               const events::Simulation& simulation, std::ostream& out,
                               bool rows_at_steps)
    : ReactionWriter(static_cast<const engine::MechanicalSystem&>(system), simulation, out,
                     rows_at_steps) {}

ReactionWriter::ReactionWriter(const engine::MechanicalSystem& system,
                               const events::Simulation& simulation, std::ostream& out,
                               bool rows_at_steps)
    : simulation_(simulation),
      out_(out),
      rows_at_steps_(rows_at_steps),
      evaluator_(system),
      dynamics_(system),
      bilateral_(system.RowsOfKind(engine::ConstraintKind::kBilateral)),
      loads_(evaluator_.Empty()) {
  line_ = "t";
  const std::vector<const char*> columns =
      evaluator_.planar() ? std::vector<const char*>{".fx", ".fy", ".tz"}
                          : std::vector<const char*>{".fx", ".fy", ".fz", ".tx", ".ty", ".tz"};
  for (const JointLoad& j : loads_.joints) {
    for (const char* c : columns) line_ += "," + j.joint + c;
  }
  for (const DriverEffort& d : loads_.drivers) line_ += "," + d.driver + ".effort";
  out_ << line_ << '\n';
}

void ReactionWriter::WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const std::vector<int>& closed = simulation_.closed_rows();
  active_.clear();
  std::merge(bilateral_.begin(), bilateral_.end(), closed.begin(), closed.end(),
             std::back_inserter(active_));
  active_.erase(std::unique(active_.begin(), active_.end()), active_.end());
  const engine::DynamicsStatus status = dynamics_.Solve(t, q, v, active_, &vdot_, &lambda_);
  const auto append = [&](double x) {
    line_ += ',';
    line_ += FormatDouble(status.ok ? x : std::nan(""));  // NaN when the solve failed
  };
  line_ = FormatDouble(t);
  if (status.ok) evaluator_.Evaluate(t, q, active_, lambda_, &loads_);
  for (const JointLoad& j : loads_.joints) {
    if (evaluator_.planar()) {
      for (const double x : {j.force.x(), j.force.y(), j.torque.z()}) append(x);
    } else {
      for (int k = 0; k < 3; ++k) append(j.force[k]);
      for (int k = 0; k < 3; ++k) append(j.torque[k]);
    }
  }
  for (const DriverEffort& d : loads_.drivers) append(d.effort);
  out_ << line_ << '\n';
  ++rows_;
  have_last_ = true;
  last_t_ = t;
}

void ReactionWriter::OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (rows_at_steps_ && !(have_last_ && t == last_t_)) WriteRow(t, q, v);
}

void ReactionWriter::OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (!(have_last_ && t == last_t_)) WriteRow(t, q, v);
}

}  // namespace saltus::tools

#include "tools/reaction_writer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "tools/json_writer.h"

namespace saltus::tools {

ReactionWriter::ReactionWriter(const engine::SpatialMultibodySystem& system,
                               const events::Simulation& simulation, std::ostream& out,
                               bool rows_at_steps)
    : system_(system),
      simulation_(simulation),
      out_(out),
      rows_at_steps_(rows_at_steps),
      dynamics_(system),
      bilateral_(system.RowsOfKind(engine::ConstraintKind::kBilateral)) {
  const engine::SpatialModel& model = system.model();
  for (const engine::SpatialDriver& d : model.drivers()) {
    int row = -1;
    for (int r = 0; r < system.num_joint_rows(); ++r) {
      if (system.constraint_info(r).name == d.name) row = r;
    }
    if (row < 0) throw std::logic_error("ReactionWriter: no row for driver '" + d.name + "'");
    driver_rows_.push_back(row);
  }
  line_ = "t";
  for (const engine::SpatialJoint& j : model.joints()) {
    for (const char* c : {".fx", ".fy", ".fz", ".tx", ".ty", ".tz"}) line_ += "," + j.name + c;
  }
  for (const engine::SpatialDriver& d : model.drivers()) line_ += "," + d.name + ".effort";
  out_ << line_ << '\n';
}

void ReactionWriter::WriteRow(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const std::vector<int>& closed = simulation_.closed_rows();
  active_.clear();
  std::merge(bilateral_.begin(), bilateral_.end(), closed.begin(), closed.end(),
             std::back_inserter(active_));
  active_.erase(std::unique(active_.begin(), active_.end()), active_.end());
  const engine::DynamicsStatus status = dynamics_.Solve(t, q, v, active_, &vdot_, &lambda_);
  const engine::SpatialModel& model = system_.model();
  const auto append = [&](double x) {
    line_ += ',';
    line_ += FormatDouble(status.ok ? x : std::nan(""));
  };
  line_ = FormatDouble(t);
  if (status.ok) {
    const std::vector<engine::JointReaction> reactions =
        system_.JointReactions(t, q, active_, lambda_);
    for (std::size_t j = 0; j < reactions.size(); ++j) {
      const engine::JointReaction& r = reactions[j];
      const bool on_b = model.joints()[j].body_b != engine::kGround;
      const Eigen::Vector3d& f = on_b ? r.force_on_b : r.force_on_a;
      const Eigen::Vector3d& n = on_b ? r.torque_on_b : r.torque_on_a;
      for (int k = 0; k < 3; ++k) append(f[k]);
      for (int k = 0; k < 3; ++k) append(n[k]);
    }
  } else {
    for (std::size_t j = 0; j < 6 * model.joints().size(); ++j) append(0.0);
  }
  for (int row : driver_rows_) {
    const auto it = std::find(active_.begin(), active_.end(), row);
    append(it == active_.end() ? 0.0 : lambda_[std::distance(active_.begin(), it)]);
  }
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

#include "tools/contact_forces.h"

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>

namespace saltus::tools {

ContactForces::ContactForces(const engine::MechanicalSystem& system,
                             const events::Simulation& simulation)
    : system_(system), simulation_(simulation), view_(simulation.system()), dynamics_(view_) {
  if (simulation.system().num_constraints() != system.num_constraints()) {
    throw std::invalid_argument("ContactForces: the simulation's system has other rows");
  }
  const auto m = static_cast<std::size_t>(system.num_constraints());
  planar_block_.assign(m, nullptr);
  spatial_block_.assign(m, nullptr);
  local_row_.assign(m, -1);
  int row = 0;
  for (const auto& block : system.constraint_blocks()) {
    const auto* planar = dynamic_cast<const contact::PlanarContacts*>(block.get());
    const auto* spatial = dynamic_cast<const contact::SpatialContacts*>(block.get());
    for (int local = 0; local < block->num_rows(); ++local, ++row) {
      const engine::ConstraintRowInfo& info = block->row_info(local);
      if (info.kind == engine::ConstraintKind::kBilateral) continue;
      if (info.kind == engine::ConstraintKind::kUnilateral && info.friction > 0) frictional_ = true;
      const auto r = static_cast<std::size_t>(row);
      planar_block_[r] = planar;
      spatial_block_[r] = spatial;
      local_row_[r] = info.kind == engine::ConstraintKind::kUnilateral ? local : info.normal_row;
    }
  }
}

void ContactForces::Evaluate(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  rows_ = simulation_.active_rows();
  UpdateModes();
  const engine::DynamicsStatus status = dynamics_.Solve(t, q, v, rows_, &vdot_, &lambda_);
  if (!status.ok) lambda_.setConstant(std::numeric_limits<double>::quiet_NaN());
  arrows_.clear();
  for (int row : simulation_.closed_rows()) {
    const auto r = static_cast<std::size_t>(row);
    if (planar_block_[r] == nullptr && spatial_block_[r] == nullptr) continue;
    arrows_.push_back(MakeArrow(t, q, v, row));
  }
}

void ContactForces::UpdateModes() {
  modes_.clear();
  if (!frictional_) return;
  modes_ = simulation_.ContactForces();
  // The phase's sliding set as the event loop builds it (events/contact_modes.cc): the plane's
  // fixed sign, the current slip direction in space with the phase's as fallback.
  std::vector<engine::SlidingContact> sliding;
  for (const events::Simulation::ContactForce& c : modes_) {
    if (c.mode != contact::ContactMode::kSlip) continue;
    const auto k = static_cast<Eigen::Index>(system_.TangentRows(c.row).size());
    engine::SlidingContact s;
    s.normal_row = c.row;
    s.mu = system_.constraint_info(c.row).friction;
    s.mode = k == 1 ? engine::SlipDirection::kFixed : engine::SlipDirection::kCurrent;
    s.direction = c.slip_direction.head(k);
    sliding.push_back(std::move(s));
  }
  view_.SetSlidingContacts(std::move(sliding));
}

double ContactForces::LambdaOf(int row) const {
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), row);
  if (it == rows_.end() || *it != row) return std::numeric_limits<double>::quiet_NaN();
  return lambda_[it - rows_.begin()];
}

ContactForces::Arrow ContactForces::MakeArrow(double t, const Eigen::VectorXd& q,
                                              const Eigen::VectorXd& v, int row) const {
  const contact::ContactSite site = Site(q, row);
  Arrow a;
  a.row = row;
  a.body = site.body_b;
  a.point = site.point;
  a.normal = LambdaOf(row);
  a.normal_force = a.normal * site.normal;
  const std::span<const int> tangents = system_.TangentRows(row);
  a.num_tangent_rows = static_cast<int>(std::min<std::size_t>(tangents.size(), 2));
  const auto mode =
      std::find_if(modes_.begin(), modes_.end(), [row](const auto& c) { return c.row == row; });
  if (mode != modes_.end()) a.mode = mode->mode;
  if (a.mode == contact::ContactMode::kStick) {
    for (int k = 0; k < a.num_tangent_rows; ++k) a.tangential[k] = LambdaOf(tangents[k]);
  } else if (a.mode == contact::ContactMode::kSlip) {
    const auto& sliding = view_.sliding_contacts();
    const auto s = std::find_if(sliding.begin(), sliding.end(),
                                [row](const auto& c) { return c.normal_row == row; });
    Eigen::VectorXd d;
    view_.SlipDirectionAt(static_cast<std::size_t>(s - sliding.begin()), t, q, v, &d);
    a.slip_direction.head(d.size()) = d;
    a.tangential = -system_.constraint_info(row).friction * a.normal * a.slip_direction;
  }
  for (int k = 0; k < a.num_tangent_rows; ++k) {
    AddTangential(t, q, tangents[k], a.tangential[k], site, &a);
  }
  return a;
}

contact::ContactSite ContactForces::Site(const Eigen::VectorXd& q, int row) const {
  const auto r = static_cast<std::size_t>(row);
  return planar_block_[r] ? planar_block_[r]->Site(q, local_row_[r])
                          : spatial_block_[r]->Site(q, local_row_[r]);
}

void ContactForces::AddTangential(double t, const Eigen::VectorXd& q, int row, double lambda,
                                  const contact::ContactSite& site, Arrow* arrow) const {
  Eigen::MatrixXd G;
  const int rows[] = {row};
  system_.ConstraintJacobian(t, q, rows, &G);
  const bool on_b = site.column_b >= 0;
  const int column = on_b ? site.column_b : site.column_a;
  const int dim = planar_block_[static_cast<std::size_t>(row)] ? 2 : 3;
  arrow->tangential_force.head(dim) +=
      (on_b ? lambda : -lambda) * G.row(0).segment(column, dim).transpose();
}

}  // namespace saltus::tools

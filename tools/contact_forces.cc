#include "tools/contact_forces.h"

#include <limits>
#include <unordered_map>

namespace saltus::tools {

ContactForces::ContactForces(const engine::MechanicalSystem& system,
                             const events::Simulation& simulation)
    : system_(system), simulation_(simulation), dynamics_(system) {
  const auto m = static_cast<std::size_t>(system.num_constraints());
  planar_block_.assign(m, nullptr);
  spatial_block_.assign(m, nullptr);
  local_row_.assign(m, -1);
  std::vector<int> first_row;  // of each block
  int row = 0;
  for (const auto& block : system.constraint_blocks()) {
    first_row.push_back(row);
    const auto* planar = dynamic_cast<const contact::PlanarContacts*>(block.get());
    const auto* spatial = dynamic_cast<const contact::SpatialContacts*>(block.get());
    for (int local = 0; local < block->num_rows(); ++local, ++row) {
      const engine::ConstraintRowInfo& info = block->row_info(local);
      if (info.kind == engine::ConstraintKind::kBilateral) continue;
      const auto r = static_cast<std::size_t>(row);
      planar_block_[r] = planar;
      spatial_block_[r] = spatial;
      local_row_[r] = info.kind == engine::ConstraintKind::kTangential ? info.normal_row : local;
    }
  }
}

void ContactForces::Evaluate(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  rows_ = simulation_.active_rows();
  const engine::DynamicsStatus status = dynamics_.Solve(t, q, v, rows_, &vdot_, &lambda_);
  if (!status.ok) lambda_.setConstant(std::numeric_limits<double>::quiet_NaN());
  arrows_.clear();
  std::unordered_map<int, std::size_t> arrow_of_row;
  for (int pass = 0; pass < 2; ++pass) {  // the contacts' normal rows, then tangential rows
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      const int row = rows_[k];
      const auto r = static_cast<std::size_t>(row);
      if (planar_block_[r] == nullptr && spatial_block_[r] == nullptr) continue;
      const bool normal = system_.constraint_info(row).kind == engine::ConstraintKind::kUnilateral;
      if (normal != (pass == 0)) continue;
      const double lambda = lambda_[static_cast<Eigen::Index>(k)];
      const contact::ContactSite site = Site(q, row);
      if (normal) {
        arrow_of_row[row] = arrows_.size();
        arrows_.push_back(
            {row, site.body_b, site.point, lambda * site.normal, Eigen::Vector3d::Zero()});
        continue;
      }
      const auto it = arrow_of_row.find(system_.NormalRow(row));
      if (it != arrow_of_row.end()) AddTangential(t, q, row, lambda, site, &arrows_[it->second]);
    }
  }
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

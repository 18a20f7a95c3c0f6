#include "engine/mechanical_system.h"

#include <stdexcept>

namespace saltus::engine {

MechanicalSystem::~MechanicalSystem() = default;

void MechanicalSystem::IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                         double h, Eigen::VectorXd* q_next) const {
  if (q_next == &q) {
    *q_next += h * v;
  } else {
    *q_next = q + h * v;
  }
}

double MechanicalSystem::KineticEnergy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) const {
  Eigen::MatrixXd M;
  MassMatrix(q, &M);
  return 0.5 * v.dot(M * v);
}

double MechanicalSystem::PotentialEnergy(double /*t*/, const Eigen::VectorXd& /*q*/) const {
  return 0.0;
}

std::string MechanicalSystem::PositionName(int i) const { return "q" + std::to_string(i); }
std::string MechanicalSystem::VelocityName(int i) const { return "v" + std::to_string(i); }

int MechanicalSystem::AddConstraintBlock(std::shared_ptr<const ConstraintBlock> block) {
  if (!block) throw std::invalid_argument("AddConstraintBlock: null constraint block");
  const int first = num_constraints();
  const int index = static_cast<int>(blocks_.size());
  blocks_.push_back(std::move(block));
  block_first_row_.push_back(first);
  row_block_.insert(row_block_.end(), blocks_.back()->num_rows(), index);
  return first;
}

const ConstraintRowInfo& MechanicalSystem::constraint_info(int row) const {
  if (row < 0 || row >= num_constraints()) {
    throw std::out_of_range("constraint row " + std::to_string(row) + " outside [0, " +
                            std::to_string(num_constraints()) + ")");
  }
  const int b = row_block_[row];
  return blocks_[b]->row_info(row - block_first_row_[b]);
}

std::vector<int> MechanicalSystem::RowsOfKind(ConstraintKind kind) const {
  std::vector<int> rows;
  for (int r = 0; r < num_constraints(); ++r) {
    if (constraint_info(r).kind == kind) rows.push_back(r);
  }
  return rows;
}

template <class Fn>
void MechanicalSystem::ForEachBlockRun(std::span<const int> rows, Fn&& fn) const {
  thread_local std::vector<int> local;
  std::size_t k = 0;
  while (k < rows.size()) {
    const int first = rows[k];
    if (first < 0 || first >= num_constraints()) constraint_info(first);  // throws
    const int b = row_block_[first];
    local.clear();
    local.push_back(first - block_first_row_[b]);
    std::size_t end = k + 1;
    while (end < rows.size() && rows[end] >= 0 && rows[end] < num_constraints() &&
           row_block_[rows[end]] == b && rows[end] - block_first_row_[b] > local.back()) {
      local.push_back(rows[end] - block_first_row_[b]);
      ++end;
    }
    fn(*blocks_[b], std::span<const int>(local), static_cast<Eigen::Index>(k));
    k = end;
  }
}

void MechanicalSystem::ConstraintValues(double t, const Eigen::VectorXd& q,
                                        std::span<const int> rows, Eigen::VectorXd* g) const {
  g->resize(static_cast<Eigen::Index>(rows.size()));
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    b.Values(t, q, local, g->segment(k, static_cast<Eigen::Index>(local.size())));
  });
}

void MechanicalSystem::ConstraintJacobian(double t, const Eigen::VectorXd& q,
                                          std::span<const int> rows, Eigen::MatrixXd* G) const {
  G->resize(static_cast<Eigen::Index>(rows.size()), nv());
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    b.Jacobian(t, q, local, G->middleRows(k, static_cast<Eigen::Index>(local.size())));
  });
}

void MechanicalSystem::ConstraintTimeDerivative(double t, const Eigen::VectorXd& q,
                                                std::span<const int> rows,
                                                Eigen::VectorXd* g_t) const {
  g_t->resize(static_cast<Eigen::Index>(rows.size()));
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    b.TimeDerivative(t, q, local, g_t->segment(k, static_cast<Eigen::Index>(local.size())));
  });
}

void MechanicalSystem::ConstraintGamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                       std::span<const int> rows, Eigen::VectorXd* gamma) const {
  gamma->resize(static_cast<Eigen::Index>(rows.size()));
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    b.Gamma(t, q, v, local, gamma->segment(k, static_cast<Eigen::Index>(local.size())));
  });
}

}  // namespace saltus::engine

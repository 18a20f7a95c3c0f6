#include "engine/mechanical_system.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine/block_sparse.h"

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
  // Block-diagonal M (e.g. free spatial bodies): O(nv), without the dense nv × nv matrix (288 MB
  // for a pile of 1000 spheres). M does not depend on t.
  MassBlocks blocks;
  if (BlockSparseMatrices(0.0, q, {}, &blocks, nullptr) && blocks.block_size > 0) {
    const int b = blocks.block_size;
    double T = 0.0;
    for (int c = 0; c * b < nv(); ++c) {
      const auto vc = v.segment(c * b, b);
      T += 0.5 * vc.dot(blocks.blocks.middleCols(c * b, b) * vc);
    }
    return T;
  }
  Eigen::MatrixXd M;
  MassMatrix(q, &M);
  return 0.5 * v.dot(M * v);
}

double MechanicalSystem::PotentialEnergy(double /*t*/, const Eigen::VectorXd& /*q*/) const {
  return 0.0;
}

namespace {

// Central-difference step for coordinates of size |x|∞ (see ForceJacobians in the header).
double DifferenceStep(const Eigen::VectorXd& x) {
  const double scale = x.size() > 0 ? std::max(1.0, x.lpNorm<Eigen::Infinity>()) : 1.0;
  return std::cbrt(std::numeric_limits<double>::epsilon()) * scale;
}

// Column-wise central differences of y(x) along x ⊕ ε e_j, for j in [0, nv):
// J = (y(x ⊕ ε e_j) − y(x ⊖ ε e_j)) / (2 ε), scaled by `sign`.
template <class Perturb, class Eval>
void CentralDifferences(int nv, int ny, double eps, double sign, Perturb&& perturb, Eval&& eval,
                        Eigen::MatrixXd* J) {
  J->resize(ny, nv);
  Eigen::VectorXd y_plus, y_minus;
  for (int j = 0; j < nv; ++j) {
    perturb(j, eps);
    eval(&y_plus);
    perturb(j, -eps);
    eval(&y_minus);
    perturb(j, 0.0);
    J->col(j) = (sign / (2.0 * eps)) * (y_plus - y_minus);
  }
}

}  // namespace

void MechanicalSystem::ForceJacobians(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                      Eigen::MatrixXd* K, Eigen::MatrixXd* C) const {
  const int n = nv();
  if (K != nullptr) {
    Eigen::VectorXd q_pert = q;
    Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
    CentralDifferences(
        n, n, DifferenceStep(q), -1.0,
        [&](int j, double eps) {
          e.setZero();
          e(j) = 1.0;
          IntegratePosition(q, e, eps, &q_pert);
        },
        [&](Eigen::VectorXd* F) { Forces(t, q_pert, v, F); }, K);
  }
  if (C != nullptr) {
    Eigen::VectorXd v_pert = v;
    CentralDifferences(
        n, n, DifferenceStep(v), -1.0,
        [&](int j, double eps) {
          v_pert = v;
          v_pert(j) += eps;
        },
        [&](Eigen::VectorXd* F) { Forces(t, q, v_pert, F); }, C);
  }
}

void MechanicalSystem::MassMatrixProductJacobian(const Eigen::VectorXd& q, const Eigen::VectorXd& a,
                                                 Eigen::MatrixXd* K_M) const {
  const int n = nv();
  if (HasConstantMassMatrix()) {
    K_M->setZero(n, n);
    return;
  }
  Eigen::VectorXd q_pert = q;
  Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd M;
  CentralDifferences(
      n, n, DifferenceStep(q), 1.0,
      [&](int j, double eps) {
        e.setZero();
        e(j) = 1.0;
        IntegratePosition(q, e, eps, &q_pert);
      },
      [&](Eigen::VectorXd* Ma) {
        MassMatrix(q_pert, &M);
        *Ma = M * a;
      },
      K_M);
}

void MechanicalSystem::ConstraintForceJacobian(double t, const Eigen::VectorXd& q,
                                               std::span<const int> rows,
                                               const Eigen::VectorXd& lambda,
                                               Eigen::MatrixXd* K_G) const {
  if (lambda.size() != static_cast<Eigen::Index>(rows.size())) {
    throw std::invalid_argument("ConstraintForceJacobian: lambda has " +
                                std::to_string(lambda.size()) + " entries for " +
                                std::to_string(rows.size()) + " rows");
  }
  const int n = nv();
  Eigen::VectorXd q_pert = q;
  Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd G;
  CentralDifferences(
      n, n, DifferenceStep(q), 1.0,
      [&](int j, double eps) {
        e.setZero();
        e(j) = 1.0;
        IntegratePosition(q, e, eps, &q_pert);
      },
      [&](Eigen::VectorXd* Gt_lambda) {
        ConstraintJacobian(t, q_pert, rows, &G);
        *Gt_lambda = G.transpose() * lambda;
      },
      K_G);
}

void MechanicalSystem::ConstraintVelocityJacobian(double t, const Eigen::VectorXd& q,
                                                  const Eigen::VectorXd& v,
                                                  std::span<const int> rows,
                                                  Eigen::MatrixXd* Z) const {
  const int n = nv();
  Eigen::VectorXd q_pert = q;
  Eigen::VectorXd e = Eigen::VectorXd::Zero(n), g_t;
  Eigen::MatrixXd G;
  CentralDifferences(
      n, static_cast<int>(rows.size()), DifferenceStep(q), 1.0,
      [&](int j, double eps) {
        e.setZero();
        e(j) = 1.0;
        IntegratePosition(q, e, eps, &q_pert);
      },
      [&](Eigen::VectorXd* gdot) {
        ConstraintJacobian(t, q_pert, rows, &G);
        ConstraintTimeDerivative(t, q_pert, rows, &g_t);
        *gdot = G * v + g_t;
      },
      Z);
}

std::string MechanicalSystem::PositionName(int i) const { return "q" + std::to_string(i); }
std::string MechanicalSystem::VelocityName(int i) const { return "v" + std::to_string(i); }

namespace {

// Throws unless a unilateral row's coefficient is finite and ≥ 0, and rows of its group exist
// (exactly `needed` of them, 0: any number ≥ 1) when it is > 0.
void CheckCoefficient(const ConstraintRowInfo& info, double value, const char* what,
                      std::size_t count, std::size_t needed, const char* rows) {
  if (!(value >= 0.0) || !std::isfinite(value)) {
    throw std::invalid_argument("contact '" + info.name + "': " + what +
                                " coefficient must be a finite number >= 0");
  }
  if (value > 0.0 && (count == 0 || (needed > 0 && count != needed))) {
    throw std::invalid_argument("contact '" + info.name + "': " + what + " > 0 needs " + rows +
                                " in its block");
  }
}

}  // namespace

int MechanicalSystem::AddConstraintBlock(std::shared_ptr<const ConstraintBlock> block) {
  if (!block) throw std::invalid_argument("AddConstraintBlock: null constraint block");
  const int first = num_constraints();
  const int n = block->num_rows();
  // Tangential, rolling and spinning rows of each unilateral row of the block (local indices),
  // validated first so that a rejected block leaves the system unchanged.
  std::vector<std::vector<int>> tangents(static_cast<std::size_t>(n)), rolling(tangents),
      spinning(tangents);
  for (int r = 0; r < n; ++r) {
    const ConstraintRowInfo& info = block->row_info(r);
    if (info.kind != ConstraintKind::kTangential && info.kind != ConstraintKind::kResistance) {
      continue;
    }
    const int nr = info.normal_row;
    if (nr < 0 || nr >= n || block->row_info(nr).kind != ConstraintKind::kUnilateral) {
      throw std::invalid_argument(
          "constraint row '" + info.name + "': a " +
          (info.kind == ConstraintKind::kTangential ? "tangential" : "resistance") +
          " row needs a unilateral normal_row in its block");
    }
    auto& group = info.kind == ConstraintKind::kTangential ? tangents
                  : info.spinning                          ? spinning
                                                           : rolling;
    group[static_cast<std::size_t>(nr)].push_back(r);
  }
  for (int r = 0; r < n; ++r) {
    const ConstraintRowInfo& info = block->row_info(r);
    if (info.kind != ConstraintKind::kUnilateral) continue;
    const auto k = static_cast<std::size_t>(r);
    CheckCoefficient(info, info.friction, "friction", tangents[k].size(), 0, "tangential rows");
    CheckCoefficient(info, info.rolling_friction, "rolling friction", rolling[k].size(), 2,
                     "two rolling rows");
    CheckCoefficient(info, info.spinning_friction, "spinning friction", spinning[k].size(), 1,
                     "one spinning row");
  }
  const int index = static_cast<int>(blocks_.size());
  blocks_.push_back(std::move(block));
  block_first_row_.push_back(first);
  row_block_.insert(row_block_.end(), n, index);
  normal_row_.insert(normal_row_.end(), n, -1);
  const auto append = [&](const std::vector<std::vector<int>>& group, RowsByNormal* out) {
    for (int r = 0; r < n; ++r) {
      for (int t : group[static_cast<std::size_t>(r)]) {
        out->rows.push_back(first + t);
        normal_row_[static_cast<std::size_t>(first + t)] = first + r;
      }
      out->start.push_back(static_cast<int>(out->rows.size()));
    }
  };
  append(tangents, &tangent_);
  append(rolling, &rolling_);
  append(spinning, &spinning_);
  return first;
}

std::span<const int> MechanicalSystem::RowsByNormal::Of(int r) const {
  const auto k = static_cast<std::size_t>(r);
  return std::span<const int>(rows).subspan(static_cast<std::size_t>(start[k]),
                                            static_cast<std::size_t>(start[k + 1] - start[k]));
}

std::span<const int> MechanicalSystem::TangentRows(int normal_row) const {
  (void)constraint_info(normal_row);  // range check
  return tangent_.Of(normal_row);
}

std::span<const int> MechanicalSystem::RollingRows(int normal_row) const {
  (void)constraint_info(normal_row);  // range check
  return rolling_.Of(normal_row);
}

std::span<const int> MechanicalSystem::SpinningRows(int normal_row) const {
  (void)constraint_info(normal_row);  // range check
  return spinning_.Of(normal_row);
}

int MechanicalSystem::NormalRow(int tangent_row) const {
  (void)constraint_info(tangent_row);  // range check
  return normal_row_[static_cast<std::size_t>(tangent_row)];
}

const ConstraintRowInfo& MechanicalSystem::constraint_info(int row) const {
  if (row < 0 || row >= num_constraints()) {
    throw std::out_of_range("constraint row " + std::to_string(row) + " outside [0, " +
                            std::to_string(num_constraints()) + ")");
  }
  const int b = row_block_[row];
  return blocks_[b]->row_info(row - block_first_row_[b]);
}

std::vector<int> MechanicalSystem::PositionLevelRows(std::span<const int> rows) const {
  std::vector<int> kept;
  kept.reserve(rows.size());
  for (int r : rows) {
    if (!IsVelocityLevel(r)) kept.push_back(r);
  }
  return kept;
}

std::vector<int> MechanicalSystem::RowsOfKind(ConstraintKind kind) const {
  std::vector<int> rows;
  for (int r = 0; r < num_constraints(); ++r) {
    if (constraint_info(r).kind == kind) rows.push_back(r);
  }
  return rows;
}

void MechanicalSystem::CandidateRows(const Eigen::VectorXd& q, const Eigen::VectorXd& speed_bound,
                                     double horizon, double margin, std::vector<int>* rows) const {
  rows->clear();
  thread_local std::vector<int> local;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    blocks_[b]->CandidateRows(q, speed_bound, horizon, margin, &local);
    for (int r : local) rows->push_back(block_first_row_[b] + r);
  }
}

bool MechanicalSystem::CandidateRowsDependOnSpeed() const {
  return std::any_of(blocks_.begin(), blocks_.end(),
                     [](const auto& b) { return b->CandidateRowsDependOnSpeed(); });
}

template <class Fn>
void MechanicalSystem::ForEachBlockRun(std::span<const int> rows, Fn&& fn) const {
  std::size_t k = 0;
  while (k < rows.size()) {
    const int first = rows[k];
    if (first < 0 || first >= num_constraints()) constraint_info(first);  // throws
    const int b = row_block_[first];
    const int offset = block_first_row_[b];
    std::size_t end = k + 1;
    while (end < rows.size() && rows[end] >= 0 && rows[end] < num_constraints() &&
           row_block_[rows[end]] == b && rows[end] > rows[end - 1]) {
      ++end;
    }
    const auto run = static_cast<Eigen::Index>(k);
    if (offset == 0) {
      // The block's local rows are the global ones (the first block with rows, e.g. a ball's
      // contacts after an empty joint block): the caller's span, without a copy.
      fn(*blocks_[b], rows.subspan(k, end - k), run);
    } else {
      thread_local std::vector<int> local;
      local.clear();
      for (std::size_t i = k; i < end; ++i) local.push_back(rows[i] - offset);
      fn(*blocks_[b], std::span<const int>(local), run);
    }
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

void MechanicalSystem::ConstraintJacobianAndGamma(double t, const Eigen::VectorXd& q,
                                                  const Eigen::VectorXd& v,
                                                  std::span<const int> rows, Eigen::MatrixXd* G,
                                                  Eigen::VectorXd* gamma) const {
  const auto m = static_cast<Eigen::Index>(rows.size());
  G->resize(m, nv());
  gamma->resize(m);
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    const auto n = static_cast<Eigen::Index>(local.size());
    b.JacobianAndGamma(t, q, v, local, G->middleRows(k, n), gamma->segment(k, n));
  });
}

void MechanicalSystem::ConstraintValuesAndRates(double t, const Eigen::VectorXd& q,
                                                const Eigen::VectorXd& v, std::span<const int> rows,
                                                Eigen::VectorXd* g, Eigen::VectorXd* g_dot) const {
  const auto m = static_cast<Eigen::Index>(rows.size());
  g->resize(m);
  g_dot->resize(m);
  // Rows of blocks without ValuesAndRates, and where they go in the outputs.
  thread_local std::vector<int> rest;
  thread_local std::vector<Eigen::Index> rest_at;
  thread_local Eigen::VectorXd g_rest, g_dot_rest;
  rest.clear();
  rest_at.clear();
  ForEachBlockRun(rows, [&](const ConstraintBlock& b, std::span<const int> local, Eigen::Index k) {
    const auto n = static_cast<Eigen::Index>(local.size());
    if (b.ValuesAndRates(t, q, v, local, g->segment(k, n), g_dot->segment(k, n))) return;
    for (Eigen::Index i = 0; i < n; ++i) {
      rest.push_back(rows[static_cast<std::size_t>(k + i)]);
      rest_at.push_back(k + i);
    }
  });
  if (rest.empty()) return;
  ConstraintValues(t, q, rest, &g_rest);
  ConstraintRate(*this, t, q, v, rest, &g_dot_rest);
  for (std::size_t i = 0; i < rest.size(); ++i) {
    (*g)(rest_at[i]) = g_rest(static_cast<Eigen::Index>(i));
    (*g_dot)(rest_at[i]) = g_dot_rest(static_cast<Eigen::Index>(i));
  }
}

bool MechanicalSystem::AppendConstraintJacobianBlocks(double t, const Eigen::VectorXd& q, int row,
                                                      BlockSparseRows* G) const {
  constraint_info(row);  // throws if row is invalid
  const int b = row_block_[static_cast<std::size_t>(row)];
  return blocks_[static_cast<std::size_t>(b)]->AppendJacobianBlocks(
      t, q, row - block_first_row_[static_cast<std::size_t>(b)], G);
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

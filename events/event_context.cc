#include "events/event_context.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace saltus::events {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using engine::ConstraintKind;

std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

void UnionInto(const std::vector<int>& a, const std::vector<int>& b, std::vector<int>* out) {
  out->clear();
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*out));
}

std::vector<int> Difference(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool Contains(const std::vector<int>& sorted, int row) {
  return std::binary_search(sorted.begin(), sorted.end(), row);
}

RowSets::RowSets(const engine::MechanicalSystem& system, double global_restitution)
    : bilateral(system.RowsOfKind(ConstraintKind::kBilateral)),
      unilateral(system.RowsOfKind(ConstraintKind::kUnilateral)),
      is_unilateral(static_cast<std::size_t>(system.num_constraints()), 0),
      restitution(static_cast<std::size_t>(system.num_constraints()), global_restitution) {
  for (int r : unilateral) {
    is_unilateral[static_cast<std::size_t>(r)] = 1;
    const double e = system.constraint_info(r).restitution;
    if (e >= 0) {
      if (e > 1.0) {
        throw std::invalid_argument("contact '" + system.constraint_info(r).name +
                                    "': restitution must be in [0, 1], got " + std::to_string(e));
      }
      restitution[static_cast<std::size_t>(r)] = e;
    }
  }
}

void UnilateralCandidates::Find(const VectorXd& q, const VectorXd& speed, double horizon,
                                double margin, const std::vector<int>* excluded,
                                std::vector<int>* out) {
  out->clear();
  if (rows_.unilateral.empty()) return;
  if (watch_all_) {
    *out = excluded != nullptr ? Difference(rows_.unilateral, *excluded) : rows_.unilateral;
    return;
  }
  system_.CandidateRows(q, speed, horizon, margin, &buffer_);
  for (int r : buffer_) {
    if (!rows_.is_unilateral[static_cast<std::size_t>(r)]) continue;
    if (excluded != nullptr && Contains(*excluded, r)) continue;
    out->push_back(r);
  }
}

double MassBlockCache::Energy(double t, const VectorXd& q, const VectorXd& v) {
  const bool same_q = t == memo_t_ && q.size() == memo_q_.size() && q == memo_q_;
  if (same_q && v.size() == memo_v_.size() && v == memo_v_) return memo_energy_;
  if (!same_q) {
    memo_t_ = t;
    memo_q_ = q;
    memo_potential_ = system_.PotentialEnergy(t, q);
  }
  memo_v_ = v;
  memo_energy_ = Kinetic(t, q, v) + memo_potential_;
  return memo_energy_;
}

double MassBlockCache::Kinetic(double t, const VectorXd& q, const VectorXd& v) {
  double T = 0.0;
  if (constant_mass_valid_ || system_.BlockSparseMatrices(t, q, {}, &mass_blocks_, nullptr)) {
    constant_mass_valid_ = system_.HasConstantMassMatrix();
    const int b = mass_blocks_.block_size;
    Mv_.resize(b);  // M_c v_c of one body (no temporary per body)
    for (int c = 0; c * b < system_.nv(); ++c) {
      const auto vc = v.segment(c * b, b);
      Mv_.noalias() = mass_blocks_.blocks.middleCols(c * b, b) * vc;
      T += 0.5 * vc.dot(Mv_);
    }
  } else {
    // A constant M is evaluated once (dense_mass_valid_), as the blocks above are.
    if (!dense_mass_valid_) {
      system_.MassMatrix(q, &M_);
      dense_mass_valid_ = system_.HasConstantMassMatrix();
    }
    Mv_.noalias() = M_ * v;
    T = 0.5 * v.dot(Mv_);
  }
  return T;
}

void MassBlockCache::DelassusDiagonal(double t, const VectorXd& q, const std::vector<int>& rows,
                                      VectorXd* w) {
  w->resize(static_cast<Eigen::Index>(rows.size()));
  const bool have_mass = constant_mass_valid_;
  if (system_.BlockSparseMatrices(t, q, rows, have_mass ? nullptr : &mass_blocks_, &G_sparse_)) {
    const int b = mass_blocks_.block_size;
    // One Cholesky factor per body block, made when a row first needs it (a body is shared by
    // several rows: a sphere of a pile by up to a dozen). The vector is built with its size, so
    // no factor is ever copied before it is computed.
    const auto num_blocks = static_cast<std::size_t>(system_.nv() / b);
    if (block_llt_.size() != num_blocks) {
      block_llt_ = std::vector<Eigen::LLT<MatrixXd>>(num_blocks);
      block_llt_stamp_.assign(num_blocks, 0);
    }
    if (!have_mass) ++llt_stamp_;  // the factors of a constant M stay valid
    constant_mass_valid_ = system_.HasConstantMassMatrix();
    for (int i = 0; i < G_sparse_.rows(); ++i) {
      double sum = 0.0;
      for (int k = G_sparse_.row_start[static_cast<std::size_t>(i)];
           k < G_sparse_.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
        const int c = G_sparse_.block_col[static_cast<std::size_t>(k)];
        const Eigen::Map<const VectorXd> g(
            G_sparse_.values.data() + static_cast<std::ptrdiff_t>(k) * b, b);
        const auto uc = static_cast<std::size_t>(c);
        if (block_llt_stamp_[uc] != llt_stamp_) {
          block_llt_[uc].compute(mass_blocks_.blocks.middleCols(c * b, b));
          block_llt_stamp_[uc] = llt_stamp_;
        }
        sum += g.dot(block_llt_[uc].solve(g));
      }
      (*w)[i] = sum;
    }
    return;
  }
  system_.ConstraintJacobian(t, q, rows, &G_);
  system_.MassMatrix(q, &M_);
  llt_.compute(M_);
  MinvGt_ = G_.transpose();
  llt_.solveInPlace(MinvGt_);
  for (Eigen::Index k = 0; k < w->size(); ++k) (*w)[k] = G_.row(k).dot(MinvGt_.col(k));
}

EventContext::EventContext(const engine::MechanicalSystem& system, const SimulationOptions& options)
    : sys(system),
      opt(options),
      rows(system, options.restitution),
      candidates(system, rows, options.watch_all_rows),
      mass(system),
      zero_speed(VectorXd::Zero(system.nv())) {
  stats.min_gap_after_projection = std::numeric_limits<double>::infinity();
}

}  // namespace saltus::events

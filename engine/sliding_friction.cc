#include "engine/sliding_friction.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "engine/block_sparse.h"

namespace saltus::engine {

namespace {

// Unit length of a given direction, to this tolerance.
constexpr double kUnitTolerance = 1e-9;

constexpr std::array<int, kNumFrictionGroups> kNoEntry{-1, -1, -1};

const char* GroupRowsName(FrictionGroup group) {
  switch (group) {
    case FrictionGroup::kTangential:
      return "tangential rows";
    case FrictionGroup::kRolling:
      return "rolling rows";
    case FrictionGroup::kSpinning:
      return "spinning row";
  }
  return "";
}

}  // namespace

std::span<const int> GroupRows(const MechanicalSystem& system, int normal_row,
                               FrictionGroup group) {
  switch (group) {
    case FrictionGroup::kTangential:
      return system.TangentRows(normal_row);
    case FrictionGroup::kRolling:
      return system.RollingRows(normal_row);
    case FrictionGroup::kSpinning:
      return system.SpinningRows(normal_row);
  }
  return {};
}

SlidingFrictionView::SlidingFrictionView(const MechanicalSystem& base)
    : base_(base), sliding_index_(static_cast<std::size_t>(base.num_constraints()), kNoEntry) {
  for (const auto& block : base.constraint_blocks()) AddConstraintBlock(block);
}

void SlidingFrictionView::Validate(
    const SlidingContact& c, const std::vector<std::array<int, kNumFrictionGroups>>& index) const {
  if (c.normal_row < 0 || c.normal_row >= num_constraints()) {
    throw std::invalid_argument("sliding contact: normal row " + std::to_string(c.normal_row) +
                                " outside [0, " + std::to_string(num_constraints()) + ")");
  }
  const ConstraintRowInfo& info = constraint_info(c.normal_row);
  const std::string what = "sliding contact '" + info.name + "': ";
  if (info.kind != ConstraintKind::kUnilateral) {
    throw std::invalid_argument(what + "not a unilateral row");
  }
  const auto k = static_cast<Eigen::Index>(GroupRows(*this, c.normal_row, c.group).size());
  if (k == 0) throw std::invalid_argument(what + "the contact has no " + GroupRowsName(c.group));
  if (index[static_cast<std::size_t>(c.normal_row)][static_cast<std::size_t>(c.group)] >= 0) {
    throw std::invalid_argument(what + "listed twice");
  }
  if (!(c.mu >= 0.0) || !std::isfinite(c.mu)) {
    throw std::invalid_argument(what + "friction coefficient must be a finite number >= 0");
  }
  if (c.direction.size() != k) {
    throw std::invalid_argument(what + "the slip direction has " +
                                std::to_string(c.direction.size()) + " entries for " +
                                std::to_string(k) + " " + GroupRowsName(c.group));
  }
  if (!c.direction.allFinite() || std::abs(c.direction.norm() - 1.0) > kUnitTolerance) {
    throw std::invalid_argument(what + "the slip direction must be a unit vector");
  }
}

void SlidingFrictionView::SetSlidingContacts(std::vector<SlidingContact> contacts) {
  std::vector<std::array<int, kNumFrictionGroups>> index(
      static_cast<std::size_t>(num_constraints()), kNoEntry);
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    Validate(contacts[i], index);
    index[static_cast<std::size_t>(contacts[i].normal_row)]
         [static_cast<std::size_t>(contacts[i].group)] = static_cast<int>(i);
  }
  sliding_ = std::move(contacts);
  sliding_index_ = std::move(index);
  plan_valid_ = false;
}

void SlidingFrictionView::set_slip_speed_floor(double floor) {
  if (!(floor > 0.0) || !std::isfinite(floor)) {
    throw std::invalid_argument("SlidingFrictionView: slip speed floor must be finite and > 0");
  }
  slip_speed_floor_ = floor;
}

void SlidingFrictionView::SlipDirectionAt(std::size_t index, double t, const Eigen::VectorXd& q,
                                          const Eigen::VectorXd& v, Eigen::VectorXd* d) const {
  const SlidingContact& c = sliding_.at(index);
  if (c.mode == SlipDirection::kCurrent) {
    // Current slip velocity ġ_g = G_g v + ∂g_g/∂t of the group (header).
    ConstraintRate(*this, t, q, v, GroupRows(*this, c.normal_row, c.group), &slip_);
  }
  *d = Direction(c, slip_);
}

Eigen::Ref<const Eigen::VectorXd> SlidingFrictionView::Direction(
    const SlidingContact& c, Eigen::Ref<const Eigen::VectorXd> slip) const {
  if (c.mode == SlipDirection::kFixed) return c.direction;
  const double speed = slip.norm();
  if (speed > slip_speed_floor_ && (!anchor_gate_ || slip.dot(c.direction) > 0.0)) {
    d_ = slip / speed;
    return d_;
  }
  return c.direction;
}

void SlidingFrictionView::ReanchorSlipDirections(double t, const Eigen::VectorXd& q,
                                                 const Eigen::VectorXd& v) {
  for (SlidingContact& c : sliding_) {
    if (c.mode != SlipDirection::kCurrent) continue;
    ConstraintRate(*this, t, q, v, GroupRows(*this, c.normal_row, c.group), &slip_);
    const double speed = slip_.norm();
    if (speed > slip_speed_floor_) c.direction = slip_ / speed;
  }
}

void SlidingFrictionView::ForceDirections(double t, const Eigen::VectorXd& q,
                                          const Eigen::VectorXd& v, std::span<const int> rows,
                                          Eigen::MatrixXd* H) const {
  ConstraintJacobian(t, q, rows, H);
  SubtractFrictionTerms(t, q, v, rows, H);
}

void SlidingFrictionView::ForceDirectionsFromJacobian(double t, const Eigen::VectorXd& q,
                                                      const Eigen::VectorXd& v,
                                                      std::span<const int> rows,
                                                      const Eigen::MatrixXd& G,
                                                      Eigen::MatrixXd* H) const {
  *H = G;
  SubtractFrictionTerms(t, q, v, rows, H);
}

void SlidingFrictionView::PlanFrictionTerms(std::span<const int> rows) const {
  if (plan_valid_ && std::equal(rows.begin(), rows.end(), plan_rows_.begin(), plan_rows_.end())) {
    return;
  }
  plan_rows_.assign(rows.begin(), rows.end());
  plan_current_ = false;
  terms_.clear();
  group_rows_.clear();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const int s : sliding_index_[static_cast<std::size_t>(rows[i])]) {
      if (s < 0) continue;
      const SlidingContact& c = sliding_[static_cast<std::size_t>(s)];
      if (c.mu == 0.0) continue;
      const std::span<const int> group = GroupRows(*this, rows[i], c.group);
      terms_.push_back({static_cast<Eigen::Index>(i), static_cast<std::size_t>(s),
                        static_cast<Eigen::Index>(group_rows_.size()),
                        static_cast<Eigen::Index>(group.size())});
      group_rows_.insert(group_rows_.end(), group.begin(), group.end());
      plan_current_ = plan_current_ || c.mode == SlipDirection::kCurrent;
    }
  }
  plan_valid_ = true;
}

void SlidingFrictionView::SubtractFrictionTerms(double t, const Eigen::VectorXd& q,
                                                const Eigen::VectorXd& v, std::span<const int> rows,
                                                Eigen::MatrixXd* H) const {
  PlanFrictionTerms(rows);
  if (group_rows_.empty()) return;
  ConstraintJacobian(t, q, group_rows_, &G_g_);
  if (plan_current_) {  // ġ_g = G_g v + ∂g_g/∂t of every group row, from the Jacobian above
    ConstraintTimeDerivative(t, q, group_rows_, &slip_);
    slip_.noalias() += G_g_ * v;
  }
  for (const FrictionTerm& term : terms_) {
    // H_n = G_n − μ_g d_g·G_g (header).
    const SlidingContact& c = sliding_[term.entry];
    const Eigen::Ref<const Eigen::VectorXd> d =
        c.mode == SlipDirection::kFixed ? Eigen::Ref<const Eigen::VectorXd>(c.direction)
                                        : Direction(c, slip_.segment(term.first, term.size));
    if (term.size == 1) {
      // One row (the plane, spinning): d = ±1, so μ d G_g is exact as a scaled row (axpy).
      H->row(term.row) -= (c.mu * d[0]) * G_g_.row(term.first);
    } else {
      H->row(term.row).noalias() -= c.mu * (d.transpose() * G_g_.middleRows(term.first, term.size));
    }
  }
}

}  // namespace saltus::engine

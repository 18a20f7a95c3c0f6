#include "events/switch_handler.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "contact/impact_problem.h"
#include "engine/block_sparse.h"
#include "engine/projection.h"

namespace saltus::events {

using Eigen::VectorXd;

namespace {

bool AnyBelow(const VectorXd& u, double bound) {
  bool any = false;
  for (Eigen::Index k = 0; k < u.size(); ++k) any |= u[k] < bound;
  return any;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void SwitchHandler::Handle(double t, VectorXd& q, VectorXd& v, ContactModes& modes,
                           const std::vector<int>& forced_open, const std::vector<int>& impacting,
                           std::vector<Event>* events) {
  const double energy_before = ctx_.mass.Energy(t, q, v);
  const std::vector<int> closed = modes.closed();
  const std::vector<int> i1 = ClosedInPosition(t, q, v, closed, impacting);
  ResolveImpacts(t, q, v, i1, energy_before, events);
  const std::vector<int> new_closed = DecideClosed(t, q, v, i1, forced_open);
  Project(t, q, v, i1, new_closed);
  RecordGaps(t, q);

  const double energy_after = ctx_.mass.Energy(t, q, v);
  const std::vector<int> closing = Difference(new_closed, closed);
  const std::vector<int> leaving = Difference(closed, new_closed);
  for (const auto& [kind, rows] :
       {std::pair{EventKind::kContactClosed, &closing}, std::pair{EventKind::kTakeoff, &leaving}}) {
    if (rows->empty()) continue;
    Event ev;
    ev.t = t;
    ev.kind = kind;
    ev.rows = *rows;
    ev.impulses.assign(rows->size(), 0.0);
    ev.energy_before = energy_before;
    ev.energy_after = energy_after;
    events->push_back(std::move(ev));
  }
  modes.SetClosed(new_closed);
}

// I₁: unilateral rows closed in position (plus the closed and the impacting ones), among the
// candidates within τ₀ (a row left out has g > τ₀).
std::vector<int> SwitchHandler::ClosedInPosition(double t, const VectorXd& q, const VectorXd& v,
                                                 const std::vector<int>& closed,
                                                 const std::vector<int>& impacting) {
  const double tau0 = ctx_.opt.thresholds.tau0;
  ctx_.candidates.Find(q, ctx_.zero_speed, 0.0, tau0, nullptr, &near_);
  std::vector<int> i1;
  if (!near_.empty()) {
    ctx_.sys.ConstraintValues(t, q, near_, &g_near_);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(near_.size());
    for (std::size_t k = 0; k < near_.size(); ++k) {
      if (g_near_[static_cast<Eigen::Index>(k)] <= tau0) i1.push_back(near_[k]);
    }
  }
  i1 = Union(Union(i1, closed), impacting);
  u_.resize(0);
  if (!i1.empty()) engine::ConstraintRate(ctx_.sys, t, q, v, i1, &u_);
  ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  return i1;
}

// Impact (eq. 4) on the rows of I₁ that approach or rest (u ≤ τ₁). Rows already separating are
// left out: with Newton's law a separating row that took an impulse would leave with
// u⁺ = −e u⁻ < 0, i.e. be driven into the obstacle. If the impact makes such a row approach, a
// further impact is solved on the new set; every stage involves only rows with u⁻ ≤ τ₁, so none
// adds energy. With a restitution threshold v_e, a row approaching slower than v_e takes e = 0.
void SwitchHandler::ResolveImpacts(double t, const VectorXd& q, VectorXd& v,
                                   const std::vector<int>& i1, double energy_before,
                                   std::vector<Event>* events) {
  const auto& opt = ctx_.opt;
  const double tau1 = opt.thresholds.tau1;
  bool approaching = AnyBelow(u_, -tau1);
  if (!approaching) return;
  VectorXd total_impulse = VectorXd::Zero(static_cast<Eigen::Index>(i1.size()));
  const VectorXd u_initial = u_;
  for (int stage = 0; stage < kMaxImpactStages && approaching; ++stage) {
    std::vector<int> rows;
    std::vector<Eigen::Index> index;  // position of each row in i1
    std::vector<double> e;
    for (std::size_t k = 0; k < i1.size(); ++k) {
      const double uk = u_[static_cast<Eigen::Index>(k)];
      if (uk > tau1) continue;
      rows.push_back(i1[k]);
      index.push_back(static_cast<Eigen::Index>(k));
      const bool plastic = opt.restitution_threshold > 0 && uk > -opt.restitution_threshold;
      e.push_back(plastic ? 0.0 : ctx_.rows.restitution[static_cast<std::size_t>(i1[k])]);
    }
    const auto lcp_start = std::chrono::steady_clock::now();
    const contact::ImpactResult impact =
        contact::SolveImpact(ctx_.sys, t, q, v, ctx_.rows.bilateral, rows, e, opt.lcp);
    ctx_.stats.lcp_seconds += SecondsSince(lcp_start);
    ctx_.stats.largest_lcp =
        std::max(ctx_.stats.largest_lcp, static_cast<long>(impact.largest_lcp));
    ++ctx_.stats.lcp_solves;
    if (!impact.ok) {
      std::ostringstream msg;
      msg << "impact problem failed at t = " << t << " on " << rows.size()
          << " contact(s): " << impact.message;
      throw RunFailure{RunStatus::kLcpFailure, msg.str()};
    }
    v = impact.v_plus;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      total_impulse[index[k]] += impact.impulse_u[static_cast<Eigen::Index>(k)];
    }
    engine::ConstraintRate(ctx_.sys, t, q, v, i1, &u_);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
    approaching = AnyBelow(u_, -tau1);
  }
  if (approaching) {
    std::ostringstream msg;
    msg << "impact cascade did not settle after " << kMaxImpactStages << " stages at t = " << t;
    throw RunFailure{RunStatus::kLcpFailure, msg.str()};
  }
  Event ev;
  ev.t = t;
  ev.kind = EventKind::kImpact;
  for (std::size_t k = 0; k < i1.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    if (total_impulse[kk] > 0 || u_initial[kk] < -tau1) {
      ev.rows.push_back(i1[k]);
      ev.impulses.push_back(total_impulse[kk]);
    }
  }
  ev.energy_before = energy_before;
  ev.energy_after = ctx_.mass.Energy(t, q, v);
  events->push_back(std::move(ev));
}

// Candidates for I₂: rows of I₁ whose velocity is (numerically) zero after the impact; a row
// with 0 < u⁺ ≤ τ₁ closes too (the Zeno rule), and with v_e > 0 a row leaving slower than v_e.
// The acceleration-level problem (eq. 12) keeps those with a compressive force.
std::vector<int> SwitchHandler::DecideClosed(double t, const VectorXd& q, const VectorXd& v,
                                             const std::vector<int>& i1,
                                             const std::vector<int>& forced_open) {
  const auto& opt = ctx_.opt;
  const auto& th = opt.thresholds;
  const double v_close = std::max(th.tau1, opt.restitution_threshold);
  auto candidates_below = [&](double bound) {
    std::vector<int> rows;
    for (std::size_t k = 0; k < i1.size(); ++k) {
      if (u_[static_cast<Eigen::Index>(k)] <= bound && !Contains(forced_open, i1[k])) {
        rows.push_back(i1[k]);
      }
    }
    return rows;
  };
  std::vector<int> candidates = candidates_below(v_close);
  std::vector<int> new_closed;
  if (candidates.empty()) return new_closed;
  // Rows that are candidates only by v_e (τ₁ < u⁺ ≤ v_e) are to close with u = 0: the problem is
  // posed at the velocity projected onto them (γ of the closing state).
  const VectorXd* v_acc = &v;
  VectorXd v_closing;
  for (std::size_t k = 0; k < i1.size() && v_acc == &v; ++k) {
    const double uk = u_[static_cast<Eigen::Index>(k)];
    if (uk > th.tau1 && uk <= v_close) {
      v_closing = v;
      const auto rv = engine::ProjectVelocities(
          ctx_.sys, t, q, Union(ctx_.rows.bilateral, candidates), opt.projection, &v_closing);
      if (rv.converged) v_acc = &v_closing;
    }
  }
  // lcp_seconds times the contact problems only, not the projection above.
  const auto lcp_start = std::chrono::steady_clock::now();
  contact::ContactAccelerationResult acc = contact::SolveContactAccelerations(
      ctx_.sys, t, q, *v_acc, ctx_.rows.bilateral, candidates, opt.lcp);
  ++ctx_.stats.lcp_solves;
  if (!acc.ok && v_close > th.tau1) {
    // Should the problem still fail, the rows closing by the threshold are left out (they leave
    // as without it).
    std::vector<int> strict = candidates_below(th.tau1);
    if (strict.size() < candidates.size()) {
      candidates = std::move(strict);
      ++ctx_.stats.threshold_closing_fallbacks;
      acc = contact::SolveContactAccelerations(ctx_.sys, t, q, v, ctx_.rows.bilateral, candidates,
                                               opt.lcp);
      ++ctx_.stats.lcp_solves;
    }
  }
  ctx_.stats.lcp_seconds += SecondsSince(lcp_start);
  ctx_.stats.largest_lcp = std::max(ctx_.stats.largest_lcp, static_cast<long>(acc.largest_lcp));
  if (!acc.ok) {
    std::ostringstream msg;
    msg << "contact problem (acceleration level) failed at t = " << t << " on " << candidates.size()
        << " contact(s): " << acc.message;
    throw RunFailure{RunStatus::kLcpFailure, msg.str()};
  }
  // W_αα converts the force threshold τ₃ into an acceleration threshold.
  VectorXd w_diag;
  ctx_.mass.DelassusDiagonal(t, q, candidates, &w_diag);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    if (acc.lambda_u[kk] > th.tau3 || acc.accel_u[kk] <= w_diag[kk] * th.tau3) {
      new_closed.push_back(candidates[k]);
    }
  }
  return new_closed;
}

// Rows of I₁ that open while still approaching with |u| ≤ τ₁ get zero velocity with the closed
// rows (else they would cross zero again at once and the same switch would repeat), and rows of
// I₁ that open with a slightly negative gap are moved to g = 0 with them. The projection of the
// other rows can push an open row of I₁, or a row outside I₁ by more than τ₀, below zero: such
// rows join the projected set and the projection is repeated.
void SwitchHandler::Project(double t, VectorXd& q, VectorXd& v, const std::vector<int>& i1,
                            const std::vector<int>& new_closed) {
  const auto& opt = ctx_.opt;
  std::vector<int> stopped, penetrating;
  VectorXd g_i1;
  if (!i1.empty()) ctx_.sys.ConstraintValues(t, q, i1, &g_i1);
  ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  for (std::size_t k = 0; k < i1.size(); ++k) {
    if (Contains(new_closed, i1[k])) continue;
    if (u_[static_cast<Eigen::Index>(k)] < 0) stopped.push_back(i1[k]);
    if (g_i1[static_cast<Eigen::Index>(k)] < 0) penetrating.push_back(i1[k]);
  }
  near_gaps_current_ = false;
  const std::vector<int> active = Union(ctx_.rows.bilateral, new_closed);
  if (active.empty() && stopped.empty() && penetrating.empty()) return;
  const VectorXd q_start = q;
  for (;;) {
    q = q_start;
    const auto rp =
        engine::ProjectPositions(ctx_.sys, t, Union(active, penetrating), opt.projection, &q);
    if (!rp.converged) {
      std::ostringstream msg;
      msg << "position projection failed at t = " << t << " (residual " << rp.residual << " after "
          << rp.iterations << " iterations)";
      throw RunFailure{RunStatus::kProjectionFailure, msg.str()};
    }
    std::vector<int> more;
    if (!i1.empty()) {
      ctx_.sys.ConstraintValues(t, q, i1, &g_i1);
      ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
      for (std::size_t k = 0; k < i1.size(); ++k) {
        if (g_i1[static_cast<Eigen::Index>(k)] < 0 && !Contains(new_closed, i1[k]) &&
            !Contains(penetrating, i1[k])) {
          more.push_back(i1[k]);
        }
      }
    }
    if (more.empty()) {
      // Rows outside I₁ that end below −τ₀. The gaps are those of the final q when the loop ends
      // here, and serve the smallest gap after projection (RecordGaps).
      NearGaps(t, q);
      for (std::size_t k = 0; k < near_.size(); ++k) {
        const int r = near_[k];
        if (g_near_[static_cast<Eigen::Index>(k)] < -opt.thresholds.tau0 && !Contains(active, r) &&
            !Contains(penetrating, r)) {
          more.push_back(r);
        }
      }
      near_gaps_current_ = more.empty();
    }
    if (more.empty()) break;
    penetrating = Union(penetrating, more);
  }
  const auto rv =
      engine::ProjectVelocities(ctx_.sys, t, q, Union(active, stopped), opt.projection, &v);
  if (!rv.converged) {
    std::ostringstream msg;
    msg << "velocity projection failed at t = " << t << " (residual " << rv.residual << ")";
    throw RunFailure{RunStatus::kProjectionFailure, msg.str()};
  }
}

void SwitchHandler::NearGaps(double t, const VectorXd& q) {
  ctx_.candidates.Find(q, ctx_.zero_speed, 0.0, ctx_.opt.thresholds.tau0, nullptr, &near_);
  if (near_.empty()) return;
  ctx_.sys.ConstraintValues(t, q, near_, &g_near_);
  ctx_.stats.rows_evaluated_switches += static_cast<long>(near_.size());
}

// Smallest gap after projection: rows left out of the candidates within τ₀ have g > τ₀. The
// gaps are kept for the phase start, which follows at the same (t, q).
void SwitchHandler::RecordGaps(double t, const VectorXd& q) {
  if (!near_gaps_current_) NearGaps(t, q);
  snapshot_.rows.clear();
  if (near_.empty()) return;
  ctx_.stats.min_gap_after_projection =
      std::min(ctx_.stats.min_gap_after_projection, g_near_.minCoeff());
  if (std::is_sorted(near_.begin(), near_.end())) {
    snapshot_.rows = near_;
    snapshot_.gaps = g_near_;
    snapshot_.t = t;
    snapshot_.q = q;
  }
}

}  // namespace saltus::events

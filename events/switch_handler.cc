#include "events/switch_handler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

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

// "; largest at '<row>': <|value|>" for the row of `rows` with the largest |value| (the
// row a failed projection leaves furthest from its constraint, for the run-failure message).
std::string LargestRow(const engine::MechanicalSystem& sys, const std::vector<int>& rows,
                       const VectorXd& values) {
  if (values.size() == 0) return "";
  Eigen::Index k = 0;
  values.cwiseAbs().maxCoeff(&k);
  std::ostringstream out;
  out << "; largest at '" << sys.constraint_info(rows[static_cast<std::size_t>(k)]).name
      << "': " << std::abs(values[k]);
  return out.str();
}

}  // namespace

SwitchHandler::SwitchHandler(EventContext& ctx) : ctx_(ctx) {
  for (int r : ctx.rows.unilateral) frictional_ |= ctx.sys.constraint_info(r).friction > 0;
  // Room for the records of a few switches' events (an impact and mode changes), so that the
  // first records recycled do not allocate the spare list.
  spare_events_.reserve(8);
}

void SwitchHandler::Handle(double t, VectorXd& q, VectorXd& v, ContactModes& modes,
                           const FiredWitnesses& fired, std::vector<Event>* events) {
  const std::size_t first_event = events->size();
  const double energy_before = ctx_.mass.Energy(t, q, v);
  before_.assign(modes.states().begin(), modes.states().end());
  const std::vector<ContactState>& before = before_;
  const std::vector<int>& i1 = ClosedInPosition(t, q, v, modes.closed(), fired.impacting);
  ResolveImpacts(t, q, v, i1, energy_before, events);
  const std::vector<ContactState> after = DecideModes(t, q, v, i1, fired, events);
  modes.SetStates(after);
  Project(t, q, v, i1, modes.closed(), modes.active());
  RecordGaps(t, q);
  RecordModeChanges(t, before, after, energy_before, ctx_.mass.Energy(t, q, v), events);
  // Every event of this switch lists the modes of its contacts after it.
  for (std::size_t k = first_event; k < events->size(); ++k) {
    Event& e = (*events)[k];
    e.modes.resize(e.rows.size());
    e.slip_directions.assign(e.rows.size(), Eigen::Vector2d::Zero());
    e.tangential_impulses.resize(e.rows.size(), Eigen::Vector2d::Zero());
    for (std::size_t j = 0; j < e.rows.size(); ++j) {
      const ContactState* s = modes.state(e.rows[j]);
      e.modes[j] = s != nullptr ? s->mode : ContactMode::kOpen;
      if (s != nullptr) e.slip_directions[j] = s->slip_direction;
    }
  }
}

void SwitchHandler::Recycle(std::vector<Event>* events) {
  for (Event& e : *events) spare_events_.push_back(std::move(e));
  events->clear();
}

Event& SwitchHandler::NewEvent(std::vector<Event>* events, double t, EventKind kind) {
  if (spare_events_.empty()) {
    events->emplace_back();
  } else {
    events->push_back(std::move(spare_events_.back()));
    spare_events_.pop_back();
  }
  Event& e = events->back();
  e.t = t;
  e.kind = kind;
  e.rows.clear();
  e.impulses.clear();
  e.tangential_impulses.clear();
  e.modes.clear();
  e.slip_directions.clear();
  e.energy_before = e.energy_after = 0;
  e.energy_gain = e.indeterminate = false;
  return e;
}

void SwitchHandler::OntoPhaseManifold(double t, VectorXd& q, VectorXd& v,
                                      const std::vector<int>& phase_rows) {
  if (phase_rows.empty()) return;
  ctx_.sys.ConstraintValuesAndRates(t, q, v, phase_rows, &g_phase_, &rate_phase_);
  ctx_.stats.rows_evaluated_switches += static_cast<long>(phase_rows.size());
  const Thresholds& th = ctx_.opt.thresholds;
  if (g_phase_.lpNorm<Eigen::Infinity>() <= kPhaseResidualFraction * th.tau0 &&
      rate_phase_.lpNorm<Eigen::Infinity>() <= kPhaseResidualFraction * th.tau1) {
    return;
  }
  q_phase_ = q;
  v_phase_ = v;
  if (!engine::ProjectPositions(ctx_.sys, t, phase_rows, ctx_.opt.projection, &q_phase_)
           .converged ||
      !engine::ProjectVelocities(ctx_.sys, t, q_phase_, phase_rows, VelocityProjection(), &v_phase_)
           .converged) {
    return;
  }
  q.swap(q_phase_);
  v.swap(v_phase_);
}

void SwitchHandler::RecordModeChanges(double t, const std::vector<ContactState>& before,
                                      const std::vector<ContactState>& after, double energy_before,
                                      double energy_after, std::vector<Event>* events) {
  // Both lists ascending by row: a merge pass classifies every contact that changed.
  std::vector<int> closing, leaving, sticking, slipping;
  std::size_t i = 0, j = 0;
  while (i < before.size() || j < after.size()) {
    if (j == after.size() || (i < before.size() && before[i].row < after[j].row)) {
      leaving.push_back(before[i++].row);
    } else if (i == before.size() || after[j].row < before[i].row) {
      closing.push_back(after[j++].row);
    } else {
      const ContactState& b = before[i++];
      const ContactState& a = after[j++];
      if (a.mode == ContactMode::kStick && b.mode == ContactMode::kSlip) {
        sticking.push_back(a.row);
      } else if (a.mode == ContactMode::kSlip &&
                 (b.mode == ContactMode::kStick ||
                  (b.mode == ContactMode::kSlip && a.slip_direction.dot(b.slip_direction) < 0))) {
        slipping.push_back(a.row);
      }
    }
  }
  for (const auto& [kind, rows] :
       {std::pair{EventKind::kContactClosed, &closing}, std::pair{EventKind::kTakeoff, &leaving},
        std::pair{EventKind::kStick, &sticking}, std::pair{EventKind::kSlip, &slipping}}) {
    if (rows->empty()) continue;
    Event& ev = NewEvent(events, t, kind);
    ev.rows = *rows;
    ev.impulses.assign(rows->size(), 0.0);
    ev.energy_before = energy_before;
    ev.energy_after = energy_after;
  }
}

// I₁: unilateral rows closed in position (plus the closed and the impacting ones), among the
// candidates within τ₀ (a row left out has g > τ₀).
const std::vector<int>& SwitchHandler::ClosedInPosition(double t, const VectorXd& q,
                                                        const VectorXd& v,
                                                        const std::vector<int>& closed,
                                                        const std::vector<int>& impacting) {
  const double tau0 = ctx_.opt.thresholds.tau0;
  ctx_.candidates.Find(q, ctx_.zero_speed, 0.0, tau0, nullptr, &near_);
  std::vector<int>& i1 = i1_;
  i1.clear();
  if (!near_.empty()) {
    ctx_.sys.ConstraintValues(t, q, near_, &g_near_);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(near_.size());
    for (std::size_t k = 0; k < near_.size(); ++k) {
      if (g_near_[static_cast<Eigen::Index>(k)] <= tau0) i1.push_back(near_[k]);
    }
  }
  UnionInto(i1, closed, &union_buffer_);
  UnionInto(union_buffer_, impacting, &i1);
  // The candidates' gaps are those of the final q unless the projection moves it (Project).
  near_gaps_current_ = true;
  q_unmoved_ = true;
  if (i1.empty()) {
    u_.resize(0);
  } else {
    engine::ConstraintRate(ctx_.sys, t, q, v, i1, &u_);
  }
  v_of_u_ = v;
  ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  return i1;
}

// Impact (eq. 4) on the rows of I₁ that approach or rest (u ≤ τ₁). Rows already separating are
// left out: with Newton's law a separating row that took an impulse would leave with
// u⁺ = −e u⁻ < 0, i.e. be driven into the obstacle. If the impact makes such a row approach, a
// further impact is solved on the new set; every stage involves only rows with u⁻ ≤ τ₁, so none
// adds energy without friction. With a restitution threshold v_e, a row approaching slower than
// v_e takes e = 0.
void SwitchHandler::ResolveImpacts(double t, const VectorXd& q, VectorXd& v,
                                   const std::vector<int>& i1, double energy_before,
                                   std::vector<Event>* events) {
  const auto& opt = ctx_.opt;
  const double tau1 = opt.thresholds.tau1;
  bool approaching = AnyBelow(u_, -tau1);
  if (!approaching) return;
  // Workspaces of the switch handler (sized once, reused by every impact).
  VectorXd& total_impulse = total_impulse_;
  std::vector<Eigen::Vector2d>& total_tangential = total_tangential_;
  std::vector<int>& rows = stage_rows_;
  std::vector<Eigen::Index>& index = stage_index_;  // position of each row in i1
  std::vector<double>& e = stage_restitution_;
  VectorXd& normal = stage_normal_;
  std::vector<Eigen::Vector2d>& tangential = stage_tangential_;
  total_impulse.setZero(static_cast<Eigen::Index>(i1.size()));
  total_tangential.assign(i1.size(), Eigen::Vector2d::Zero());
  bool energy_gain = false, indeterminate = false;
  u_initial_ = u_;
  const VectorXd& u_initial = u_initial_;
  for (int stage = 0; stage < kMaxImpactStages && approaching; ++stage) {
    rows.clear();
    index.clear();
    e.clear();
    for (std::size_t k = 0; k < i1.size(); ++k) {
      const double uk = u_[static_cast<Eigen::Index>(k)];
      if (uk > tau1) continue;
      rows.push_back(i1[k]);
      index.push_back(static_cast<Eigen::Index>(k));
      const bool plastic = opt.restitution_threshold > 0 && uk > -opt.restitution_threshold;
      e.push_back(plastic ? 0.0 : ctx_.rows.restitution[static_cast<std::size_t>(i1[k])]);
    }
    ImpactStage(t, q, v, rows, e, &normal, &tangential, &energy_gain, &indeterminate);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      total_impulse[index[k]] += normal[static_cast<Eigen::Index>(k)];
      if (!tangential.empty())
        total_tangential[static_cast<std::size_t>(index[k])] += tangential[k];
    }
    engine::ConstraintRate(ctx_.sys, t, q, v, i1, &u_);
    v_of_u_ = v;
    ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
    approaching = AnyBelow(u_, -tau1);
  }
  if (approaching) {
    std::ostringstream msg;
    msg << "impact cascade did not settle after " << kMaxImpactStages << " stages at t = " << t
        << "; still approaching:";
    for (std::size_t k = 0; k < i1.size(); ++k) {
      if (u_[static_cast<Eigen::Index>(k)] < -tau1) {
        msg << " '" << ctx_.sys.constraint_info(i1[k]).name << "'";
      }
    }
    throw RunFailure{RunStatus::kLcpFailure, msg.str()};
  }
  // The event lists the rows that approached and those that took an impulse above round-off of
  // the largest one (a resting row solved with another's impact takes ~1e-15 of it).
  const double impulse_floor = 1e-9 * total_impulse.cwiseAbs().maxCoeff();
  Event& ev = NewEvent(events, t, EventKind::kImpact);
  for (std::size_t k = 0; k < i1.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    if (total_impulse[kk] > impulse_floor || u_initial[kk] < -tau1) {
      ev.rows.push_back(i1[k]);
      ev.impulses.push_back(total_impulse[kk]);
      ev.tangential_impulses.push_back(total_tangential[k]);
    }
  }
  ev.energy_before = energy_before;
  ev.energy_after = ctx_.mass.Energy(t, q, v);
  ev.energy_gain = energy_gain;
  ev.indeterminate = indeterminate;
}

void SwitchHandler::ImpactStage(double t, const VectorXd& q, VectorXd& v,
                                const std::vector<int>& rows, const std::vector<double>& e,
                                VectorXd* normal, std::vector<Eigen::Vector2d>* tangential,
                                bool* energy_gain, bool* indeterminate) {
  const auto lcp_start = std::chrono::steady_clock::now();
  auto fail = [&](const std::string& why) {
    std::ostringstream msg;
    msg << "impact problem failed at t = " << t << " on " << rows.size() << " contact(s): " << why;
    throw RunFailure{RunStatus::kLcpFailure, msg.str()};
  };
  ++ctx_.stats.lcp_solves;
  tangential->clear();
  if (!frictional_) {
    const contact::ImpactResult& impact = contact::SolveImpact(
        ctx_.sys, t, q, v, ctx_.rows.bilateral, rows, e, ctx_.opt.lcp, &impact_workspace_);
    ctx_.stats.lcp_seconds += SecondsSince(lcp_start);
    ctx_.stats.largest_lcp =
        std::max(ctx_.stats.largest_lcp, static_cast<long>(impact.largest_lcp));
    if (!impact.ok) fail(impact.message);
    v = impact.v_plus;
    *normal = impact.impulse_u;
    return;
  }
  const std::vector<contact::FrictionalContact> contacts = Contacts(t, q, v, rows, true, &e);
  const contact::FrictionalImpactResult impact = contact::SolveFrictionalImpact(
      ctx_.sys, t, q, v, ctx_.rows.bilateral, contacts, FrictionOptions());
  ctx_.stats.lcp_seconds += SecondsSince(lcp_start);
  if (!impact.ok) fail(impact.message);
  v = impact.v_plus;
  normal->resize(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    (*normal)[static_cast<Eigen::Index>(k)] = impact.contacts[k].normal;
    tangential->push_back(impact.contacts[k].tangential);
  }
  if (impact.diagnosis.status == contact::Solvability::kIndeterminate) {
    // Several post-impact velocities: the least kinetic energy was taken (friction_cone.h).
    if (!*indeterminate) ++ctx_.stats.indeterminate_impacts;
    *indeterminate = true;
    std::ostringstream msg;
    msg << "t = " << t << ": impact " << impact.diagnosis.message
        << "; the solution of least kinetic energy taken";
    if (ctx_.stats.impact_diagnoses.size() < 100) ctx_.stats.impact_diagnoses.push_back(msg.str());
  }
  if (impact.energy_gain) {
    *energy_gain = true;
    ++ctx_.stats.energy_gains;
    ctx_.stats.largest_energy_gain = std::max(ctx_.stats.largest_energy_gain, impact.contact_work);
  }
}

std::vector<contact::FrictionalContact> SwitchHandler::Contacts(
    double t, const VectorXd& q, const VectorXd& v, const std::vector<int>& rows, bool impact,
    const std::vector<double>* restitution) {
  std::vector<contact::FrictionalContact> contacts;
  contacts.reserve(rows.size());
  std::vector<int> tangents;
  VectorXd u_t;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    contact::FrictionalContact c = contact::FrictionalContact::FromSystem(
        ctx_.sys, rows[k], restitution != nullptr ? (*restitution)[k] : 0.0);
    if (!impact && c.friction > 0 && c.num_tangent_rows > 0) {
      tangents.assign(c.tangent_rows.begin(), c.tangent_rows.begin() + c.num_tangent_rows);
      engine::ConstraintRate(ctx_.sys, t, q, v, tangents, &u_t);
      if (u_t.norm() > ctx_.opt.thresholds.tau1) {
        c.sliding = true;
        c.slip_direction.setZero();
        c.slip_direction.head(u_t.size()) = u_t / u_t.norm();
      }
    }
    contacts.push_back(c);
  }
  return contacts;
}

engine::ProjectionOptions SwitchHandler::VelocityProjection() const {
  engine::ProjectionOptions po = ctx_.opt.projection;
  po.stall_tolerance =
      std::max(po.stall_tolerance, kVelocityStallFraction * ctx_.opt.thresholds.tau1);
  return po;
}

contact::FrictionOptions SwitchHandler::FrictionOptions() const {
  contact::FrictionOptions o;
  o.cone = ctx_.opt.friction_cone;
  o.facets = ctx_.opt.friction_facets;
  o.tolerance = ctx_.opt.lcp.tolerance;
  return o;
}

// Candidates for I₂: rows of I₁ whose velocity is (numerically) zero after the impact; a row
// with 0 < u⁺ ≤ τ₁ closes too (the Zeno rule), and with v_e > 0 a row leaving slower than v_e.
// The acceleration-level problem (eq. 12) keeps those with a compressive force.
std::vector<ContactState> SwitchHandler::DecideModes(double t, const VectorXd& q, VectorXd& v,
                                                     const std::vector<int>& i1,
                                                     const FiredWitnesses& fired,
                                                     std::vector<Event>* events) {
  const auto& opt = ctx_.opt;
  const auto& th = opt.thresholds;
  const double v_close = std::max(th.tau1, opt.restitution_threshold);
  const std::vector<int> grouped = TakeoffGroup(t, q, fired);
  auto candidates_below = [&](double bound) {
    std::vector<int> rows;
    for (std::size_t k = 0; k < i1.size(); ++k) {
      const bool forced = Contains(fired.forced_open, i1[k]) && !Contains(grouped, i1[k]);
      if (u_[static_cast<Eigen::Index>(k)] <= bound && !forced) {
        rows.push_back(i1[k]);
      }
    }
    return rows;
  };
  std::vector<int> candidates = candidates_below(v_close);
  std::vector<ContactState> states;
  if (candidates.empty()) return states;
  // Rows that are candidates only by v_e (τ₁ < u⁺ ≤ v_e) are to close with u = 0: the problem is
  // posed at the velocity projected onto them (γ of the closing state).
  auto closing_velocity = [&](VectorXd* v_closing) -> const VectorXd& {
    for (std::size_t k = 0; k < i1.size(); ++k) {
      const double uk = u_[static_cast<Eigen::Index>(k)];
      if (uk > th.tau1 && uk <= v_close) {
        *v_closing = v;
        const auto rv =
            engine::ProjectVelocities(ctx_.sys, t, q, Union(ctx_.rows.bilateral, candidates),
                                      VelocityProjection(), v_closing);
        if (rv.converged) return *v_closing;
      }
    }
    return v;
  };
  VectorXd v_closing;
  const VectorXd& v_acc = closing_velocity(&v_closing);
  std::string message;
  // lcp_seconds times the contact problems only, not the projection above.
  const auto lcp_start = std::chrono::steady_clock::now();
  RunStatus status = RunStatus::kFinished;
  if (!frictional_) {
    if (!DecideFrictionless(t, q, v_acc, candidates, grouped, &states, &message)) {
      status = RunStatus::kLcpFailure;
    }
  } else {
    std::vector<int> painleve_rows;
    status = DecideFrictional(t, q, v_acc, candidates, grouped, fired, &states, &message,
                              &painleve_rows);
    if (status == RunStatus::kPainleve && opt.painleve == PainleveResolution::kImpact) {
      // An impulse without collision at the contacts concerned (Génot & Brogliato 1999), then
      // the modes at the new velocity. Where the configuration is indeterminate and no impulse
      // exists, one of its solutions is taken (the one the contact solver returns): the problem
      // just solved, when the impact left v as it was and the problem was posed at v.
      const bool changed = TangentialImpact(t, q, v, painleve_rows, events);
      if (changed || !offered_solution_ || &v_acc != &v) {
        states.clear();
        status = DecideFrictional(t, q, v, candidates, grouped, fired, &states, &message,
                                  &painleve_rows);
      }
      if (status == RunStatus::kPainleve && offered_solution_) status = RunStatus::kFinished;
    }
  }
  if (status == RunStatus::kLcpFailure && v_close > th.tau1) {
    // Should the problem still fail, the rows closing by the threshold are left out (they leave
    // as without it).
    std::vector<int> strict = candidates_below(th.tau1);
    if (strict.size() < candidates.size()) {
      candidates = std::move(strict);
      ++ctx_.stats.threshold_closing_fallbacks;
      states.clear();
      std::vector<int> painleve_rows;
      status = frictional_ ? DecideFrictional(t, q, v, candidates, grouped, fired, &states,
                                              &message, &painleve_rows)
                           : (DecideFrictionless(t, q, v, candidates, grouped, &states, &message)
                                  ? RunStatus::kFinished
                                  : RunStatus::kLcpFailure);
    }
  }
  ctx_.stats.lcp_seconds += SecondsSince(lcp_start);
  if (status != RunStatus::kFinished) {
    std::ostringstream msg;
    msg << "contact problem (acceleration level) failed at t = " << t << " on " << candidates.size()
        << " contact(s): " << message;
    throw RunFailure{status, msg.str()};
  }
  return states;
}

// The fired take-offs and the unloaded closed contacts (λ_N ≤ τ₃ at t*) whose Jacobian row has
// the support of a row of the other list (the same coordinates of the same bodies: points of one
// face on one surface; SameSupport, so that round-off entries count as zeros), ascending.
std::vector<int> SwitchHandler::TakeoffGroup(double t, const VectorXd& q,
                                             const FiredWitnesses& fired) const {
  std::vector<int> group;
  if (fired.forced_open.empty() || fired.unloaded.empty()) return group;
  Eigen::MatrixXd g_fired, g_unloaded;
  ctx_.sys.ConstraintJacobian(t, q, fired.forced_open, &g_fired);
  ctx_.sys.ConstraintJacobian(t, q, fired.unloaded, &g_unloaded);
  std::vector<bool> in_a(static_cast<std::size_t>(g_fired.rows())),
      in_b(static_cast<std::size_t>(g_unloaded.rows()));
  for (Eigen::Index i = 0; i < g_fired.rows(); ++i) {
    for (Eigen::Index j = 0; j < g_unloaded.rows(); ++j) {
      if (SameSupport(g_fired.row(i), g_unloaded.row(j))) {
        in_a[static_cast<std::size_t>(i)] = in_b[static_cast<std::size_t>(j)] = true;
      }
    }
  }
  for (std::size_t i = 0; i < in_a.size(); ++i) {
    if (in_a[i]) group.push_back(fired.forced_open[i]);
  }
  for (std::size_t j = 0; j < in_b.size(); ++j) {
    if (in_b[j]) group.push_back(fired.unloaded[j]);
  }
  std::sort(group.begin(), group.end());
  return group;
}

bool SwitchHandler::DecideFrictionless(double t, const VectorXd& q, const VectorXd& v_acc,
                                       const std::vector<int>& candidates,
                                       const std::vector<int>& grouped,
                                       std::vector<ContactState>* states, std::string* message) {
  const auto& th = ctx_.opt.thresholds;
  const contact::ContactAccelerationResult acc = contact::SolveContactAccelerations(
      ctx_.sys, t, q, v_acc, ctx_.rows.bilateral, candidates, ctx_.opt.lcp);
  ++ctx_.stats.lcp_solves;
  ctx_.stats.largest_lcp = std::max(ctx_.stats.largest_lcp, static_cast<long>(acc.largest_lcp));
  if (!acc.ok) {
    *message = acc.message;
    return false;
  }
  // W_αα converts the force threshold τ₃ into an acceleration threshold.
  VectorXd w_diag;
  ctx_.mass.DelassusDiagonal(t, q, candidates, &w_diag);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    const bool resting =
        acc.accel_u[kk] <= w_diag[kk] * th.tau3 && !Contains(grouped, candidates[k]);
    if (acc.lambda_u[kk] > th.tau3 || resting) {
      states->push_back(ContactState{candidates[k]});
    }
  }
  return true;
}

RunStatus SwitchHandler::DecideFrictional(double t, const VectorXd& q, const VectorXd& v_acc,
                                          const std::vector<int>& candidates,
                                          const std::vector<int>& grouped,
                                          const FiredWitnesses& fired,
                                          std::vector<ContactState>* states, std::string* message,
                                          std::vector<int>* painleve_rows) {
  const std::vector<contact::FrictionalContact> contacts =
      Contacts(t, q, v_acc, candidates, false, nullptr);
  const contact::FrictionalAccelerationResult acc = contact::SolveFrictionalAccelerations(
      ctx_.sys, t, q, v_acc, ctx_.rows.bilateral, contacts, FrictionOptions());
  ++ctx_.stats.lcp_solves;
  const contact::Solvability status = acc.diagnosis.status;
  const bool painleve = status == contact::Solvability::kInconsistent ||
                        status == contact::Solvability::kIndeterminate;
  if (painleve) {
    auto& st = ctx_.stats;
    ++(status == contact::Solvability::kInconsistent ? st.painleve_inconsistent
                                                     : st.painleve_indeterminate);
    std::ostringstream msg;
    msg << "t = " << t << ": " << acc.diagnosis.message;
    if (st.painleve_diagnoses.size() < 100) st.painleve_diagnoses.push_back(msg.str());
    *message = "Painlevé configuration: " + acc.diagnosis.message;
    painleve_rows->clear();
    for (int k : acc.diagnosis.contacts) {
      painleve_rows->push_back(candidates[static_cast<std::size_t>(k)]);
    }
    std::sort(painleve_rows->begin(), painleve_rows->end());
    // An indeterminate problem still has solutions: one is offered (states) with the status.
    offered_solution_ = status == contact::Solvability::kIndeterminate && acc.ok;
    if (!offered_solution_) return RunStatus::kPainleve;
  } else if (!acc.ok) {
    *message = acc.message;
    return RunStatus::kLcpFailure;
  }
  std::vector<int> forceless;  // sliding with λ_N ≤ τ₃
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const contact::FrictionalContactResult& r = acc.contacts[k];
    if (r.mode == ContactMode::kOpen) continue;
    if (r.normal <= ctx_.opt.thresholds.tau3 && Contains(grouped, candidates[k])) continue;
    ContactState s{candidates[k], r.mode, r.slip_direction};
    const auto it = std::lower_bound(fired.slipping.begin(), fired.slipping.end(), s.row);
    if (s.mode == ContactMode::kStick && it != fired.slipping.end() && *it == s.row) {
      const Eigen::Vector2d& d =
          fired.slip_directions[static_cast<std::size_t>(it - fired.slipping.begin())];
      if (d.norm() > 0) {
        // Its stick → slip function fired: on the cone's boundary to round-off, it slides.
        s.mode = ContactMode::kSlip;
        s.slip_direction = d;
      }
    }
    states->push_back(s);
    if (s.mode == ContactMode::kSlip && r.normal <= ctx_.opt.thresholds.tau3) {
      forceless.push_back(s.row);
    }
  }
  for (int row : forceless) DropIfRedundant(t, q, row, states);
  return painleve ? RunStatus::kPainleve : RunStatus::kFinished;
}

// The rows a phase with `states` keeps active (bilateral, closed normal rows, sticking tangential
// rows) except `row`.
std::vector<int> SwitchHandler::ActiveRowsExcept(const std::vector<ContactState>& states,
                                                 int row) const {
  std::vector<int> rows = ctx_.rows.bilateral;
  for (const ContactState& s : states) {
    if (s.row == row) continue;
    rows.push_back(s.row);
    if (s.mode != ContactMode::kStick) continue;
    const auto tangents = ctx_.sys.TangentRows(s.row);
    rows.insert(rows.end(), tangents.begin(), tangents.end());
  }
  return rows;
}

void SwitchHandler::DropIfRedundant(double t, const VectorXd& q, int row,
                                    std::vector<ContactState>* states) {
  const std::vector<int> others = ActiveRowsExcept(*states, row);
  if (others.empty()) return;
  Eigen::MatrixXd g_row, g_others;
  const int one[] = {row};
  ctx_.sys.ConstraintJacobian(t, q, one, &g_row);
  ctx_.sys.ConstraintJacobian(t, q, others, &g_others);
  // Distance of G_row from the row space of the others, relative to its norm.
  const Eigen::VectorXd x =
      g_others.transpose().completeOrthogonalDecomposition().solve(g_row.transpose());
  const double distance = (g_others.transpose() * x - g_row.transpose()).norm();
  if (distance > kRedundancyTolerance * g_row.norm()) return;
  // With one μ over the rows it depends on, the phase keeps the minimum-norm split, another
  // admissible split of the same indeterminate problem (the symmetric loads of a spinning box).
  const double mu = ctx_.sys.constraint_info(row).friction;
  const double scale = x.cwiseAbs().maxCoeff();
  bool same_mu = true;
  for (std::size_t k = 0; k < others.size(); ++k) {
    if (std::abs(x[static_cast<Eigen::Index>(k)]) <= kRedundancyTolerance * scale) continue;
    const auto& info = ctx_.sys.constraint_info(others[k]);
    if (info.kind == engine::ConstraintKind::kTangential) continue;
    same_mu &= info.kind == engine::ConstraintKind::kUnilateral &&
               std::abs(info.friction - mu) <= 1e-12 * mu;
  }
  if (same_mu) return;
  std::erase_if(*states, [row](const ContactState& s) { return s.row == row; });
}

bool SwitchHandler::TangentialImpact(double t, const VectorXd& q, VectorXd& v,
                                     const std::vector<int>& candidates,
                                     std::vector<Event>* events) {
  const double energy_before = ctx_.mass.Energy(t, q, v);
  const std::vector<contact::FrictionalContact> contacts =
      Contacts(t, q, v, candidates, true, nullptr);
  ++ctx_.stats.lcp_solves;
  const contact::FrictionalImpactResult impact = contact::SolveTangentialImpact(
      ctx_.sys, t, q, v, ctx_.rows.bilateral, contacts, FrictionOptions());
  if (!impact.ok) {
    std::ostringstream msg;
    msg << "tangential impact failed at t = " << t << ": " << impact.message;
    throw RunFailure{RunStatus::kPainleve, msg.str()};
  }
  // No impulsive solution (z = 0 always solves the problem), or one that changes no velocity
  // by more than τ₁ (round-off impulses): nothing happens.
  if ((impact.v_plus - v).cwiseAbs().maxCoeff() <= ctx_.opt.thresholds.tau1) return false;
  v = impact.v_plus;
  Event& ev = NewEvent(events, t, EventKind::kTangentialImpact);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    ev.rows.push_back(candidates[k]);
    ev.impulses.push_back(impact.contacts[k].normal);
    ev.tangential_impulses.push_back(impact.contacts[k].tangential);
  }
  ev.energy_before = energy_before;
  ev.energy_after = ctx_.mass.Energy(t, q, v);
  ev.energy_gain = impact.energy_gain;
  return true;
}

// Rows of I₁ that open while still approaching with |u| ≤ τ₁ get zero velocity with the closed
// rows (else they would cross zero again at once and the same switch would repeat), and rows of
// I₁ that open with a slightly negative gap are moved to g = 0 with them. The projection of the
// other rows can push an open row of I₁, or a row outside I₁ by more than τ₀, below zero: such
// rows join the projected set and the projection is repeated.
void SwitchHandler::Project(double t, VectorXd& q, VectorXd& v, const std::vector<int>& i1,
                            const std::vector<int>& new_closed, const std::vector<int>& active) {
  const auto& opt = ctx_.opt;
  std::vector<int> stopped, penetrating;
  VectorXd& g_i1 = g_i1_;
  if (i1 == near_) {
    g_i1 = g_near_;  // the gaps of ClosedInPosition at this q (q has not moved since)
  } else {
    if (!i1.empty()) ctx_.sys.ConstraintValues(t, q, i1, &g_i1);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  }
  for (std::size_t k = 0; k < i1.size(); ++k) {
    if (Contains(new_closed, i1[k])) continue;
    if (u_[static_cast<Eigen::Index>(k)] < 0) stopped.push_back(i1[k]);
    if (g_i1[static_cast<Eigen::Index>(k)] < 0) penetrating.push_back(i1[k]);
  }
  if (active.empty() && stopped.empty() && penetrating.empty()) return;  // q stays: gaps current
  near_gaps_current_ = false;
  q_unmoved_ = false;
  const VectorXd q_start = q;
  for (;;) {
    q = q_start;
    const std::vector<int> rows = Union(active, penetrating);
    const auto rp = engine::ProjectPositions(ctx_.sys, t, rows, opt.projection, &q);
    if (!rp.converged) {
      VectorXd g;
      ctx_.sys.ConstraintValues(t, q, rows, &g);
      std::ostringstream msg;
      msg << "position projection failed at t = " << t << " s (residual " << rp.residual
          << " after " << rp.iterations << " iterations" << LargestRow(ctx_.sys, rows, g) << ")";
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
  const std::vector<int> rows = Union(active, stopped);
  const auto rv = engine::ProjectVelocities(ctx_.sys, t, q, rows, VelocityProjection(), &v);
  if (!rv.converged) {
    VectorXd g, g_dot;
    ctx_.sys.ConstraintValuesAndRates(t, q, v, rows, &g, &g_dot);
    std::ostringstream msg;
    msg << "velocity projection failed at t = " << t << " s (residual " << rv.residual
        << LargestRow(ctx_.sys, rows, g_dot) << ")";
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
  snapshot_.rate_rows.clear();
  if (near_.empty()) return;
  ctx_.stats.min_gap_after_projection =
      std::min(ctx_.stats.min_gap_after_projection, g_near_.minCoeff());
  if (std::is_sorted(near_.begin(), near_.end())) {
    snapshot_.rows = near_;
    snapshot_.gaps = g_near_;
    snapshot_.t = t;
    snapshot_.q = q;
    if (q_unmoved_) {  // u_ is ġ of I₁ at this q and v_of_u_
      snapshot_.rate_rows = i1_;
      snapshot_.rates = u_;
      snapshot_.v_rates = v_of_u_;
    }
  }
}

}  // namespace saltus::events

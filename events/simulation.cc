#include "events/simulation.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "contact/impact_problem.h"
#include "engine/block_sparse.h"

namespace saltus::events {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using engine::ConstraintKind;

std::string_view ToString(EventKind k) {
  switch (k) {
    case EventKind::kImpact:
      return "impact";
    case EventKind::kTakeoff:
      return "takeoff";
    case EventKind::kContactClosed:
      return "contact_closed";
    case EventKind::kTime:
      return "time";
  }
  return "unknown";
}

std::string_view ToString(RunStatus s) {
  switch (s) {
    case RunStatus::kFinished:
      return "finished";
    case RunStatus::kStepSizeUnderflow:
      return "step_size_underflow";
    case RunStatus::kNewtonFailure:
      return "newton_failure";
    case RunStatus::kLinearSolveFailure:
      return "linear_solve_failure";
    case RunStatus::kNonFinite:
      return "non_finite_state";
    case RunStatus::kLcpFailure:
      return "lcp_failure";
    case RunStatus::kProjectionFailure:
      return "projection_failure";
    case RunStatus::kEventAccumulation:
      return "event_accumulation";
    case RunStatus::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

namespace {

RunStatus FromStepStatus(integrators::StepStatus s) {
  switch (s) {
    case integrators::StepStatus::kAccepted:
      return RunStatus::kFinished;
    case integrators::StepStatus::kStepSizeUnderflow:
      return RunStatus::kStepSizeUnderflow;
    case integrators::StepStatus::kNewtonFailure:
      return RunStatus::kNewtonFailure;
    case integrators::StepStatus::kLinearSolveFailure:
      return RunStatus::kLinearSolveFailure;
    case integrators::StepStatus::kNonFinite:
      return RunStatus::kNonFinite;
  }
  return RunStatus::kNonFinite;
}

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

bool AllFinite(const VectorXd& x) { return x.allFinite(); }

// Sorted union / difference of ascending index lists.
std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}
std::vector<int> Difference(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Thrown inside the loop when a run cannot continue; turned into a RunResult.
struct RunFailure {
  RunStatus status;
  std::string message;
};

}  // namespace

namespace {

// Event functions of one phase at one time, from the dense output.
struct EventFunctions {
  double t = 0;
  VectorXd gaps;     // open rows
  VectorXd rates;    // open rows: ġ = G v + ∂g/∂t (tunnelling guard)
  VectorXd lambdas;  // closed rows (in order of `closed`)
};

}  // namespace

struct Simulation::Impl {
  const engine::MechanicalSystem& sys;
  const SimulationOptions& opt;
  std::unique_ptr<integrators::Integrator> integrator;
  engine::ConstrainedDynamics dynamics;
  std::vector<int> bilateral, unilateral;
  std::vector<double> restitution_of_row;  // per global row (unilateral only meaningful)
  SimulationStats stats;
  bool initialized = false;
  bool initial_output_pending = false;
  double next_output = 0;
  std::size_t next_time_event = 0;
  std::vector<double> time_events;
  std::deque<double> recent_events;  // times of recent events (Zeno guard)

  // Monitoring of the open unilateral rows during a phase (see OpenRowMode). Rows that are
  // clearly open are watched through g; rows that leave a contact with ġ > 0 through
  // (g − g_phase) / (t − t_phase), g_phase = min(g(t_phase), 0), which has no spurious root at
  // the start, where g is at round-off level (of either sign; header); other touching rows
  // (released with ġ ≤ 0) are watched through g + τ₀ so that a real penetration is still caught.
  // open_rows are the watched rows of the current step (header, "Watched rows"); the mode and
  // departing rate are kept per global row, so that rows can join and leave the watched set.
  std::vector<int> open_rows;
  enum OpenRowMode : char { kArmed, kDeparting, kUnarmed };
  std::vector<char> mode;              // per global row
  std::vector<int> not_armed;          // rows whose mode was set to kDeparting or kUnarmed
  std::vector<double> departing_rate;  // per global row: ġ at the phase start (kDeparting rows)
  std::vector<double> departing_gap;   // per global row: min(g, 0) at the phase start
  std::vector<char> is_unilateral;     // per global row
  double phase_start = 0;
  VectorXd zero_speed, speed_bound, dv_bound, v_sample_prev;
  std::vector<int> candidates_buf, near_buf;
  // Gaps of the candidates within τ₀ after the last switch, at (switch_t, switch_q): StartPhase
  // reuses them (rows ascending; empty when not available).
  std::vector<int> switch_rows;
  VectorXd switch_gaps, switch_q;
  double switch_t = 0;
  std::vector<int> touching_buf, missing_buf;
  std::vector<VectorXd> sample_q, sample_v;  // dense output at the samples of the current step
  engine::MassBlocks mass_blocks;
  engine::BlockSparseRows G_sparse;
  // DelassusDiagonal: Cholesky factors of the body blocks of M, valid where stamped with the
  // current call's stamp.
  std::vector<Eigen::LLT<MatrixXd>> block_llt;
  std::vector<long> block_llt_stamp;
  long llt_stamp = 1;
  // mass_blocks hold the system's constant M (HasConstantMassMatrix): not evaluated again, and
  // block_llt stays valid.
  bool constant_mass_valid = false;

  // Workspace (reused so that steps and switches do not allocate once sizes are known).
  VectorXd g_buf, gt_buf, vdot_buf, lambda_buf, gdot_buf, Mv_buf;
  MatrixXd G_buf, M_buf, MinvGt_buf;
  Eigen::LLT<MatrixXd> llt_buf;
  EventFunctions f_prev, f_next, f_mid, f_event;

  Impl(const engine::MechanicalSystem& s, const SimulationOptions& o)
      : sys(s), opt(o), dynamics(s) {}

  // A gap above this is clearly open, not round-off around a touching contact.
  double ArmingGap() const { return 1e-3 * opt.thresholds.tau0; }

  // Unilateral rows (ascending) that may be within `margin` of closing over `horizon` at speeds
  // `speed` (MechanicalSystem::CandidateRows), leaving out `excluded` (ascending) when given.
  void UnilateralCandidates(const VectorXd& q, const VectorXd& speed, double horizon, double margin,
                            const std::vector<int>* excluded, std::vector<int>* out) {
    out->clear();
    if (unilateral.empty()) return;
    if (opt.watch_all_rows) {
      *out = excluded != nullptr ? Difference(unilateral, *excluded) : unilateral;
      return;
    }
    sys.CandidateRows(q, speed, horizon, margin, &candidates_buf);
    for (int r : candidates_buf) {
      if (!is_unilateral[static_cast<std::size_t>(r)]) continue;
      if (excluded != nullptr && std::binary_search(excluded->begin(), excluded->end(), r)) {
        continue;
      }
      out->push_back(r);
    }
  }

  // T + V; T from the diagonal mass blocks when the system provides them (O(nv)).
  double Energy(double t, const VectorXd& q, const VectorXd& v) {
    double T = 0.0;
    if (constant_mass_valid || sys.BlockSparseMatrices(t, q, {}, &mass_blocks, nullptr)) {
      constant_mass_valid = sys.HasConstantMassMatrix();
      const int b = mass_blocks.block_size;
      Mv_buf.resize(b);  // M_c v_c of one body (no temporary per body)
      for (int c = 0; c * b < sys.nv(); ++c) {
        const auto vc = v.segment(c * b, b);
        Mv_buf.noalias() = mass_blocks.blocks.middleCols(c * b, b) * vc;
        T += 0.5 * vc.dot(Mv_buf);
      }
    } else {
      sys.MassMatrix(q, &M_buf);
      Mv_buf.noalias() = M_buf * v;
      T = 0.5 * v.dot(Mv_buf);
    }
    return T + sys.PotentialEnergy(t, q);
  }

  // Diagonal of the Delassus matrix W_αα = G_α M⁻¹ G_αᵀ for `rows`: by mass blocks when the
  // system provides its block structure, else with a dense Cholesky factor of M.
  void DelassusDiagonal(double t, const VectorXd& q, const std::vector<int>& rows, VectorXd* w) {
    w->resize(static_cast<Eigen::Index>(rows.size()));
    const bool have_mass = constant_mass_valid;
    if (sys.BlockSparseMatrices(t, q, rows, have_mass ? nullptr : &mass_blocks, &G_sparse)) {
      const int b = mass_blocks.block_size;
      // One Cholesky factor per body block, made when a row first needs it (a body is shared by
      // several rows: a sphere of a pile by up to a dozen).
      const auto num_blocks = static_cast<std::size_t>(sys.nv() / b);
      if (block_llt.size() != num_blocks) {
        block_llt.assign(num_blocks, Eigen::LLT<MatrixXd>());
        block_llt_stamp.assign(num_blocks, 0);
      }
      if (!have_mass) ++llt_stamp;  // the factors of a constant M stay valid
      constant_mass_valid = sys.HasConstantMassMatrix();
      for (int i = 0; i < G_sparse.rows(); ++i) {
        double sum = 0.0;
        for (int k = G_sparse.row_start[static_cast<std::size_t>(i)];
             k < G_sparse.row_start[static_cast<std::size_t>(i) + 1]; ++k) {
          const int c = G_sparse.block_col[static_cast<std::size_t>(k)];
          const Eigen::Map<const VectorXd> g(
              G_sparse.values.data() + static_cast<std::ptrdiff_t>(k) * b, b);
          const auto uc = static_cast<std::size_t>(c);
          if (block_llt_stamp[uc] != llt_stamp) {
            block_llt[uc].compute(mass_blocks.blocks.middleCols(c * b, b));
            block_llt_stamp[uc] = llt_stamp;
          }
          sum += g.dot(block_llt[uc].solve(g));
        }
        (*w)[i] = sum;
      }
      return;
    }
    sys.ConstraintJacobian(t, q, rows, &G_buf);
    sys.MassMatrix(q, &M_buf);
    llt_buf.compute(M_buf);
    MinvGt_buf = G_buf.transpose();
    llt_buf.solveInPlace(MinvGt_buf);
    for (Eigen::Index k = 0; k < w->size(); ++k) {
      (*w)[k] = G_buf.row(k).dot(MinvGt_buf.col(k));
    }
  }

  // Steps 1-4 of the header at a switching time t: impact, new closed set, projection. `v`
  // is v⁻ on entry and v⁺ on return; `closed` is updated; rows in `forced_open` (their
  // take-off function fired) cannot stay closed; rows in `impacting` (their impact function
  // fired) belong to I₁. All lists ascending. Throws RunFailure.
  void HandleSwitch(double t, VectorXd& q, VectorXd& v, std::vector<int>& closed,
                    const std::vector<int>& forced_open, const std::vector<int>& impacting,
                    std::vector<Event>* events);
  // Restarts the phase: freezes the active rows, arms the open rows whose gap is positive and
  // resets the integrator.
  void StartPhase(double t, const VectorXd& q, const VectorXd& v, const std::vector<int>& closed,
                  std::vector<int>* active);
};

Simulation::Simulation(std::shared_ptr<const engine::MechanicalSystem> system,
                       SimulationOptions options)
    : system_(std::move(system)), options_(std::move(options)) {
  Require(system_ != nullptr, "Simulation: null mechanical system");
  const auto& o = options_;
  Require(
      o.restitution >= 0.0 && o.restitution <= 1.0,
      "simulation option 'restitution' must be in [0, 1], got " + std::to_string(o.restitution));
  Require(o.restitution_threshold >= 0 && std::isfinite(o.restitution_threshold),
          "simulation option 'restitution_threshold' must be a finite number >= 0");
  Require(o.thresholds.tau0 > 0 && std::isfinite(o.thresholds.tau0),
          "simulation threshold 'gap' (tau0) must be > 0");
  Require(o.thresholds.tau1 > 0 && std::isfinite(o.thresholds.tau1),
          "simulation threshold 'velocity' (tau1) must be > 0");
  Require(o.thresholds.tau3 >= 0 && std::isfinite(o.thresholds.tau3),
          "simulation threshold 'force' (tau3) must be >= 0");
  Require(o.root_tolerance > 0 && o.root_tolerance < 1e-3,
          "simulation option 'root_tolerance' must be in (0, 1e-3)");
  Require(o.event_samples >= 0 && o.event_samples <= 1000,
          "simulation option 'event_samples' must be in [0, 1000]");
  Require(o.output_step >= 0 && std::isfinite(o.output_step),
          "simulation option 'output_step' must be >= 0");
  Require(o.zeno_max_events > 0, "simulation option 'zeno.max_events' must be > 0");
  Require(o.zeno_window > 0, "simulation option 'zeno.window' must be > 0");
  for (double te : o.time_events) {
    Require(std::isfinite(te), "simulation option 'time_events' contains a non-finite time");
  }

  impl_ = std::make_unique<Impl>(*system_, options_);
  impl_->integrator = integrators::MakeIntegrator(o.integrator, o.integrator_options);
  impl_->bilateral = system_->RowsOfKind(ConstraintKind::kBilateral);
  impl_->unilateral = system_->RowsOfKind(ConstraintKind::kUnilateral);
  impl_->restitution_of_row.assign(system_->num_constraints(), o.restitution);
  for (int r : impl_->unilateral) {
    const double e = system_->constraint_info(r).restitution;
    if (e >= 0) {
      Require(e <= 1.0, "contact '" + system_->constraint_info(r).name +
                            "': restitution must be in [0, 1], got " + std::to_string(e));
      impl_->restitution_of_row[r] = e;
    }
  }
  impl_->is_unilateral.assign(static_cast<std::size_t>(system_->num_constraints()), 0);
  for (int r : impl_->unilateral) impl_->is_unilateral[static_cast<std::size_t>(r)] = 1;
  impl_->mode.assign(static_cast<std::size_t>(system_->num_constraints()), Impl::kArmed);
  impl_->departing_rate.assign(static_cast<std::size_t>(system_->num_constraints()), 0.0);
  impl_->departing_gap.assign(static_cast<std::size_t>(system_->num_constraints()), 0.0);
  impl_->zero_speed = VectorXd::Zero(system_->nv());
  impl_->time_events = o.time_events;
  std::sort(impl_->time_events.begin(), impl_->time_events.end());
  impl_->stats.min_gap_after_projection = std::numeric_limits<double>::infinity();
}

Simulation::~Simulation() = default;

const SimulationStats& Simulation::stats() const {
  impl_->stats.integrator = impl_->integrator->stats();
  return impl_->stats;
}

Eigen::VectorXd Simulation::Multipliers() const {
  VectorXd vdot, lambda;
  impl_->dynamics.Solve(t_, q_, v_, active_, &vdot, &lambda);
  return lambda;
}

// ---------------------------------------------------------------------------------------
// Event handling at a switching time (steps 1-5 of the header).
// ---------------------------------------------------------------------------------------
void Simulation::Impl::HandleSwitch(double t, VectorXd& q, VectorXd& v, std::vector<int>& closed,
                                    const std::vector<int>& forced_open,
                                    const std::vector<int>& impacting, std::vector<Event>* events) {
  Impl& im = *this;
  const auto& th = opt.thresholds;
  const double energy_before = im.Energy(t, q, v);

  // I₁: unilateral rows closed in position (plus the currently closed ones), among the
  // candidates within τ₀ (a row left out has g > τ₀).
  im.UnilateralCandidates(q, im.zero_speed, 0.0, th.tau0, nullptr, &im.near_buf);
  std::vector<int> i1;
  if (!im.near_buf.empty()) {
    sys.ConstraintValues(t, q, im.near_buf, &im.g_buf);
    im.stats.rows_evaluated_switches += static_cast<long>(im.near_buf.size());
    for (std::size_t k = 0; k < im.near_buf.size(); ++k) {
      if (im.g_buf[static_cast<Eigen::Index>(k)] <= th.tau0) i1.push_back(im.near_buf[k]);
    }
  }
  i1 = Union(Union(i1, closed), impacting);

  // Normal velocities of I₁ (block-sparse G when available) and the impact problem if some
  // row approaches.
  VectorXd u;
  if (!i1.empty()) engine::ConstraintRate(sys, t, q, v, i1, &u);
  im.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  bool approaching = false;
  for (Eigen::Index k = 0; k < u.size(); ++k) approaching |= u[k] < -th.tau1;

  // Impact (eq. 4) on the rows of I₁ that approach or rest (u ≤ τ₁). Rows already separating
  // are left out: with Newton's law a separating row that took an impulse would leave with
  // u⁺ = −e u⁻ < 0, i.e. be driven into the obstacle. If the impact makes such a row approach,
  // a further impact is solved on the new set (a cascade of impacts at the same instant); every
  // stage involves only rows with u⁻ ≤ τ₁, so none adds energy.
  if (approaching) {
    // The cascade converges geometrically but can be slow in a dense pile: in the 100-sphere
    // pile at t = 0.5915 s (170 rows in I₁, e = 0.5) the fastest approach fell from 4.4e-3 to
    // 4.7e-6 m/s in 47 stages (ratio ~0.86 per stage, energy falling at every stage), so the
    // former limit of 50 stopped a settling cascade; the limit only guards against cycles.
    constexpr int kMaxStages = 1000;
    VectorXd total_impulse = VectorXd::Zero(static_cast<Eigen::Index>(i1.size()));
    const VectorXd u_initial = u;
    int stage = 0;
    for (; stage < kMaxStages && approaching; ++stage) {
      std::vector<int> rows;
      std::vector<Eigen::Index> index;  // position of each row in i1
      std::vector<double> e;
      for (std::size_t k = 0; k < i1.size(); ++k) {
        if (u[static_cast<Eigen::Index>(k)] <= th.tau1) {
          rows.push_back(i1[k]);
          index.push_back(static_cast<Eigen::Index>(k));
          // Restitution velocity threshold: an approach slower than v_e is plastic (header).
          const bool plastic = opt.restitution_threshold > 0 &&
                               u[static_cast<Eigen::Index>(k)] > -opt.restitution_threshold;
          e.push_back(plastic ? 0.0 : im.restitution_of_row[i1[k]]);
        }
      }
      const auto lcp_start = std::chrono::steady_clock::now();
      const contact::ImpactResult impact =
          contact::SolveImpact(sys, t, q, v, im.bilateral, rows, e, opt.lcp);
      im.stats.lcp_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - lcp_start).count();
      im.stats.largest_lcp = std::max(im.stats.largest_lcp, static_cast<long>(impact.largest_lcp));
      ++im.stats.lcp_solves;
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
      engine::ConstraintRate(sys, t, q, v, i1, &u);
      im.stats.rows_evaluated_switches += static_cast<long>(i1.size());
      approaching = false;
      for (Eigen::Index k = 0; k < u.size(); ++k) approaching |= u[k] < -th.tau1;
    }
    if (approaching) {
      std::ostringstream msg;
      msg << "impact cascade did not settle after " << kMaxStages << " stages at t = " << t;
      throw RunFailure{RunStatus::kLcpFailure, msg.str()};
    }
    Event ev;
    ev.t = t;
    ev.kind = EventKind::kImpact;
    for (std::size_t k = 0; k < i1.size(); ++k) {
      const auto kk = static_cast<Eigen::Index>(k);
      if (total_impulse[kk] > 0 || u_initial[kk] < -th.tau1) {
        ev.rows.push_back(i1[k]);
        ev.impulses.push_back(total_impulse[kk]);
      }
    }
    ev.energy_before = energy_before;
    ev.energy_after = im.Energy(t, q, v);
    events->push_back(std::move(ev));
  }

  // Candidates for I₂: rows of I₁ whose velocity is (numerically) zero after the impact. A row
  // with 0 < u⁺ ≤ τ₁ closes too: the Zeno rule that ends accumulations of impacts.
  // With a restitution threshold v_e, a row leaving slower than v_e is a candidate as well (a
  // bounce below v_e is plastic: header, step 2).
  const double v_close = std::max(th.tau1, opt.restitution_threshold);
  std::vector<int> candidates;
  for (std::size_t k = 0; k < i1.size(); ++k) {
    if (u[static_cast<Eigen::Index>(k)] <= v_close &&
        !std::binary_search(forced_open.begin(), forced_open.end(), i1[k])) {
      candidates.push_back(i1[k]);
    }
  }

  // Acceleration-level problem (eq. 12): which candidates keep a compressive force.
  std::vector<int> new_closed;
  if (!candidates.empty()) {
    // Rows that are candidates only by v_e (τ₁ < u⁺ ≤ v_e) are to close with u = 0: the problem
    // is solved at the velocity projected onto them (γ of the closing state). At v⁺ instead, the
    // 233 candidates of the 100-sphere pile at t = 0.7068 s (u⁺ up to 2.2e-3 m/s, γ up to
    // 1.06 m/s²) had no verified solution from the sparse path or Lemke; projected: solved.
    const VectorXd* v_acc = &v;
    VectorXd v_closing;
    for (std::size_t k = 0; k < i1.size() && v_acc == &v; ++k) {
      const double uk = u[static_cast<Eigen::Index>(k)];
      if (uk > th.tau1 && uk <= v_close) {
        v_closing = v;
        const auto rv = engine::ProjectVelocities(sys, t, q, Union(im.bilateral, candidates),
                                                  opt.projection, &v_closing);
        if (rv.converged) v_acc = &v_closing;
      }
    }
    // lcp_seconds times the contact problems only: the projection above (dense when the closing
    // rows are redundant) took 86 % of the former figure in the N = 100 pile at 0.6-0.75 s.
    const auto lcp_start = std::chrono::steady_clock::now();
    contact::ContactAccelerationResult acc =
        contact::SolveContactAccelerations(sys, t, q, *v_acc, im.bilateral, candidates, opt.lcp);
    ++im.stats.lcp_solves;
    if (!acc.ok && v_close > th.tau1) {
      // Should the problem still fail, the rows closing by the threshold are left out (they
      // leave as without it): the 204 rows with u⁺ ≤ τ₁ of the case above solve at once.
      std::vector<int> strict;
      for (std::size_t k = 0; k < i1.size(); ++k) {
        if (u[static_cast<Eigen::Index>(k)] <= th.tau1 &&
            !std::binary_search(forced_open.begin(), forced_open.end(), i1[k])) {
          strict.push_back(i1[k]);
        }
      }
      if (strict.size() < candidates.size()) {
        candidates = strict;
        ++im.stats.threshold_closing_fallbacks;
        acc = contact::SolveContactAccelerations(sys, t, q, v, im.bilateral, candidates, opt.lcp);
        ++im.stats.lcp_solves;
      }
    }
    im.stats.lcp_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - lcp_start).count();
    im.stats.largest_lcp = std::max(im.stats.largest_lcp, static_cast<long>(acc.largest_lcp));
    if (!acc.ok) {
      std::ostringstream msg;
      msg << "contact problem (acceleration level) failed at t = " << t << " on "
          << candidates.size() << " contact(s): " << acc.message;
      throw RunFailure{RunStatus::kLcpFailure, msg.str()};
    }
    // W_αα converts the force threshold τ₃ into an acceleration threshold.
    VectorXd w_diag;
    im.DelassusDiagonal(t, q, candidates, &w_diag);
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const auto kk = static_cast<Eigen::Index>(k);
      const double w_aa = w_diag[kk];
      if (acc.lambda_u[kk] > th.tau3 || acc.accel_u[kk] <= w_aa * th.tau3) {
        new_closed.push_back(candidates[k]);
      }
    }
  }

  // Rows of I₁ that open while still approaching with |u| ≤ τ₁ (numerically zero velocity):
  // their velocity is set to zero with the closed rows, otherwise they would cross zero again
  // at once and the same switch would repeat without end.
  // Likewise rows of I₁ that open with a slightly negative gap (located through the
  // penetration guard g + τ₀) are moved to g = 0 with the closed rows.
  std::vector<int> stopped, penetrating;
  VectorXd g_i1;
  if (!i1.empty()) sys.ConstraintValues(t, q, i1, &g_i1);
  im.stats.rows_evaluated_switches += static_cast<long>(i1.size());
  for (std::size_t k = 0; k < i1.size(); ++k) {
    if (std::binary_search(new_closed.begin(), new_closed.end(), i1[k])) continue;
    if (u[static_cast<Eigen::Index>(k)] < 0) stopped.push_back(i1[k]);
    if (g_i1[static_cast<Eigen::Index>(k)] < 0) penetrating.push_back(i1[k]);
  }

  bool near_gaps_current = false;  // im.near_buf / im.g_buf hold the candidates' gaps at q
  // Projection onto {g_A = 0, G_A v + ∂g_A/∂t = 0} (eq. 35, 36).
  const std::vector<int> active = Union(im.bilateral, new_closed);
  if (!active.empty() || !stopped.empty() || !penetrating.empty()) {
    // The projection of the other rows can push an open row of I₁ below zero: such rows join
    // the projected set and the projection is repeated (at most once per row).
    const VectorXd q_start = q;
    for (;;) {
      q = q_start;
      const auto rp =
          engine::ProjectPositions(sys, t, Union(active, penetrating), opt.projection, &q);
      if (!rp.converged) {
        std::ostringstream msg;
        msg << "position projection failed at t = " << t << " (residual " << rp.residual
            << " after " << rp.iterations << " iterations)";
        throw RunFailure{RunStatus::kProjectionFailure, msg.str()};
      }
      std::vector<int> more;
      if (!i1.empty()) {
        sys.ConstraintValues(t, q, i1, &g_i1);
        im.stats.rows_evaluated_switches += static_cast<long>(i1.size());
        for (std::size_t k = 0; k < i1.size(); ++k) {
          if (g_i1[static_cast<Eigen::Index>(k)] < 0 &&
              !std::binary_search(new_closed.begin(), new_closed.end(), i1[k]) &&
              !std::binary_search(penetrating.begin(), penetrating.end(), i1[k])) {
            more.push_back(i1[k]);
          }
        }
      }
      if (more.empty()) {
        // Rows outside I₁ (g > τ₀ at t*) are pushed below zero too when the projected rows
        // move the bodies by more than the rows' gap (header, step 4): those that end below
        // −τ₀ join the projected set as well. The gaps are those of the final q when the loop
        // ends here, and serve the smallest gap after projection below.
        im.UnilateralCandidates(q, im.zero_speed, 0.0, th.tau0, nullptr, &im.near_buf);
        if (!im.near_buf.empty()) {
          sys.ConstraintValues(t, q, im.near_buf, &im.g_buf);
          im.stats.rows_evaluated_switches += static_cast<long>(im.near_buf.size());
          for (std::size_t k = 0; k < im.near_buf.size(); ++k) {
            const int r = im.near_buf[k];
            if (im.g_buf[static_cast<Eigen::Index>(k)] < -th.tau0 &&
                !std::binary_search(active.begin(), active.end(), r) &&
                !std::binary_search(penetrating.begin(), penetrating.end(), r)) {
              more.push_back(r);
            }
          }
        }
        near_gaps_current = more.empty();
      }
      if (more.empty()) break;
      penetrating = Union(penetrating, more);
    }
    const auto rv =
        engine::ProjectVelocities(sys, t, q, Union(active, stopped), opt.projection, &v);
    if (!rv.converged) {
      std::ostringstream msg;
      msg << "velocity projection failed at t = " << t << " (residual " << rv.residual << ")";
      throw RunFailure{RunStatus::kProjectionFailure, msg.str()};
    }
  }
  // Smallest gap after projection: rows left out of the candidates within τ₀ have g > τ₀.
  // The gaps are kept for StartPhase, which follows at the same (t, q).
  if (!near_gaps_current) {
    im.UnilateralCandidates(q, im.zero_speed, 0.0, th.tau0, nullptr, &im.near_buf);
    if (!im.near_buf.empty()) {
      sys.ConstraintValues(t, q, im.near_buf, &im.g_buf);
      im.stats.rows_evaluated_switches += static_cast<long>(im.near_buf.size());
    }
  }
  im.switch_rows.clear();
  if (!im.near_buf.empty()) {
    im.stats.min_gap_after_projection =
        std::min(im.stats.min_gap_after_projection, im.g_buf.minCoeff());
    if (std::is_sorted(im.near_buf.begin(), im.near_buf.end())) {
      im.switch_rows = im.near_buf;
      im.switch_gaps = im.g_buf;
      im.switch_t = t;
      im.switch_q = q;
    }
  }

  const double energy_after = im.Energy(t, q, v);
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
  closed = new_closed;
}

void Simulation::Impl::StartPhase(double t, const VectorXd& q, const VectorXd& v,
                                  const std::vector<int>& closed, std::vector<int>* active) {
  Impl& im = *this;
  *active = Union(im.bilateral, closed);
  // Every row armed (only rows given another mode since the last phase start can differ: no
  // pass over all rows), then the open rows touching now (candidates within the arming gap) get
  // their mode; the watched set of the first step is computed after it (AdvanceTo).
  for (int r : im.not_armed) im.mode[static_cast<std::size_t>(r)] = kArmed;
  im.not_armed.clear();
  im.phase_start = t;
  const bool reuse = !im.switch_rows.empty() && im.switch_t == t &&
                     im.switch_q.size() == q.size() && im.switch_q == q;
  if (reuse) {
    // After a switch at this (t, q): its candidates within τ₀ without the closed rows (gaps
    // known), a superset of the candidates within the arming gap; the extra rows have g above the
    // arming gap and stay armed below, so the modes are those a second broadphase query would
    // give (the watched rows of the first step are computed in AdvanceTo).
    im.open_rows.clear();
    for (int r : im.switch_rows) {
      if (!std::binary_search(closed.begin(), closed.end(), r)) im.open_rows.push_back(r);
    }
  } else {
    im.UnilateralCandidates(q, im.zero_speed, 0.0, ArmingGap(), &closed, &im.open_rows);
  }
  if (!im.open_rows.empty()) {
    // Gaps: those of the last switch at this (t, q) where available, the others evaluated;
    // rates only of the rows touching now (the only ones that use them).
    const auto n = static_cast<Eigen::Index>(im.open_rows.size());
    VectorXd& g = im.g_buf;
    g.resize(n);
    im.missing_buf.clear();
    std::vector<Eigen::Index> missing_at;
    for (Eigen::Index k = 0; k < n; ++k) {
      const int row = im.open_rows[static_cast<std::size_t>(k)];
      const auto it = reuse ? std::lower_bound(im.switch_rows.begin(), im.switch_rows.end(), row)
                            : im.switch_rows.end();
      if (it != im.switch_rows.end() && *it == row) {
        g[k] = im.switch_gaps[it - im.switch_rows.begin()];
      } else {
        im.missing_buf.push_back(row);
        missing_at.push_back(k);
      }
    }
    if (!im.missing_buf.empty()) {
      VectorXd g_missing;
      im.sys.ConstraintValues(t, q, im.missing_buf, &g_missing);
      im.stats.rows_evaluated_switches += static_cast<long>(im.missing_buf.size());
      for (std::size_t j = 0; j < missing_at.size(); ++j) {
        g[missing_at[j]] = g_missing[static_cast<Eigen::Index>(j)];
      }
    }
    im.touching_buf.clear();
    for (Eigen::Index k = 0; k < n; ++k) {
      if (g[k] <= ArmingGap()) im.touching_buf.push_back(im.open_rows[static_cast<std::size_t>(k)]);
    }
    VectorXd& gdot = im.gdot_buf;
    if (!im.touching_buf.empty()) {
      engine::ConstraintRate(im.sys, t, q, v, im.touching_buf, &gdot);
      im.stats.rows_evaluated_switches += static_cast<long>(im.touching_buf.size());
    }
    for (Eigen::Index k = 0, j = 0; k < n; ++k) {
      const auto row = static_cast<std::size_t>(im.open_rows[static_cast<std::size_t>(k)]);
      if (g[k] > ArmingGap()) continue;
      const double rate = gdot[j++];
      im.not_armed.push_back(im.open_rows[static_cast<std::size_t>(k)]);
      if (rate > 0) {
        im.mode[row] = kDeparting;
        im.departing_rate[row] = rate;
        im.departing_gap[row] = std::min(g[k], 0.0);
      } else {
        im.mode[row] = kUnarmed;
      }
    }
  }
  // Integrator::Reset (and every accepted Step) passes the index-1 multipliers of the active rows
  // to MechanicalSystem::AcceptStep (force elements evaluated from the last accepted step).
  im.integrator->Reset(im.sys, *active, t, q, v);
}

void Simulation::SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const auto& sys = *system_;
  Require(std::isfinite(t), "initial time must be finite");
  Require(q.size() == sys.nq(), "initial q has size " + std::to_string(q.size()) +
                                    ", the system has nq = " + std::to_string(sys.nq()));
  Require(v.size() == sys.nv(), "initial v has size " + std::to_string(v.size()) +
                                    ", the system has nv = " + std::to_string(sys.nv()));
  Require(AllFinite(q), "initial q contains NaN or Inf");
  Require(AllFinite(v), "initial v contains NaN or Inf");
  auto& im = *impl_;
  t_ = t;
  q_ = q;
  v_ = v;
  closed_.clear();

  // Consistent initialization: bilateral constraints at position and velocity level.
  if (!im.bilateral.empty()) {
    const auto rp = engine::ProjectPositions(sys, t, im.bilateral, options_.projection, &q_);
    Require(rp.converged,
            "the initial positions cannot be projected onto the joint constraints "
            "(residual " +
                std::to_string(rp.residual) + "): check the joint locations");
    const auto rv = engine::ProjectVelocities(sys, t, q_, im.bilateral, options_.projection, &v_);
    Require(rv.converged, "the initial velocities cannot be made consistent with the joints");
  }
  // Initial penetration is an input error, not something to resolve silently.
  im.UnilateralCandidates(q_, im.zero_speed, 0.0, 0.0, nullptr, &im.near_buf);
  if (!im.near_buf.empty()) {
    sys.ConstraintValues(t, q_, im.near_buf, &im.g_buf);
    for (std::size_t k = 0; k < im.near_buf.size(); ++k) {
      const double g = im.g_buf[static_cast<Eigen::Index>(k)];
      if (g < -options_.thresholds.tau0) {
        std::ostringstream msg;
        msg << "contact '" << sys.constraint_info(im.near_buf[k]).name
            << "': the initial state penetrates by " << -g << " (gap threshold "
            << options_.thresholds.tau0 << ")";
        throw std::invalid_argument(msg.str());
      }
    }
  }
  std::vector<Event> events;
  try {
    im.HandleSwitch(t_, q_, v_, closed_, {}, {}, &events);
  } catch (const RunFailure& f) {
    throw std::invalid_argument("initial state: " + f.message);
  }
  for (const Event& e : events) {
    ++im.stats.events[static_cast<int>(e.kind)];
    for (Observer* o : observers_) o->OnEvent(e, q_, v, v_);
  }
  im.StartPhase(t_, q_, v_, closed_, &active_);
  im.initialized = true;
  im.initial_output_pending = true;
  im.next_output = t_;
  im.next_time_event = static_cast<std::size_t>(
      std::upper_bound(im.time_events.begin(), im.time_events.end(), t_) - im.time_events.begin());
  im.recent_events.clear();
}

RunResult Simulation::AdvanceTo(double t_end) {
  if (!impl_->initialized) throw std::logic_error("Simulation::AdvanceTo before SetState");
  Require(std::isfinite(t_end), "t_end must be finite");
  auto& im = *impl_;
  const auto& sys = *system_;
  const auto& th = options_.thresholds;
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result;

  auto emit_outputs_until = [&](double t_hi, bool inclusive) {
    if (options_.output_step <= 0) return;
    VectorXd qo, vo;
    while (im.next_output < t_hi || (inclusive && im.next_output <= t_hi)) {
      if (im.next_output > t_end) break;
      if (im.next_output <= t_) {
        qo = q_;
        vo = v_;
      } else {
        im.integrator->Interpolate(im.next_output, &qo, &vo);
      }
      for (Observer* o : observers_) o->OnOutput(im.next_output, qo, vo);
      im.next_output += options_.output_step;
      // Avoid drift of the output grid: snap to the nearest multiple.
      im.next_output = std::round(im.next_output / options_.output_step) * options_.output_step;
    }
  };
  if (im.initial_output_pending) {
    im.initial_output_pending = false;
    if (options_.output_step > 0) {
      emit_outputs_until(t_, true);
    } else {
      for (Observer* o : observers_) o->OnOutput(t_, q_, v_);
    }
  }

  // Values of the event functions at time s (dense output of the current step).
  VectorXd qs, vs;
  // Root finding workspace: crossing rows (secant estimate, index into open_rows), the rows and
  // gaps of a screening evaluation, and per crossing row whether it crosses after the screen time.
  std::vector<std::pair<double, std::size_t>> crossing;
  std::vector<int> screen_rows;
  VectorXd screen_gaps;
  std::vector<char> crossing_later;
  // Residual ‖G_A v̇ + γ_A‖∞ of the last solve for the multipliers, and the sample it was at (the
  // step end's serves the statistics: no second solve there).
  double lambda_residual = 0.0;
  int lambda_sample = -1;
  // Multipliers of the closed rows at (s, qs, vs) into f->lambdas.
  auto evaluate_lambdas = [&](double s, EventFunctions* f) {
    lambda_sample = -1;
    if (!closed_.empty()) {
      ++im.stats.multiplier_solves;
      const auto st = im.dynamics.Solve(s, qs, vs, active_, &im.vdot_buf, &im.lambda_buf);
      lambda_residual = st.residual;
      if (!st.ok) {
        throw RunFailure{RunStatus::kLinearSolveFailure,
                         "singular constrained dynamics while evaluating contact forces"};
      }
      f->lambdas.resize(static_cast<Eigen::Index>(closed_.size()));
      // closed_ rows sit after the bilateral rows in active_ only if sorted that way: map them.
      for (std::size_t k = 0; k < closed_.size(); ++k) {
        const auto pos =
            std::lower_bound(active_.begin(), active_.end(), closed_[k]) - active_.begin();
        f->lambdas[static_cast<Eigen::Index>(k)] = im.lambda_buf[pos];
      }
    }
  };
  // Every event function at sample k (time s) of the step: gaps and rates of the watched rows,
  // multipliers, at the dense output kept from the speed bounds (same s, same values).
  auto evaluate = [&](double s, int k, EventFunctions* f) {
    f->t = s;
    qs = im.sample_q[static_cast<std::size_t>(k)];
    vs = im.sample_v[static_cast<std::size_t>(k)];
    if (!im.open_rows.empty()) {
      sys.ConstraintValuesAndRates(s, qs, vs, im.open_rows, &f->gaps, &f->rates);
      im.stats.rows_evaluated_samples += 2 * static_cast<long>(im.open_rows.size());
    }
    evaluate_lambdas(s, f);
    if (!closed_.empty()) lambda_sample = k;
  };
  // Only the take-off functions at s (root finding on a closed row, the event time).
  auto evaluate_closed = [&](double s, EventFunctions* f) {
    f->t = s;
    im.integrator->Interpolate(s, &qs, &vs);
    evaluate_lambdas(s, f);
  };
  // φ for open row k (armed: g; departing: (g − g_phase) / (t − t_phase); unarmed: g + τ₀) and
  // closed row k (λ + τ₃: hysteresis).
  auto phi_of_gap = [&](double s, double g, std::size_t row) {
    switch (im.mode[row]) {
      case Impl::kDeparting:
        return s > im.phase_start ? (g - im.departing_gap[row]) / (s - im.phase_start)
                                  : im.departing_rate[row];
      case Impl::kUnarmed:
        return g + th.tau0;
      default:
        return g;
    }
  };
  auto phi_open = [&](const EventFunctions& f, std::size_t k) {
    return phi_of_gap(f.t, f.gaps[static_cast<Eigen::Index>(k)],
                      static_cast<std::size_t>(im.open_rows[k]));
  };
  // φ of open row k alone at time s (root finding: the other rows are not evaluated).
  VectorXd gap1;
  auto phi_open_at = [&](double s, std::size_t k) {
    const int row = im.open_rows[k];
    im.integrator->Interpolate(s, &qs, &vs);
    sys.ConstraintValues(s, qs, std::span<const int>(&row, 1), &gap1);
    ++im.stats.rows_evaluated_roots;
    return phi_of_gap(s, gap1[0], static_cast<std::size_t>(row));
  };
  auto phi_closed = [&](const EventFunctions& f, std::size_t k) {
    return f.lambdas[static_cast<Eigen::Index>(k)] + th.tau3;
  };

  // Illinois root finding of φ on [lo, hi] with φ(lo) = flo > 0 ≥ φ(hi) = fhi, down to
  // |hi − lo| ≤ root_tolerance·max(1, |t|); phi(s) evaluates only the row being located.
  // Returns the final bracket.
  auto locate = [&](double lo, double hi, double flo, double fhi, auto&& phi) {
    const double tol = options_.root_tolerance * std::max(1.0, std::abs(hi));
    int side = 0;
    for (int it = 0; it < 200 && hi - lo > tol; ++it) {
      double m = (lo * fhi - hi * flo) / (fhi - flo);
      if (!(m > lo && m < hi)) m = 0.5 * (lo + hi);
      const double fmid = phi(m);
      if (fmid > 0) {
        lo = m;
        flo = fmid;
        if (side == -1) fhi *= 0.5;
        side = -1;
      } else {
        hi = m;
        fhi = fmid;
        if (side == 1) flo *= 0.5;
        side = 1;
      }
    }
    return std::pair<double, double>(lo, hi);
  };

  // Tunnelling guard. An open row whose gap is positive at two consecutive samples may still
  // have crossed zero and come back between them (a fast body through a thin obstacle: the
  // signed distance to a box is positive on both sides of it). When the gap rate ġ = G v + ∂g/∂t
  // is negative at the first sample and positive at the second, the gap has a minimum between
  // them; a golden-section search for it (on the dense output, this row only) either finds a gap
  // ≤ 0, which brackets a crossing that `locate` then finds, or a positive minimum (no contact).
  // Not caught: a crossing and a turning point of the approach inside one sample interval.
  // The search stops as soon as the bracket is too short for the gap to reach zero at the
  // largest of the two end rates `rate_bound` (the rate runs from −|ġ_a| to +|ġ_b| through the
  // minimum), so a body passing by costs a few evaluations. The same rule on the sample interval
  // itself, with the sample gaps g_lo, g_hi, decides before any evaluation: in the 1000-sphere
  // pile to 0.12 s, 5,539 searches took their two first evaluations (a full interpolation each,
  // 77 % of the interpolations of root finding) and all ended there without a crossing. Returns
  // the located crossing, or ∞.
  auto find_tunnelling = [&](double lo, double hi, double g_lo, double g_hi, double rate_bound,
                             std::size_t r) {
    if ((hi - lo) * rate_bound < std::min(g_lo, g_hi))
      return std::numeric_limits<double>::infinity();
    const int row = im.open_rows[r];
    auto gap = [&](double s) {
      im.integrator->Interpolate(s, &qs, &vs);
      sys.ConstraintValues(s, qs, std::span<const int>(&row, 1), &gap1);
      ++im.stats.rows_evaluated_roots;
      return gap1[0];
    };
    const double tol = options_.root_tolerance * std::max(1.0, std::abs(hi));
    constexpr double kInvPhi = 0.6180339887498949;  // (√5 − 1)/2
    const double t_lo = lo;
    double x1 = hi - kInvPhi * (hi - lo), x2 = lo + kInvPhi * (hi - lo);
    double f1 = gap(x1), f2 = gap(x2);
    while (hi - lo > tol && (hi - lo) * rate_bound >= std::min(f1, f2)) {
      if (f1 <= 0.0 || f2 <= 0.0) {
        const double t_cross = f1 <= 0.0 ? x1 : x2;
        const auto [root, above] = locate(t_lo, t_cross, g_lo, f1 <= 0.0 ? f1 : f2,
                                          [&](double s) { return phi_open_at(s, r); });
        (void)above;
        return root;
      }
      if (f1 < f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - kInvPhi * (hi - lo);
        f1 = gap(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + kInvPhi * (hi - lo);
        f2 = gap(x2);
      }
    }
    return std::numeric_limits<double>::infinity();
  };

  try {
    while (t_ < t_end) {
      if (stop_requested_.exchange(false, std::memory_order_relaxed) ||
          (options_.stop_flag != nullptr && options_.stop_flag->load(std::memory_order_relaxed))) {
        result.status = RunStatus::kInterrupted;
        result.message = "stopped on request at t = " + std::to_string(t_);
        break;
      }
      double t_limit = t_end;
      bool time_event_at_limit = false;
      if (im.next_time_event < im.time_events.size() &&
          im.time_events[im.next_time_event] <= t_end) {
        t_limit = im.time_events[im.next_time_event];
        time_event_at_limit = true;
      }
      if (t_limit <= t_) {  // a time event exactly now
        ++im.next_time_event;
        continue;
      }
      const integrators::StepStatus st = im.integrator->Step(t_limit);
      if (st != integrators::StepStatus::kAccepted) {
        std::ostringstream msg;
        msg << "integrator '" << im.integrator->name() << "' failed at t = " << t_ << ": "
            << integrators::ToString(st);
        if (st == integrators::StepStatus::kStepSizeUnderflow) {
          msg << " (step below h_min = " << options_.integrator_options.h_min << ")";
        }
        if (const std::string detail = im.integrator->failure_detail(); !detail.empty()) {
          msg << ": " << detail;
        }
        throw RunFailure{FromStepStatus(st), msg.str()};
      }
      const double t0 = im.integrator->t_previous();
      const double t1 = im.integrator->t();
      const int n = options_.event_samples;

      // Watched rows of this step (header, "Watched rows"): speed bounds from the dense output
      // at the samples, then the candidates of q(t₀) over the horizon t₁ − t₀.
      {
        im.speed_bound.setZero(sys.nv());
        im.dv_bound.setZero(sys.nv());
        im.sample_q.resize(static_cast<std::size_t>(n + 2));
        im.sample_v.resize(static_cast<std::size_t>(n + 2));
        for (int k = 0; k <= n + 1; ++k) {
          const double s = (k == n + 1) ? t1 : t0 + (t1 - t0) * k / (n + 1);
          im.integrator->Interpolate(s, &qs, &vs);
          im.sample_q[static_cast<std::size_t>(k)] = qs;
          im.sample_v[static_cast<std::size_t>(k)] = vs;
          im.speed_bound = im.speed_bound.cwiseMax(vs.cwiseAbs());
          if (k > 0) im.dv_bound = im.dv_bound.cwiseMax((vs - im.v_sample_prev).cwiseAbs());
          im.v_sample_prev = vs;
        }
        im.speed_bound += im.dv_bound;
        std::vector<int> previous;
        previous.swap(im.open_rows);
        im.UnilateralCandidates(q_, im.speed_bound, t1 - t0, th.tau0, &closed_, &im.open_rows);
        // Rows that leave the watched set have g > τ₀ > the arming gap: watched through g again
        // if they come back.
        for (int r : previous) {
          if (!std::binary_search(im.open_rows.begin(), im.open_rows.end(), r)) {
            im.mode[static_cast<std::size_t>(r)] = Impl::kArmed;
          }
        }
        im.stats.watched_row_steps += static_cast<long>(im.open_rows.size());
        im.stats.max_watched_rows =
            std::max(im.stats.max_watched_rows, static_cast<int>(im.open_rows.size()));
      }

      // Scan the step for sign changes of the event functions.
      EventFunctions& f_prev = im.f_prev;
      EventFunctions& f_next = im.f_next;
      evaluate(t0, 0, &f_prev);
      double t_event = std::numeric_limits<double>::infinity();
      // Located impact time of each open row that crossed (∞ otherwise).
      std::vector<double> root_of_open(im.open_rows.size(),
                                       std::numeric_limits<double>::infinity());
      double s_prev = t0;
      crossing_later.assign(im.open_rows.size(), 0);
      // Roots within this of the phase start cannot be told from the start itself.
      const double root_tol_start =
          options_.root_tolerance * std::max(1.0, std::abs(im.phase_start));
      for (int k = 1; k <= n + 1 && !std::isfinite(t_event); ++k) {
        const double s = (k == n + 1) ? t1 : t0 + (t1 - t0) * k / (n + 1);
        evaluate(s, k, &f_next);
        // Rows crossing in [s_prev, s]: collected first (tunnelling handled on the way), then
        // located in the order of their secant estimate of the root, keeping the earliest.
        crossing.clear();
        for (std::size_t r = 0; r < im.open_rows.size(); ++r) {
          const double a = phi_open(f_prev, r), b = phi_open(f_next, r);
          if (a > 0 && b <= 0) {
            crossing.emplace_back(s_prev + (s - s_prev) * a / (a - b), r);
          } else if (a > 0 && b > 0 &&
                     im.mode[static_cast<std::size_t>(im.open_rows[r])] != Impl::kUnarmed &&
                     f_prev.rates[static_cast<Eigen::Index>(r)] < 0.0 &&
                     f_next.rates[static_cast<Eigen::Index>(r)] > 0.0) {
            // Armed (φ = g) or departing (φ = (g − g_phase)/(t − t_phase)) row with a minimum of
            // the gap between the samples: the tunnelling guard above.
            const double root =
                find_tunnelling(s_prev, s, f_prev.gaps[static_cast<Eigen::Index>(r)],
                                f_next.gaps[static_cast<Eigen::Index>(r)],
                                std::max(-f_prev.rates[static_cast<Eigen::Index>(r)],
                                         f_next.rates[static_cast<Eigen::Index>(r)]),
                                r);
            if (std::isfinite(root)) {
              t_event = std::min(t_event, root);
              root_of_open[r] = root;
            }
          }
        }
        std::sort(crossing.begin(), crossing.end());
        // Each root-finder iteration interpolates the whole state (O(nv)), so a crossing row is
        // located only if it can join the event: once an event time t_e is known, one evaluation
        // of the remaining rows at t_c = t_e + 3 ε_root (a single interpolation) leaves out every
        // row with φ(t_c) > 0 — its root lies beyond t_c, so its located left end would lie beyond
        // t_e + 2 ε_root, the simultaneity window below — and t_c is re-evaluated whenever t_e
        // moves earlier. The rows located are the same as when every crossing row was located.
        double screened_at = std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < crossing.size(); ++c) {
          const std::size_t r = crossing[c].second;
          if (std::isfinite(t_event)) {
            const double t_c = std::min(
                s, t_event + 3 * options_.root_tolerance * std::max(1.0, std::abs(t_event)));
            if (t_c < screened_at) {
              screened_at = t_c;
              screen_rows.clear();
              for (std::size_t c2 = c; c2 < crossing.size(); ++c2) {
                screen_rows.push_back(im.open_rows[crossing[c2].second]);
              }
              im.integrator->Interpolate(t_c, &qs, &vs);
              sys.ConstraintValues(t_c, qs, screen_rows, &screen_gaps);
              im.stats.rows_evaluated_roots += static_cast<long>(screen_rows.size());
              for (std::size_t c2 = c; c2 < crossing.size(); ++c2) {
                const std::size_t j = c2 - c;
                crossing_later[c2] = phi_of_gap(t_c, screen_gaps[static_cast<Eigen::Index>(j)],
                                                static_cast<std::size_t>(screen_rows[j])) > 0;
              }
            }
            if (crossing_later[c]) continue;
          }
          double a = phi_open(f_prev, r), b = phi_open(f_next, r);
          {
            auto [lo, hi] = locate(s_prev, s, a, b, [&](double sm) { return phi_open_at(sm, r); });
            auto& row_mode = im.mode[static_cast<std::size_t>(im.open_rows[r])];
            if (row_mode == Impl::kDeparting && lo - im.phase_start <= root_tol_start) {
              // A departing row "returning" at the phase start itself: its rate ġ(t_phase) > 0
              // is round-off (header); watched through g + τ₀ for the rest of the phase.
              row_mode = Impl::kUnarmed;
              ++im.stats.round_off_departures;
              a = phi_open(f_prev, r);
              b = phi_open(f_next, r);
              if (!(a > 0 && b <= 0)) continue;
              std::tie(lo, hi) =
                  locate(s_prev, s, a, b, [&](double sm) { return phi_open_at(sm, r); });
            }
            (void)hi;
            // The left end: the gap is still ≥ 0 there, so the row bounces off cleanly.
            t_event = std::min(t_event, lo);
            root_of_open[r] = lo;
          }
        }
        for (std::size_t r = 0; r < closed_.size(); ++r) {
          const double a = phi_closed(f_prev, r), b = phi_closed(f_next, r);
          if (a > 0 && b <= 0) {
            const auto [lo, hi] = locate(s_prev, s, a, b, [&](double sm) {
              evaluate_closed(sm, &im.f_mid);
              return phi_closed(im.f_mid, r);
            });
            (void)lo;
            t_event = std::min(t_event, hi);
          }
        }
        // Arm released rows whose gap became clearly positive.
        for (std::size_t r = 0; r < im.open_rows.size(); ++r) {
          const auto row = static_cast<std::size_t>(im.open_rows[r]);
          if (im.mode[row] == Impl::kUnarmed &&
              f_next.gaps[static_cast<Eigen::Index>(r)] > im.ArmingGap()) {
            im.mode[row] = Impl::kArmed;
          }
        }
        std::swap(f_prev, f_next);
        s_prev = s;
      }
      if (!std::isfinite(t_event)) {
        // A full step without event.
        emit_outputs_until(t1, true);
        // Constraint violations before the integrator's projection: the dense output at t1.
        qs = im.sample_q[static_cast<std::size_t>(n + 1)];
        vs = im.sample_v[static_cast<std::size_t>(n + 1)];
        if (!active_.empty()) {
          sys.ConstraintValues(t1, qs, active_, &im.g_buf);
          engine::ConstraintRate(sys, t1, qs, vs, active_, &im.gt_buf);  // G v + ∂g/∂t
          im.stats.max_position_violation =
              std::max(im.stats.max_position_violation, im.g_buf.cwiseAbs().maxCoeff());
          im.stats.max_velocity_violation =
              std::max(im.stats.max_velocity_violation, im.gt_buf.cwiseAbs().maxCoeff());
          // The residual of the index-1 solve at the step end: that of the multipliers at the
          // last sample (the dense output at t1) when there are closed rows, else one solve at
          // the integrator's state (bilateral rows only).
          double residual = lambda_residual;
          if (lambda_sample != n + 1) {
            residual = im.dynamics
                           .Solve(t1, im.integrator->q(), im.integrator->v(), active_, &im.vdot_buf,
                                  &im.lambda_buf)
                           .residual;
          }
          im.stats.max_acceleration_violation =
              std::max(im.stats.max_acceleration_violation, residual);
        }
        t_ = t1;
        q_ = im.integrator->q();
        v_ = im.integrator->v();
        for (Observer* o : observers_) {
          o->OnStep(t_, q_, v_);
          if (options_.output_step <= 0) o->OnOutput(t_, q_, v_);
        }
        if (time_event_at_limit && t1 >= t_limit) {
          ++im.next_time_event;
          std::vector<Event> events;
          Event te;
          te.t = t_;
          te.kind = EventKind::kTime;
          te.energy_before = te.energy_after = im.Energy(t_, q_, v_);
          events.push_back(te);
          const VectorXd v_minus = v_;
          im.HandleSwitch(t_, q_, v_, closed_, {}, {}, &events);
          for (const Event& e : events) {
            ++im.stats.events[static_cast<int>(e.kind)];
            for (Observer* o : observers_) o->OnEvent(e, q_, v_minus, v_);
          }
          im.StartPhase(t_, q_, v_, closed_, &active_);
        }
        continue;
      }

      // An event at t_event: outputs before it, then the switch.
      emit_outputs_until(t_event, false);
      VectorXd q_ev, v_ev;
      im.integrator->Interpolate(t_event, &q_ev, &v_ev);
      // Rows whose take-off function fired are released even if the LCP is degenerate.
      std::vector<int> forced_open, impacting;
      {
        // Open rows whose own root coincides with t_event (simultaneous impacts) belong to I₁
        // even if their gap at the left end of the bracket exceeds τ₀ (very fast approach).
        const double tol = 2 * options_.root_tolerance * std::max(1.0, std::abs(t_event));
        for (std::size_t r = 0; r < im.open_rows.size(); ++r) {
          if (root_of_open[r] <= t_event + tol) impacting.push_back(im.open_rows[r]);
        }
        EventFunctions& fe = im.f_event;
        evaluate_closed(t_event, &fe);
        for (std::size_t r = 0; r < closed_.size(); ++r) {
          if (phi_closed(fe, r) <= 0) forced_open.push_back(closed_[r]);
        }
      }
      t_ = t_event;
      q_ = q_ev;
      v_ = v_ev;
      const VectorXd v_minus = v_;
      std::vector<Event> events;
      im.HandleSwitch(t_, q_, v_, closed_, forced_open, impacting, &events);
      for (const Event& e : events) {
        ++im.stats.events[static_cast<int>(e.kind)];
        for (Observer* o : observers_) o->OnEvent(e, q_, v_minus, v_);
      }
      // Zeno guard: too many switches in a tiny window that the rules above did not resolve.
      im.recent_events.push_back(t_);
      while (!im.recent_events.empty() && im.recent_events.front() < t_ - options_.zeno_window) {
        im.recent_events.pop_front();
      }
      if (static_cast<int>(im.recent_events.size()) > options_.zeno_max_events) {
        std::ostringstream msg;
        msg << "event accumulation: more than " << options_.zeno_max_events << " events within "
            << options_.zeno_window << " s before t = " << t_;
        throw RunFailure{RunStatus::kEventAccumulation, msg.str()};
      }
      im.StartPhase(t_, q_, v_, closed_, &active_);
    }
    emit_outputs_until(t_, true);
  } catch (const RunFailure& failure) {
    result.status = failure.status;
    result.message = failure.message;
  }
  result.t = t_;
  im.stats.wall_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace saltus::events

#include "timestepping/moreau_jean.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "contact/friction_problem.h"
#include "contact/rolling_friction_step.h"
#include "contact/sparse_friction_step.h"
#include "engine/block_sparse.h"
#include "engine/disjoint_sets.h"

namespace saltus::timestepping {
namespace {

using Eigen::VectorXd;
using Clock = std::chrono::steady_clock;

// A sleeping body wakes when a component of its applied forces F changes by more than this,
// relative to max(1, ‖F_sleep‖∞) (header, "Sleeping"): round-off of a constant load stays below.
constexpr double kSleepForceChange = 1e-9;

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("moreau_jean: " + what);
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// The dense frictional step (contact::SolveFrictionalVelocityStep) on the system's contacts.
contact::FrictionalImpactResult DenseSolve(const engine::MechanicalSystem& system, double t,
                                           const VectorXd& q, const VectorXd& v, const VectorXd& f,
                                           std::span<const int> bilateral_rows,
                                           std::span<const int> unilateral_rows,
                                           std::span<const double> restitution,
                                           std::span<const double> gap_rate,
                                           const contact::FrictionOptions& fo) {
  std::vector<contact::FrictionalContact> contacts;
  contacts.reserve(unilateral_rows.size());
  for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
    contacts.push_back(
        contact::FrictionalContact::FromSystem(system, unilateral_rows[k], restitution[k]));
    if (!gap_rate.empty()) contacts.back().gap_rate = gap_rate[k];
  }
  return contact::SolveFrictionalVelocityStep(system, t, q, v, f, bilateral_rows, contacts, fo);
}

}  // namespace

MoreauJeanOptions FromSimulationOptions(const events::SimulationOptions& o) {
  MoreauJeanOptions m;
  m.h = o.integrator_options.h_init;
  m.restitution = o.restitution;
  m.restitution_threshold = o.restitution_threshold;
  m.tau0 = o.thresholds.tau0;
  m.tau1 = o.thresholds.tau1;
  m.output_step = o.output_step;
  m.lcp = o.lcp;
  m.friction_cone = o.friction_cone;
  m.friction_facets = o.friction_facets;
  m.projection = o.projection;
  m.stop_flag = o.stop_flag;
  return m;
}

contact::ImpactResult FrictionlessStepSolver::Solve(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
    std::span<const double> restitution, std::span<const double> gap_rate,
    const contact::LcpOptions& options) const {
  return contact::SolveVelocityStep(system, t, q, v, f, bilateral_rows, unilateral_rows,
                                    restitution, options, gap_rate);
}

namespace {

// A frictional step's answer as the step's contact result: the normal impulses and rates per
// contact (the tangential and rolling ones stay inside v_plus); `contact_rows` is the problem's
// size for largest_lcp.
contact::ImpactResult AsImpactResult(const contact::FrictionalImpactResult& r, int contact_rows) {
  contact::ImpactResult out;
  out.ok = r.ok;
  out.v_plus = r.v_plus;
  out.impulse_b = r.impulse_b;
  const auto nc = static_cast<Eigen::Index>(r.contacts.size());
  out.impulse_u.resize(nc);
  out.u_plus_u.resize(nc);
  for (Eigen::Index k = 0; k < nc; ++k) {
    out.impulse_u[k] = r.contacts[static_cast<std::size_t>(k)].normal;
    out.u_plus_u[k] = r.contacts[static_cast<std::size_t>(k)].normal_rate;
  }
  out.bilateral_rank = r.bilateral_rank;
  out.bilateral_residual = r.bilateral_residual;
  out.largest_lcp = contact_rows;
  out.message = r.message;
  return out;
}

// The union of three sorted, disjoint row lists a, b, c as one sorted list in *out; *scratch
// holds a ∪ b in between (both are kept by the caller so that no step allocates).
void MergeSortedRows(const std::vector<int>& a, const std::vector<int>& b,
                     const std::vector<int>& c, std::vector<int>* scratch, std::vector<int>* out) {
  scratch->clear();
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*scratch));
  out->clear();
  std::merge(scratch->begin(), scratch->end(), c.begin(), c.end(), std::back_inserter(*out));
}

}  // namespace

contact::ImpactResult FrictionalStepSolver::Solve(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
    std::span<const double> restitution, std::span<const double> gap_rate,
    const contact::LcpOptions& options) const {
  contact::FrictionOptions fo;
  fo.cone = cone_;
  fo.facets = facets_;
  fo.tolerance = options.tolerance;
  fo.max_iterations = options.max_iterations;
  fo.diagnose = false;  // a step needs a solution, not the Painlevé diagnosis
  int rows = 0;
  bool friction = false;
  for (int n : unilateral_rows) {
    rows += 1 + static_cast<int>(system.TangentRows(n).size());
    friction = friction || system.constraint_info(n).friction > 0.0;
  }
  std::optional<contact::FrictionalImpactResult> sparse;
  if (sparse_ && friction && bilateral_rows.empty()) {
    sparse = SolveSparse(system, t, q, v, f, unilateral_rows, restitution, gap_rate, fo);
  }
  const contact::FrictionalImpactResult r =
      sparse ? *std::move(sparse)
             : DenseSolve(system, t, q, v, f, bilateral_rows, unilateral_rows, restitution,
                          gap_rate, fo);
  return AsImpactResult(r, rows);
}

std::optional<contact::FrictionalImpactResult> FrictionalStepSolver::SolveSparse(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> unilateral_rows, std::span<const double> restitution,
    std::span<const double> gap_rate, contact::FrictionOptions fo) const {
  VectorXd start = VectorXd::Zero(3 * static_cast<Eigen::Index>(unilateral_rows.size()));
  for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
    const auto it = previous_.find(unilateral_rows[k]);
    if (it != previous_.end()) start.segment<3>(3 * static_cast<Eigen::Index>(k)) = it->second;
  }
  fo.warm_start = &start;
  contact::SparseStepOptions so;
  so.accepted_residual = accepted_residual_;
  so.stats = &stats_;
  so.gap_rate = gap_rate;
  so.memo = &memo_;
  std::optional<contact::FrictionalImpactResult> r = contact::SolveFrictionalVelocityStepSparse(
      system, t, q, v, f, unilateral_rows, restitution, fo, so);
  if (r && r->ok) {
    previous_.clear();
    for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
      const contact::FrictionalContactResult& c = r->contacts[k];
      previous_[unilateral_rows[k]] = {c.normal, c.tangential[0], c.tangential[1]};
    }
  }
  return r;
}

contact::ImpactResult RollingFrictionStepSolver::Solve(
    const engine::MechanicalSystem& system, double t, const VectorXd& q, const VectorXd& v,
    const VectorXd& f, std::span<const int> bilateral_rows, std::span<const int> unilateral_rows,
    std::span<const double> restitution, std::span<const double> gap_rate,
    const contact::LcpOptions& options) const {
  contact::FrictionOptions fo;
  fo.tolerance = options.tolerance;
  fo.max_iterations = options.max_iterations;
  int rows = 0;
  for (int n : unilateral_rows) {
    rows += 1 + static_cast<int>(system.TangentRows(n).size() + system.RollingRows(n).size());
  }
  std::optional<contact::FrictionalImpactResult> sparse;
  if (sparse_ && bilateral_rows.empty()) {
    constexpr int k5 = 5;
    VectorXd start = VectorXd::Zero(k5 * static_cast<Eigen::Index>(unilateral_rows.size()));
    for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
      const auto it = previous_.find(unilateral_rows[k]);
      if (it != previous_.end()) start.segment<k5>(k5 * static_cast<Eigen::Index>(k)) = it->second;
    }
    contact::RollingStepOptions ro;
    ro.accepted_residual = accepted_residual_;
    ro.gap_rate = gap_rate;
    ro.warm_start = &start;
    sparse = contact::SolveRollingFrictionVelocityStepSparse(system, t, q, v, f, unilateral_rows,
                                                             restitution, fo, ro, &sparse_stats_);
    if (sparse && sparse->ok) {
      previous_.clear();
      for (std::size_t k = 0; k < unilateral_rows.size(); ++k) {
        const contact::FrictionalContactResult& c = sparse->contacts[k];
        previous_[unilateral_rows[k]] << c.normal, c.tangential, c.rolling;
      }
    }
  }
  const bool dense_path_used = !sparse;
  contact::FrictionalImpactResult r =
      sparse ? *std::move(sparse)
             : contact::SolveRollingFrictionVelocityStep(
                   system, t, q, v, f, bilateral_rows, unilateral_rows, restitution, fo, gap_rate);
  // Dense path: an answer above the tolerance but within accepted_residual (header) is used and
  // counted (the sparse path counts its own in sparse_stats()).
  if (dense_path_used && !r.ok && r.residual <= accepted_residual_ && r.v_plus.size() == v.size() &&
      r.v_plus.allFinite()) {
    r.ok = true;
    r.message.clear();
    ++accepted_;
    largest_accepted_ = std::max(largest_accepted_, r.residual);
  }
  return AsImpactResult(r, rows);
}

MoreauJean::MoreauJean(std::shared_ptr<const engine::MechanicalSystem> system,
                       MoreauJeanOptions options,
                       std::shared_ptr<const StepContactSolver> contact_solver)
    : system_(std::move(system)), options_(options), contact_solver_(std::move(contact_solver)) {
  if (!system_) throw std::invalid_argument("moreau_jean: null system");
  const MoreauJeanOptions& o = options_;
  Require(o.h > 0 && std::isfinite(o.h),
          "the step (simulation.step) must be a finite number > 0, got " + std::to_string(o.h));
  Require(o.theta >= 0.5 && o.theta <= 1.0,
          "theta must be in [0.5, 1], got " + std::to_string(o.theta));
  Require(o.restitution >= 0.0 && o.restitution <= 1.0,
          "restitution must be in [0, 1], got " + std::to_string(o.restitution));
  Require(o.restitution_threshold >= 0.0 && std::isfinite(o.restitution_threshold),
          "restitution_threshold must be a finite number >= 0");
  Require(o.tau0 > 0 && o.tau1 > 0, "the thresholds tau0 and tau1 must be > 0");
  Require(o.output_step >= 0 && std::isfinite(o.output_step), "output_step must be >= 0");
  Require(o.joint_drift > 0, "joint_drift must be > 0");
  Require(o.sleep_speed > 0 && std::isfinite(o.sleep_speed),
          "sleep_speed must be a finite number > 0");
  Require(o.sleep_time > 0 && std::isfinite(o.sleep_time),
          "sleep_time must be a finite number > 0");
  Require(o.friction_cone != contact::FrictionCone::kFaceted || o.friction_facets >= 3,
          "friction_facets must be >= 3 with the faceted cone");
  stats_.min_gap_after_projection = std::numeric_limits<double>::infinity();
  const engine::MechanicalSystem& sys = *system_;
  bilateral_ = sys.RowsOfKind(engine::ConstraintKind::kBilateral);
  const std::vector<int> resistance = sys.RowsOfKind(engine::ConstraintKind::kResistance);
  for (int r : resistance) {
    const engine::ConstraintRowInfo& info = sys.constraint_info(r);
    Require(!info.spinning, "contact '" + sys.constraint_info(sys.NormalRow(r)).name +
                                "': spinning_friction is not supported (Siconos' rolling "
                                "friction cone has no spinning torque; docs/friction.md)");
  }
  Require(resistance.empty() || o.friction_cone == contact::FrictionCone::kExact,
          "rolling_friction needs the exact friction cone (friction_cone: exact)");
  is_unilateral_.assign(static_cast<std::size_t>(sys.num_constraints()), 0);
  restitution_of_row_.assign(static_cast<std::size_t>(sys.num_constraints()), o.restitution);
  bool friction = false;
  for (int r : sys.RowsOfKind(engine::ConstraintKind::kUnilateral)) {
    is_unilateral_[static_cast<std::size_t>(r)] = 1;
    friction = friction || sys.constraint_info(r).friction > 0.0;
    const double e = sys.constraint_info(r).restitution;
    if (e >= 0.0) {
      Require(e <= 1.0, "contact '" + sys.constraint_info(r).name +
                            "': restitution must be in [0, 1], got " + std::to_string(e));
      restitution_of_row_[static_cast<std::size_t>(r)] = e;
    }
  }
  friction_ = friction;
  project_ = o.project_contacts.value_or(!friction);
  if (!contact_solver_ && !resistance.empty()) {
    contact_solver_ = std::make_shared<RollingFrictionStepSolver>(o.tau0 / o.h);
  }
  if (!contact_solver_) {
    contact_solver_ =
        friction ? std::shared_ptr<const StepContactSolver>(std::make_shared<FrictionalStepSolver>(
                       o.friction_cone, o.friction_facets, true, o.tau0 / o.h))
                 : std::make_shared<FrictionlessStepSolver>();
  }
}

MoreauJean::~MoreauJean() = default;

double MoreauJean::Energy(double t, const VectorXd& q, const VectorXd& v) const {
  const engine::MechanicalSystem& sys = *system_;
  engine::MassBlocks blocks;
  double T = 0.0;
  if (sys.BlockSparseMatrices(t, q, {}, &blocks, nullptr)) {
    const int b = blocks.block_size;
    for (int c = 0; c * b < sys.nv(); ++c) {
      const auto vc = v.segment(c * b, b);
      T += 0.5 * vc.dot(blocks.blocks.middleCols(c * b, b) * vc);
    }
  } else {
    T = sys.KineticEnergy(q, v);
  }
  return T + sys.PotentialEnergy(t, q);
}

void MoreauJean::SetState(double t, const VectorXd& q, const VectorXd& v,
                          events::StateOrigin origin) {
  const engine::MechanicalSystem& sys = *system_;
  Require(std::isfinite(t), "initial time must be finite");
  Require(q.size() == sys.nq(), "initial q has size " + std::to_string(q.size()) +
                                    ", the system has nq = " + std::to_string(sys.nq()));
  Require(v.size() == sys.nv(), "initial v has size " + std::to_string(v.size()) +
                                    ", the system has nv = " + std::to_string(sys.nv()));
  Require(q.allFinite() && v.allFinite(), "initial q or v contains NaN or Inf");
  VectorXd q0 = q, v0 = v;
  if (!bilateral_.empty()) {
    const auto rp = engine::ProjectPositions(sys, t, bilateral_, options_.projection, &q0);
    Require(rp.converged, "the initial positions cannot be projected onto the joint constraints");
    const auto rv = engine::ProjectVelocities(sys, t, q0, bilateral_, options_.projection, &v0);
    Require(rv.converged, "the initial velocities cannot be made consistent with the joints");
  }
  if (origin == events::StateOrigin::kInitial) {
    IndexSet(t, q0, v0, 0.0, 0.0, 0.0);  // rows with g ≤ 0 at q0
    for (std::size_t k = 0; k < active_.size(); ++k) {
      const double g = gaps_[static_cast<Eigen::Index>(k)];
      if (g < -options_.tau0) {
        std::ostringstream msg;
        msg << "contact '" << sys.constraint_info(active_[k]).name
            << "': the initial state penetrates by " << -g << " (gap threshold " << options_.tau0
            << ")";
        throw std::invalid_argument(msg.str());
      }
    }
  }
  // Sleeping (header): the bodies are the blocks of the mass matrix; every body starts awake.
  engine::MassBlocks blocks;
  sleep_enabled_ = options_.sleeping && bilateral_.empty() &&
                   sys.BlockSparseMatrices(t, q0, {}, &blocks, nullptr) && blocks.block_size > 0;
  block_ = sleep_enabled_ ? blocks.block_size : 0;
  const std::size_t bodies = sleep_enabled_ ? static_cast<std::size_t>(sys.nv() / block_) : 0;
  calm_steps_.assign(bodies, 0);
  island_of_.assign(bodies, -1);
  asleep_.assign(bodies, 0);
  islands_.clear();
  sleep_rows_.clear();
  watch_rows_.clear();
  frozen_impulse_.clear();
  row_bodies_.assign(sleep_enabled_ ? static_cast<std::size_t>(sys.num_constraints()) : 0,
                     {kUnread, kUnread});
  sleep_force_ = VectorXd::Zero(sleep_enabled_ ? sys.nv() : 0);
  t_ = t_base_ = next_output_ = t;
  steps_from_base_ = 0;
  initial_output_done_ = false;
  q_ = q0;
  v_ = v0;
  active_.clear();
  impulses_.resize(0);
  last_step_ = 0.0;
  initialized_ = true;
}

void MoreauJean::IndexSet(double t, const VectorXd& q, const VectorXd& v, double margin,
                          double horizon, double speed) {
  const engine::MechanicalSystem& sys = *system_;
  // Rows that may come within `margin` (horizon 0) or within τ₀ over the horizon, then their
  // exact gaps.
  sys.CandidateRows(q, VectorXd::Constant(sys.nv(), speed), horizon,
                    margin > 0.0 ? options_.tau0 : 0.0, &candidates_);
  std::erase_if(candidates_, [&](int r) { return !is_unilateral_[static_cast<std::size_t>(r)]; });
  VectorXd g, g_dot;
  sys.ConstraintValuesAndRates(t, q, v, candidates_, &g, &g_dot);
  active_.clear();
  std::vector<Eigen::Index> keep;
  for (std::size_t k = 0; k < candidates_.size(); ++k) {
    // Per row: its own approach over two steps, v_e h and τ₀ (header, "Speculative contacts").
    const double own = margin > 0.0
                           ? 2.0 * h_ * std::max(-g_dot[static_cast<Eigen::Index>(k)], 0.0) +
                                 h_ * options_.restitution_threshold + options_.tau0
                           : 0.0;
    if (g[static_cast<Eigen::Index>(k)] <= std::min(margin, own)) {
      active_.push_back(candidates_[k]);
      keep.push_back(static_cast<Eigen::Index>(k));
    }
  }
  gaps_.resize(static_cast<Eigen::Index>(keep.size()));
  rates_.resize(static_cast<Eigen::Index>(keep.size()));
  for (std::size_t k = 0; k < keep.size(); ++k) {
    gaps_[static_cast<Eigen::Index>(k)] = g[keep[k]];
    rates_[static_cast<Eigen::Index>(k)] = g_dot[keep[k]];
  }
}

VectorXd MoreauJean::FreeVelocity(double t, const VectorXd& q, const VectorXd& f) const {
  const engine::MechanicalSystem& sys = *system_;
  engine::MassBlocks blocks;
  VectorXd v_free = v_;
  if (sys.BlockSparseMatrices(t, q, {}, &blocks, nullptr)) {
    const int b = blocks.block_size;
    for (int c = 0; c * b < sys.nv(); ++c) {
      v_free.segment(c * b, b) +=
          blocks.blocks.middleCols(c * b, b).ldlt().solve(f.segment(c * b, b));
    }
  } else {
    Eigen::MatrixXd M;
    sys.MassMatrix(q, &M);
    v_free += M.ldlt().solve(f);
  }
  return v_free;
}

bool MoreauJean::SolveContacts(double t_pred, const VectorXd& q_pred, const VectorXd& f, double h,
                               contact::ImpactResult* step, events::RunResult* result) {
  const engine::MechanicalSystem& sys = *system_;
  const MoreauJeanOptions& o = options_;
  const double th = o.theta * h;
  // The laws of the header, "Speculative contacts", as e and s of 0 ≤ U + e U_k + s ⊥ P ≥ 0.
  const std::size_t n = active_.size();
  std::vector<double> e(n, 0.0), s(n, 0.0), e_row(n, 0.0), gap_law(n, 0.0);
  std::vector<char> open_at_start(n, 0), newton(n, 0);
  VectorXd g_starts;
  if (speculative_step_) sys.ConstraintValues(t_, q_, active_, &g_starts);
  for (std::size_t k = 0; k < n; ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    const double u = rates_[i];
    const bool plastic = u > -o.restitution_threshold;
    e_row[k] = plastic ? 0.0 : restitution_of_row_[static_cast<std::size_t>(active_[k])];
    // The gap law's s, which leaves g ≥ min(g_k, 0) at the step's end (g_k at the step's start):
    // no new penetration, and an old one is not pushed out.
    if (!speculative_step_) {
      e[k] = e_row[k];
      continue;
    }
    const double g_start = g_starts[i];
    gap_law[k] = (gaps_[i] - std::min(g_start, 0.0)) / th;
    open_at_start[k] = g_start > 0.0;  // header, "Position projection": g_k ≤ 0 is closed
    if (!open_at_start[k]) {
      e[k] = e_row[k];  // the classical law
    } else if (gaps_[i] > 0.0 && !(e_row[k] > 0.0 && gaps_[i] + h * u <= 0.0)) {
      s[k] = gap_law[k];  // may close to g = 0 by the step's end, and not further
    } else if (e_row[k] > 0.0) {
      // At U_k < −v_e within one step h |U_k| of contact (the next step's prediction would
      // cross it) or crossed by this one: Newton's law now, and no penetration.
      newton[k] = 1;
      if (e_row[k] * u <= gap_law[k]) {
        e[k] = e_row[k];
      } else {
        s[k] = gap_law[k];
      }
    }  // else e = 0 or slow: the classical plastic law (header, "Penetration that is left")
  }
  // Deferred open rows (header): the gap-law rows that the free motion leaves open and that it
  // moves no faster than v_e towards contact.
  std::vector<char> deferred(n, 0);
  std::vector<int> watch;  // indices k of the deferred rows
  if (speculative_step_ && o.defer_open_rows && friction_) {
    for (std::size_t k = 0; k < n; ++k) {
      if (open_at_start[k] && !newton[k] && s[k] > 0.0) watch.push_back(static_cast<int>(k));
    }
    if (!watch.empty()) {
      const VectorXd v_free = FreeVelocity(t_pred, q_pred, f);
      std::vector<int> rows;
      for (int k : watch) rows.push_back(active_[static_cast<std::size_t>(k)]);
      VectorXd g, u_free;
      sys.ConstraintValuesAndRates(t_pred, q_pred, v_free, rows, &g, &u_free);
      std::vector<int> still;
      for (std::size_t j = 0; j < watch.size(); ++j) {
        const auto k = static_cast<std::size_t>(watch[j]);
        const double u = u_free[static_cast<Eigen::Index>(j)];
        if (u + s[k] >= 0.0 && u >= -o.restitution_threshold) {
          deferred[k] = 1;
          still.push_back(watch[j]);
        }
      }
      watch = std::move(still);
    }
  }
  // The problem on the rows that are not deferred, its answer spread over all of active_
  // (P = 0 on the deferred rows).
  std::vector<int> rows_in;
  std::vector<double> e_in, s_in;
  const auto solve = [&]() {
    rows_in.clear();
    e_in.clear();
    s_in.clear();
    for (std::size_t k = 0; k < n; ++k) {
      if (deferred[k]) continue;
      rows_in.push_back(active_[k]);
      e_in.push_back(e[k]);
      s_in.push_back(s[k]);
    }
    contact::ImpactResult r =
        contact_solver_->Solve(sys, t_pred, q_pred, v_, f, bilateral_, rows_in, e_in, s_in, o.lcp);
    if (rows_in.size() == n) {
      *step = std::move(r);
      return;
    }
    const bool full = r.impulse_u.size() == static_cast<Eigen::Index>(rows_in.size());
    VectorXd impulse = VectorXd::Zero(static_cast<Eigen::Index>(n));
    for (std::size_t k = 0, j = 0; k < n && full; ++k) {
      if (!deferred[k])
        impulse[static_cast<Eigen::Index>(k)] = r.impulse_u[static_cast<Eigen::Index>(j++)];
    }
    *step = std::move(r);
    step->impulse_u = std::move(impulse);
    step->u_minus_u.resize(0);
    step->u_plus_u.resize(0);
  };
  const Clock::time_point lcp_start = Clock::now();
  for (int round = 0;; ++round) {
    solve();
    // Restitution passes: rows open at the step's start with e > 0, approaching faster than v_e
    // at the start, that receive an impulse impact within the step: Newton's law on U_k, and no
    // penetration (a row driven in by another row's impulse keeps the gap law: Newton's law on a
    // velocity other than U_k could return more than |U_k|, header "Energy").
    for (int pass = 0; pass < kMaxRestitutionPasses && step->ok; ++pass) {
      bool again = false;
      for (std::size_t k = 0; k < n; ++k) {
        const auto i = static_cast<Eigen::Index>(k);
        if (!open_at_start[k] || newton[k] || !(e_row[k] > 0.0) || !(step->impulse_u[i] > 0.0)) {
          continue;
        }
        newton[k] = 1;
        again = true;
        if (e_row[k] * rates_[i] <= gap_law[k]) {
          e[k] = e_row[k];
          s[k] = 0.0;
        } else {
          e[k] = 0.0;
          s[k] = gap_law[k];
        }
      }
      if (!again) break;
      ++restitution_passes_;
      solve();
    }
    if (!step->ok || watch.empty()) break;
    // A deferred row whose law the answer violates by more than τ₀/(θ h) (it would end the step
    // below −τ₀) joins the problem; after kMaxDeferredRounds rounds all of them do.
    std::vector<int> rows;
    for (int k : watch) rows.push_back(active_[static_cast<std::size_t>(k)]);
    VectorXd g, u_plus;
    sys.ConstraintValuesAndRates(t_pred, q_pred, step->v_plus, rows, &g, &u_plus);
    std::vector<int> still;
    for (std::size_t j = 0; j < watch.size(); ++j) {
      const auto k = static_cast<std::size_t>(watch[j]);
      if (round < kMaxDeferredRounds &&
          u_plus[static_cast<Eigen::Index>(j)] + s[k] >= -o.tau0 / th) {
        still.push_back(watch[j]);
      } else {
        deferred[k] = 0;
      }
    }
    if (still.size() == watch.size()) break;
    watch = std::move(still);
    ++deferred_rounds_;
  }
  stats_.lcp_seconds += Seconds(lcp_start);
  if (!active_.empty()) ++stats_.lcp_solves;
  stats_.largest_lcp = std::max<long>(stats_.largest_lcp, step->largest_lcp);
  if (!step->ok) {
    *result = {events::RunStatus::kLcpFailure,
               "contact problem failed at t = " + std::to_string(t_) + " on " +
                   std::to_string(rows_in.size()) + " contact(s): " + step->message,
               t_};
    return false;
  }
  return true;
}

bool MoreauJean::ProjectContacts(double t, VectorXd* q) {
  const engine::MechanicalSystem& sys = *system_;
  const MoreauJeanOptions& o = options_;
  const VectorXd zero = VectorXd::Zero(sys.nv());
  std::vector<int> rows;
  const bool sleeping = sleep_enabled_ && !islands_.empty();
  // Rows with no awake body (between sleeping bodies, or one and the ground) stay out.
  const auto drop_sleeping_rows = [&](std::vector<int>* r) {
    if (!sleeping) return;
    ReadRowBodies(t, *q, *r);
    std::erase_if(*r, [&](int row) { return !HasAwakeBody(row); });
  };
  for (int pass = 0;;) {
    // The deepest penetration d among the overlapping rows.
    sys.CandidateRows(*q, zero, 0.0, 0.0, &candidates_);
    std::erase_if(candidates_, [&](int r) { return !is_unilateral_[static_cast<std::size_t>(r)]; });
    drop_sleeping_rows(&candidates_);
    VectorXd g;
    sys.ConstraintValues(t, *q, candidates_, &g);
    const double deepest = g.size() > 0 ? std::max(-g.minCoeff(), 0.0) : 0.0;
    if (deepest <= o.tau0) return true;
    if (pass == kMaxProjectionPasses) return false;
    if (pass == 0) deepest_before_projection_ = std::max(deepest_before_projection_, deepest);
    // Rows a correction of size ≤ 2 d can close join, with b = g: W λ + g ≥ 0 ⊥ λ ≥ 0.
    sys.CandidateRows(*q, zero, 0.0, 2.0 * deepest + o.tau0, &rows);
    std::erase_if(rows, [&](int r) { return !is_unilateral_[static_cast<std::size_t>(r)]; });
    drop_sleeping_rows(&rows);
    VectorXd g_t;
    sys.ConstraintValues(t, *q, rows, &g);
    sys.ConstraintTimeDerivative(t, *q, rows, &g_t);
    std::vector<double> e(rows.size(), 0.0), s(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto i = static_cast<Eigen::Index>(k);
      s[k] = g[i] - g_t[i];  // b = G·0 + ∂g/∂t + s = g
    }
    const contact::ImpactResult r =
        contact::SolveVelocityStep(sys, t, *q, zero, zero, {}, rows, e, o.lcp, s);
    if (!r.ok || !r.v_plus.allFinite()) return false;
    // A boundary row that pushes (λ > 0) would move a sleeping body: its island wakes (header,
    // "Sleeping") and the pass is made again with it awake (each such pass wakes an island).
    bool woke = false;
    for (std::size_t k = 0; sleeping && k < rows.size(); ++k) {
      if (!(r.impulse_u[static_cast<Eigen::Index>(k)] > 0.0)) continue;
      for (int c : BodiesOf(rows[k])) {
        if (c >= 0 && asleep_[static_cast<std::size_t>(c)]) {
          WakeIsland(island_of_[static_cast<std::size_t>(c)]);
          woke = true;
        }
      }
    }
    if (woke) continue;
    VectorXd q_new;
    sys.IntegratePosition(*q, r.v_plus, 1.0, &q_new);  // q ⊕ M⁻¹ Gᵀ λ
    *q = std::move(q_new);
    ++contact_projections_;
    ++pass;
  }
}

void MoreauJean::ReadRowBodies(double t, const VectorXd& q, std::span<const int> rows) {
  unread_.clear();
  for (int r : rows) {
    if (BodiesOf(r)[0] == kUnread) unread_.push_back(r);
  }
  if (unread_.empty()) return;
  // A contact row's bodies are its pair's: the blocks of its Jacobian row, fixed for the run.
  for (int r : unread_) row_bodies_[static_cast<std::size_t>(r)] = {-1, -1};
  if (!system_->BlockSparseMatrices(t, q, unread_, nullptr, &row_blocks_)) return;
  for (std::size_t i = 0; i < unread_.size() && static_cast<int>(i) < row_blocks_.rows(); ++i) {
    std::array<int, 2>& bodies = row_bodies_[static_cast<std::size_t>(unread_[i])];
    int n = 0;
    for (int k = row_blocks_.row_start[i]; k < row_blocks_.row_start[i + 1] && n < 2; ++k) {
      bodies[static_cast<std::size_t>(n++)] = row_blocks_.block_col[static_cast<std::size_t>(k)];
    }
  }
}

void MoreauJean::WakeIsland(int island) {
  if (island < 0) return;
  for (int c : islands_[static_cast<std::size_t>(island)]) {
    asleep_[static_cast<std::size_t>(c)] = 0;
    island_of_[static_cast<std::size_t>(c)] = -1;
    calm_steps_[static_cast<std::size_t>(c)] = 0;  // calm again for a whole window to sleep
  }
  islands_[static_cast<std::size_t>(island)].clear();
  ++islands_woken_;
}

bool MoreauJean::HasAwakeBody(int row) const {
  const std::array<int, 2>& bodies = BodiesOf(row);
  return std::any_of(bodies.begin(), bodies.end(),
                     [&](int c) { return c >= 0 && !asleep_[static_cast<std::size_t>(c)]; });
}

bool MoreauJean::HasSleepingBody(int row) const {
  const std::array<int, 2>& bodies = BodiesOf(row);
  return std::any_of(bodies.begin(), bodies.end(),
                     [&](int c) { return c >= 0 && asleep_[static_cast<std::size_t>(c)]; });
}

bool MoreauJean::WakeOnBrokenBoundaryRows(double t_pred, const VectorXd& q_pred, const VectorXd& w,
                                          double h, std::span<const int> rows) {
  if (rows.empty()) return false;
  const engine::MechanicalSystem& sys = *system_;
  const double th = options_.theta * h;
  // End gap g(q̃) + θ h U at the awake side's velocities w (the sleeping side's are 0), against
  // the floor min(g(q_k), 0) − τ₀ of the gap law (header, "Sleeping").
  sys.ConstraintValuesAndRates(t_pred, q_pred, w, rows, &g_w_, &u_w_);
  sys.ConstraintValues(t_, q_, rows, &g_k_);
  bool woke = false;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    if (g_w_[i] + th * u_w_[i] >= std::min(g_k_[i], 0.0) - options_.tau0) continue;
    for (int c : BodiesOf(rows[k])) {
      if (c >= 0 && asleep_[static_cast<std::size_t>(c)]) {
        WakeIsland(island_of_[static_cast<std::size_t>(c)]);
        woke = true;
      }
    }
  }
  return woke;
}

void MoreauJean::WakeAndSplit(double t_pred, const VectorXd& q_pred, const VectorXd& F, double h) {
  sleep_rows_.clear();
  watch_rows_.clear();
  if (std::find(asleep_.begin(), asleep_.end(), char{1}) == asleep_.end()) return;
  const engine::MechanicalSystem& sys = *system_;
  const Eigen::Index b = block_;
  for (std::size_t c = 0; c < asleep_.size(); ++c) {
    if (!asleep_[c]) continue;
    const auto i = static_cast<Eigen::Index>(c) * b;
    const double ref = sleep_force_.segment(i, b).lpNorm<Eigen::Infinity>();
    if ((F.segment(i, b) - sleep_force_.segment(i, b)).lpNorm<Eigen::Infinity>() >
        kSleepForceChange * std::max(1.0, ref)) {
      WakeIsland(island_of_[c]);
    }
  }
  ReadRowBodies(t_pred, q_pred, active_);
  // Boundary rows that the free motion of their awake side breaks wake their islands; the woken
  // bodies' own boundary rows are checked in the next pass.
  bool have_mass = false;
  for (bool woke = true; woke;) {
    boundary_.clear();
    for (int r : active_) {
      if (HasAwakeBody(r) && HasSleepingBody(r)) boundary_.push_back(r);
    }
    if (boundary_.empty()) break;
    if (!have_mass) {
      have_mass = sys.BlockSparseMatrices(t_pred, q_pred, {}, &mass_blocks_, nullptr);
      w_.setZero(sys.nv());
    }
    if (!have_mass) break;  // not reached: sleeping needs the mass blocks (SetState)
    for (int r : boundary_) {
      for (int c : BodiesOf(r)) {
        if (c < 0 || asleep_[static_cast<std::size_t>(c)]) continue;
        const Eigen::Index i = static_cast<Eigen::Index>(c) * b;
        w_.segment(i, b) = v_.segment(i, b) +
                           mass_blocks_.blocks.middleCols(i, b).ldlt().solve(h * F.segment(i, b));
      }
    }
    woke = WakeOnBrokenBoundaryRows(t_pred, q_pred, w_, h, boundary_);
  }
  // The rows with no awake body and the boundary rows stay out of the problem.
  std::size_t kept = 0;
  for (std::size_t k = 0; k < active_.size(); ++k) {
    const int r = active_[k];
    if (!HasAwakeBody(r)) {
      sleep_rows_.push_back(r);
      continue;
    }
    if (HasSleepingBody(r)) {
      watch_rows_.push_back(r);
      continue;
    }
    active_[kept] = r;
    gaps_[static_cast<Eigen::Index>(kept)] = gaps_[static_cast<Eigen::Index>(k)];
    rates_[static_cast<Eigen::Index>(kept)] = rates_[static_cast<Eigen::Index>(k)];
    ++kept;
  }
  active_.resize(kept);
  gaps_.conservativeResize(static_cast<Eigen::Index>(kept));
  rates_.conservativeResize(static_cast<Eigen::Index>(kept));
}

void MoreauJean::RejoinRows(double t_pred, const VectorXd& q_pred) {
  if (sleep_rows_.empty() && watch_rows_.empty()) return;
  report_rows_.swap(active_);
  MergeSortedRows(report_rows_, sleep_rows_, watch_rows_, &boundary_, &active_);
  sleep_rows_.clear();
  watch_rows_.clear();
  system_->ConstraintValuesAndRates(t_pred, q_pred, v_, active_, &gaps_, &rates_);
}

void MoreauJean::UpdateSleeping(const VectorXd& F) {
  const Eigen::Index b = block_;
  const std::size_t nb = asleep_.size();
  const long window = std::max(1L, std::lround(std::ceil(options_.sleep_time / options_.h - 1e-9)));
  bool any_ready = false;
  for (std::size_t c = 0; c < nb; ++c) {
    if (asleep_[c]) {
      ++sleeping_body_steps_;
      continue;
    }
    const bool calm = v_.segment(static_cast<Eigen::Index>(c) * b, b).lpNorm<Eigen::Infinity>() <=
                      options_.sleep_speed;
    calm_steps_[c] = calm ? calm_steps_[c] + 1 : 0;
    any_ready = any_ready || calm_steps_[c] >= window;
  }
  if (!any_ready) return;  // no awake body has been calm for the window
  // Islands: the awake bodies calm for the window, linked by the rows of I between two of them
  // (union–find; the ground is no vertex). A restless body is an island of its own, restless.
  const auto ready = [&](int c) {
    return c >= 0 && !asleep_[static_cast<std::size_t>(c)] &&
           calm_steps_[static_cast<std::size_t>(c)] >= window;
  };
  const auto restless_body = [&](int c) {
    return c >= 0 && !asleep_[static_cast<std::size_t>(c)] && !ready(c);
  };
  ReadRowBodies(t_, q_, active_);
  sets_.Reset(static_cast<int>(nb));
  for (int r : active_) {
    const auto& [a, c] = BodiesOf(r);
    if (ready(a) && ready(c)) sets_.Unite(a, c);
  }
  restless_.assign(nb, 0);
  for (std::size_t c = 0; c < nb; ++c) {
    if (restless_body(static_cast<int>(c))) restless_[c] = 1;
  }
  // A calm island stays awake when a row of I with P > 0 links it to a restless body (that body
  // loads it); a row with P = 0 does not (header, "Sleeping": it becomes a boundary row).
  for (std::size_t k = 0; k < active_.size(); ++k) {
    if (!(impulses_[static_cast<Eigen::Index>(k)] > 0.0)) continue;
    const auto& [a, c] = BodiesOf(active_[k]);
    if (ready(a) && restless_body(c)) restless_[static_cast<std::size_t>(sets_.Find(a))] = 1;
    if (ready(c) && restless_body(a)) restless_[static_cast<std::size_t>(sets_.Find(c))] = 1;
  }
  island_of_root_.assign(nb, -1);
  bool slept = false;
  for (std::size_t c = 0; c < nb; ++c) {
    if (asleep_[c]) continue;
    const auto root = static_cast<std::size_t>(sets_.Find(static_cast<int>(c)));
    if (restless_[root]) continue;
    if (island_of_root_[root] < 0) {
      // A woken island's slot is reused (islands_ grows only with the islands asleep at once).
      const auto free = std::find_if(islands_.begin(), islands_.end(),
                                     [](const std::vector<int>& i) { return i.empty(); });
      island_of_root_[root] = static_cast<int>(free - islands_.begin());
      if (free == islands_.end()) islands_.emplace_back();
      ++islands_slept_;
    }
    const int island = island_of_root_[root];
    islands_[static_cast<std::size_t>(island)].push_back(static_cast<int>(c));
    asleep_[c] = 1;
    island_of_[c] = island;
    slept = true;
    const Eigen::Index i = static_cast<Eigen::Index>(c) * b;
    v_.segment(i, b).setZero();
    sleep_force_.segment(i, b) = F.segment(i, b);
  }
  if (!slept) return;
  // The rows of the new islands keep their last impulses (reported while they sleep).
  for (std::size_t k = 0; k < active_.size(); ++k) {
    if (HasSleepingBody(active_[k])) {
      frozen_impulse_[active_[k]] = impulses_[static_cast<Eigen::Index>(k)];
    }
  }
}

bool MoreauJean::Step(double t_next, events::RunResult* result) {
  const engine::MechanicalSystem& sys = *system_;
  const MoreauJeanOptions& o = options_;
  const double h = t_next - t_;
  const double t_pred = t_ + (1.0 - o.theta) * h;
  VectorXd q_pred;
  sys.IntegratePosition(q_, v_, (1.0 - o.theta) * h, &q_pred);
  const bool speculative = o.speculative && contact_solver_->TakesGapRates();
  speculative_step_ = speculative;
  const double speed = speculative ? v_.lpNorm<Eigen::Infinity>() : 0.0;
  const double margin = speculative ? 2.0 * std::sqrt(3.0) * h * speed + o.tau0 : 0.0;
  h_ = h;
  IndexSet(t_pred, q_pred, v_, margin, speculative ? h : 0.0, speed);
  VectorXd f;
  sys.Forces(t_pred, q_pred, v_, &f);
  ++stats_.integrator.rhs_evaluations;
  if (f.size() != sys.nv() || !f.allFinite()) {
    *result = {events::RunStatus::kNonFinite,
               "forces are not finite at t = " + std::to_string(t_pred), t_};
    return false;
  }
  f *= h;
  // Sleeping (header): the islands an awake body may touch or whose forces changed wake; the
  // others' rows stay out of the problem and their bodies get no impulse (v stays 0).
  VectorXd F;
  if (sleep_enabled_) F = f / h;
  const auto freeze = [&]() {
    if (!sleep_enabled_ || islands_.empty()) return;
    WakeAndSplit(t_pred, q_pred, F, h);
    f = h * F;
    for (std::size_t c = 0; c < asleep_.size(); ++c) {
      if (asleep_[c]) f.segment(static_cast<Eigen::Index>(c) * block_, block_).setZero();
    }
  };
  freeze();
  contact::ImpactResult step;
  VectorXd q_next;
  for (int round = 0;;) {
    if (!SolveContacts(t_pred, q_pred, f, h, &step, result)) return false;
    sys.IntegratePosition(q_pred, step.v_plus, o.theta * h, &q_next);
    if (!q_next.allFinite()) break;
    // A boundary row whose law the answer breaks wakes its island, and the step is solved
    // again (header, "Sleeping"; each time an island wakes, so this ends).
    if (WakeOnBrokenBoundaryRows(t_pred, q_pred, step.v_plus, h, watch_rows_)) {
      RejoinRows(t_pred, q_pred);
      freeze();
      continue;
    }
    if (!speculative || round == kMaxSpeculativeRounds) break;
    // Rows outside I that the step's impulses drove below −τ₀ (header, "Speculative contacts"):
    // into I with their gaps at q̃, and the step once more.
    sys.CandidateRows(q_next, VectorXd::Zero(sys.nv()), 0.0, 0.0, &candidates_);
    std::vector<int> missed;
    for (int r : candidates_) {
      if (is_unilateral_[static_cast<std::size_t>(r)] &&
          !std::binary_search(active_.begin(), active_.end(), r) &&
          !std::binary_search(sleep_rows_.begin(), sleep_rows_.end(), r) &&
          !std::binary_search(watch_rows_.begin(), watch_rows_.end(), r)) {
        missed.push_back(r);
      }
    }
    if (missed.empty()) break;
    VectorXd g_end;
    sys.ConstraintValues(t_next, q_next, missed, &g_end);
    std::vector<int> add;
    for (std::size_t k = 0; k < missed.size(); ++k) {
      if (g_end[static_cast<Eigen::Index>(k)] < -o.tau0) add.push_back(missed[k]);
    }
    if (add.empty()) break;
    ++round;
    ++speculative_rounds_;
    RejoinRows(t_pred, q_pred);
    std::vector<int> merged;
    std::merge(active_.begin(), active_.end(), add.begin(), add.end(), std::back_inserter(merged));
    active_ = std::move(merged);
    sys.ConstraintValuesAndRates(t_pred, q_pred, v_, active_, &gaps_, &rates_);
    freeze();  // a sleeping body that an added row touches is checked as a boundary row
  }

  const Clock::time_point projection_start = Clock::now();
  const bool projected = !(speculative && project_ && bilateral_.empty() && q_next.allFinite()) ||
                         ProjectContacts(t_next, &q_next);
  projection_seconds_ += Seconds(projection_start);
  if (!projected) {
    *result = {events::RunStatus::kProjectionFailure,
               "the contact projection failed at t = " + std::to_string(t_next), t_};
    return false;
  }
  if (!bilateral_.empty()) {
    VectorXd g_b;
    sys.ConstraintValues(t_next, q_next, bilateral_, &g_b);
    if (g_b.lpNorm<Eigen::Infinity>() > o.joint_drift) {
      const auto rp = engine::ProjectPositions(sys, t_next, bilateral_, o.projection, &q_next);
      ++stats_.integrator.position_projections;
      if (!rp.converged) {
        *result = {events::RunStatus::kProjectionFailure,
                   "the joint projection failed at t = " + std::to_string(t_next), t_};
        return false;
      }
    }
    stats_.max_velocity_violation =
        std::max(stats_.max_velocity_violation, step.bilateral_residual);
  }
  if (!q_next.allFinite() || !step.v_plus.allFinite()) {
    *result = {events::RunStatus::kNonFinite,
               "non-finite state after the step from t = " + std::to_string(t_), t_};
    return false;
  }
  // Gaps of I at the step end: penetration statistics.
  if (!active_.empty()) {
    VectorXd g_end;
    sys.ConstraintValues(t_next, q_next, active_, &g_end);
    const double smallest = g_end.minCoeff();
    stats_.min_gap_after_projection = std::min(stats_.min_gap_after_projection, smallest);
    stats_.max_position_violation = std::max(stats_.max_position_violation, -smallest);
  }
  // The impact event of the step (header, "Outputs").
  events::Event event;
  event.t = t_next;
  event.kind = events::EventKind::kImpact;
  for (std::size_t k = 0; k < active_.size(); ++k) {
    const double p = step.impulse_u[static_cast<Eigen::Index>(k)];
    if (rates_[static_cast<Eigen::Index>(k)] < -o.tau1 && p > 0.0) {
      event.rows.push_back(active_[k]);
      event.impulses.push_back(p);
    }
  }
  const bool impact = !event.rows.empty();
  if (impact) event.energy_before = Energy(t_, q_, v_);
  const VectorXd v_before = v_;
  t_ = t_next;
  q_ = std::move(q_next);
  v_ = step.v_plus;
  impulses_ = step.impulse_u;
  last_step_ = h;
  integrators::IntegratorStats& is = stats_.integrator;
  ++is.accepted_steps;
  is.smallest_step = std::min(is.smallest_step, h);
  is.largest_step = std::max(is.largest_step, h);
  is.total_time += h;
  if (impact) {
    event.energy_after = Energy(t_, q_, v_);
    ++stats_.events[static_cast<int>(events::EventKind::kImpact)];
    contact_impacts_ += static_cast<long>(event.rows.size());
    for (events::Observer* obs : observers_) obs->OnEvent(event, q_, v_before, v_);
  }
  if (sleep_enabled_) {
    UpdateSleeping(F);
    // The rows of the sleeping islands rejoin I with their frozen impulses, and the boundary
    // rows with P = 0 (reported).
    if (!sleep_rows_.empty() || !watch_rows_.empty()) {
      MergeSortedRows(active_, sleep_rows_, watch_rows_, &boundary_, &report_rows_);
      report_impulses_.resize(static_cast<Eigen::Index>(report_rows_.size()));
      for (std::size_t k = 0, j = 0; k < report_rows_.size(); ++k) {
        const int r = report_rows_[k];
        double& p = report_impulses_[static_cast<Eigen::Index>(k)];
        if (j < active_.size() && active_[j] == r) {
          p = impulses_[static_cast<Eigen::Index>(j++)];
        } else if (std::binary_search(watch_rows_.begin(), watch_rows_.end(), r)) {
          p = 0.0;  // a boundary row: P = 0 in this step
        } else {
          const auto it = frozen_impulse_.find(r);
          p = it != frozen_impulse_.end() ? it->second : 0.0;
        }
      }
      active_.swap(report_rows_);
      impulses_.swap(report_impulses_);
    }
  }
  for (events::Observer* obs : observers_) obs->OnStep(t_, q_, v_);
  return true;
}

events::RunResult MoreauJean::AdvanceTo(double t_end) {
  if (!initialized_) throw std::logic_error("MoreauJean::AdvanceTo before SetState");
  if (!std::isfinite(t_end)) throw std::invalid_argument("moreau_jean: t_end must be finite");
  const Clock::time_point start = Clock::now();
  events::RunResult result;
  const double h = options_.h;
  const auto output = [&]() {
    if (options_.output_step > 0 && t_ < next_output_ - 1e-9 * h) return;
    for (events::Observer* obs : observers_) obs->OnOutput(t_, q_, v_);
    if (options_.output_step > 0) {
      while (next_output_ <= t_ + 1e-9 * h) next_output_ += options_.output_step;
    }
  };
  if (!initial_output_done_) {  // the initial state
    initial_output_done_ = true;
    output();
  }
  while (t_ < t_end - 1e-9 * h) {
    if ((options_.stop_flag != nullptr && options_.stop_flag->load(std::memory_order_relaxed)) ||
        stop_requested_.exchange(false, std::memory_order_relaxed)) {
      result = {events::RunStatus::kInterrupted, "stop requested", t_};
      stats_.wall_seconds += Seconds(start);
      return result;
    }
    // Steps land on t_base + k h; the last one is shortened to land on t_end.
    double t_next = t_base_ + static_cast<double>(steps_from_base_ + 1) * h;
    const bool last = t_next > t_end - 1e-9 * h;
    if (last) t_next = t_end;
    if (!Step(t_next, &result)) {
      stats_.wall_seconds += Seconds(start);
      return result;
    }
    ++steps_from_base_;
    if (last) {  // a later AdvanceTo continues on the grid t_end + k h
      t_base_ = t_end;
      steps_from_base_ = 0;
    }
    output();
  }
  result.t = t_;
  stats_.wall_seconds += Seconds(start);
  return result;
}

}  // namespace saltus::timestepping

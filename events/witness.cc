#include "events/witness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "engine/block_sparse.h"
#include "events/root_finding.h"

namespace saltus::events {

using Eigen::VectorXd;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// ---- StepSamples ----------------------------------------------------------------------------

void StepSamples::Take(const integrators::Integrator& integrator, int n) {
  integrator_ = &integrator;
  n_ = n;
  t0_ = integrator.t_previous();
  t1_ = integrator.t();
  const auto size = static_cast<std::size_t>(n + 2);
  q_.resize(size);
  v_.resize(size);
  taken_.assign(size, 0);
  bound_taken_ = false;
}

std::size_t StepSamples::Interpolated(int i) const {
  const auto k = static_cast<std::size_t>(i);
  if (!taken_[k]) {
    integrator_->Interpolate(time(i), &q_[k], &v_[k]);
    taken_[k] = 1;
  }
  return k;
}

const VectorXd& StepSamples::speed_bound() const {
  if (bound_taken_) return speed_bound_;
  const auto nv = integrator_->v().size();
  speed_bound_.setZero(nv);
  dv_bound_.setZero(nv);
  for (int i = 0; i <= n_ + 1; ++i) {
    speed_bound_ = speed_bound_.cwiseMax(v(i).cwiseAbs());
    if (i > 0) dv_bound_ = dv_bound_.cwiseMax((v(i) - v(i - 1)).cwiseAbs());
  }
  speed_bound_ += dv_bound_;
  bound_taken_ = true;
  return speed_bound_;
}

// ---- SampleForces ---------------------------------------------------------------------------

void SampleForces::NewStep(const StepSamples& samples) {
  samples_ = &samples;
  solved_ = -1;
}

void SampleForces::Solve(double t, const VectorXd& q, const VectorXd& v) {
  ++ctx_.stats.multiplier_solves;
  const auto st = dynamics_.Solve(t, q, v, modes_.active(), &vdot_, &lambda_);
  residual_ = st.residual;
  if (!st.ok) {
    throw RunFailure{RunStatus::kLinearSolveFailure,
                     "singular constrained dynamics while evaluating contact forces"};
  }
  split_.Apply(&lambda_);
}

const VectorXd& SampleForces::At(int i) {
  if (solved_ != i) {
    solved_ = -1;
    Solve(samples_->time(i), samples_->q(i), samples_->v(i));
    solved_ = i;
  }
  return lambda_;
}

const VectorXd& SampleForces::AtTime(const integrators::Integrator& integrator, double s) {
  solved_ = -1;
  integrator.Interpolate(s, &q_, &v_);
  Solve(s, q_, v_);
  return lambda_;
}

bool SameSupport(const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b) {
  if (a.size() != b.size()) return false;
  const double scale_a = a.cwiseAbs().maxCoeff(), scale_b = b.cwiseAbs().maxCoeff();
  for (Eigen::Index j = 0; j < a.size(); ++j) {
    if (WithinRowRoundOff(a[j], scale_a) != WithinRowRoundOff(b[j], scale_b)) return false;
  }
  return true;
}

double FindEarliestEvent(const StepSamples& samples, std::span<WitnessSet* const> families) {
  for (WitnessSet* f : families) f->BeginStep(samples);
  double t_event = kInf;
  for (int i = 1; i <= samples.n() + 1 && !std::isfinite(t_event); ++i) {
    for (WitnessSet* f : families) f->Sample(i);
    for (WitnessSet* f : families) f->Locate(&t_event);
    for (WitnessSet* f : families) f->EndInterval();
  }
  return t_event;
}

// ---- GapWitness -----------------------------------------------------------------------------

GapWitness::GapWitness(EventContext& ctx, const integrators::Integrator& integrator)
    : ctx_(ctx),
      integrator_(integrator),
      monitor_(static_cast<std::size_t>(ctx.sys.num_constraints()), kArmed),
      departing_rate_(static_cast<std::size_t>(ctx.sys.num_constraints()), 0.0),
      departing_gap_(static_cast<std::size_t>(ctx.sys.num_constraints()), 0.0) {}

double GapWitness::Phi(double s, double g, int row) const {
  const auto r = static_cast<std::size_t>(row);
  switch (monitor_[r]) {
    case kDeparting:
      return s > phase_start_ ? (g - departing_gap_[r]) / (s - phase_start_) : departing_rate_[r];
    case kUnarmed:
      return g + ctx_.opt.thresholds.tau0;
    default:
      return g;
  }
}

double GapWitness::GapOne(double s, std::size_t k) {
  const int row = open_rows_[k];
  integrator_.Interpolate(s, &qs_, &vs_);
  ctx_.sys.ConstraintValues(s, qs_, std::span<const int>(&row, 1), &gap1_);
  ++ctx_.stats.rows_evaluated_roots;
  return gap1_[0];
}

double GapWitness::PhiOne(double s, std::size_t k) { return Phi(s, GapOne(s, k), open_rows_[k]); }

double GapWitness::PhiAndRate(double s, double g, double g_dot, int row, double* rate) const {
  const double phi = Phi(s, g, row);
  *rate = g_dot;
  if (monitor_[static_cast<std::size_t>(row)] == kDeparting) {
    // φ = (g − g_phase)/(s − t_phase): φ' = (ġ − φ)/(s − t_phase); at the phase start itself φ
    // is the departing rate and φ' is not known (NaN: the root finder starts without it).
    *rate = s > phase_start_ ? (g_dot - phi) / (s - phase_start_)
                             : std::numeric_limits<double>::quiet_NaN();
  }
  return phi;
}

double GapWitness::PhiAndRateOne(double s, std::size_t k, double* rate) {
  const int row = open_rows_[k];
  integrator_.Interpolate(s, &qs_, &vs_);
  ctx_.sys.ConstraintValuesAndRates(s, qs_, vs_, std::span<const int>(&row, 1), &gap1_, &rate1_);
  ++ctx_.stats.rows_evaluated_roots;
  return PhiAndRate(s, gap1_[0], rate1_[0], row, rate);
}

Bracket GapWitness::LocateRow(std::size_t r) {
  const auto kr = static_cast<Eigen::Index>(r);
  const int row = open_rows_[r];
  if (monitor_[static_cast<std::size_t>(row)] == kDeparting && s_prev_ <= phase_start_) {
    // The interval that starts at the phase start: a departing row's φ = (g − g_phase)/(s −
    // t_phase) is 0/0 there and its rate (ġ − φ)/(s − t_phase) is round-off, so a root within a
    // few root tolerances of t_phase is noise that Newton may place anywhere in it; Illinois
    // (as before) keeps such a root at the start, where the round-off departure rule of
    // LocateCrossings recognises it (a clearance slider-crank re-closed a contact 5.4e-12 s after
    // its take-off otherwise).
    return LocateRoot(s_prev_, s_, PhiAt(s_prev_, gaps_prev_, r), PhiAt(s_, gaps_next_, r),
                      ctx_.opt.root_tolerance, [&](double s) { return PhiOne(s, r); });
  }
  double d_prev = 0, d_next = 0;
  const double a = PhiAndRate(s_prev_, gaps_prev_[kr], rates_prev_[kr], row, &d_prev);
  const double b = PhiAndRate(s_, gaps_next_[kr], rates_next_[kr], row, &d_next);
  return LocateRootWithRates(s_prev_, s_, a, b, d_prev, d_next, ctx_.opt.root_tolerance,
                             [&](double s, double* rate) { return PhiAndRateOne(s, r, rate); });
}

void GapWitness::StartPhase(double t, const VectorXd& q, const VectorXd& v,
                            const std::vector<int>& closed, const GapSnapshot* snapshot) {
  // Every row armed (only rows given another form since the last phase start can differ: no pass
  // over all rows), then the open rows touching now (candidates within the arming gap) get their
  // form; the watched set of the first step is computed after it (Watch).
  for (int r : not_armed_) monitor_[static_cast<std::size_t>(r)] = kArmed;
  not_armed_.clear();
  phase_start_ = t;
  const bool reuse = snapshot != nullptr && !snapshot->rows.empty() && snapshot->t == t &&
                     snapshot->q.size() == q.size() && snapshot->q == q;
  if (reuse) {
    // The switch's candidates within τ₀ without the closed rows (gaps known): a superset of the
    // candidates within the arming gap; the extra rows have g above the arming gap and stay armed
    // below, so the forms are those a second broadphase query would give.
    open_rows_.clear();
    for (int r : snapshot->rows) {
      if (!Contains(closed, r)) open_rows_.push_back(r);
    }
  } else {
    ctx_.candidates.Find(q, ctx_.zero_speed, 0.0, ArmingGap(), &closed, &open_rows_);
  }
  if (open_rows_.empty()) return;
  // Gaps: those of the snapshot where available, the others evaluated; rates only of the rows
  // touching now (the only ones that use them).
  const auto n = static_cast<Eigen::Index>(open_rows_.size());
  g_.resize(n);
  missing_.clear();
  std::vector<Eigen::Index> missing_at;
  for (Eigen::Index k = 0; k < n; ++k) {
    const int row = open_rows_[static_cast<std::size_t>(k)];
    const auto it = reuse ? std::lower_bound(snapshot->rows.begin(), snapshot->rows.end(), row)
                          : std::vector<int>::const_iterator{};
    if (reuse && it != snapshot->rows.end() && *it == row) {
      g_[k] = snapshot->gaps[it - snapshot->rows.begin()];
    } else {
      missing_.push_back(row);
      missing_at.push_back(k);
    }
  }
  if (!missing_.empty()) {
    VectorXd g_missing;
    ctx_.sys.ConstraintValues(t, q, missing_, &g_missing);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(missing_.size());
    for (std::size_t j = 0; j < missing_at.size(); ++j) {
      g_[missing_at[j]] = g_missing[static_cast<Eigen::Index>(j)];
    }
  }
  touching_.clear();
  for (Eigen::Index k = 0; k < n; ++k) {
    if (g_[k] <= ArmingGap()) touching_.push_back(open_rows_[static_cast<std::size_t>(k)]);
  }
  if (reuse && touching_ == snapshot->rate_rows && snapshot->v_rates.size() == v.size() &&
      snapshot->v_rates == v) {
    gdot_ = snapshot->rates;  // the switch's rates of these rows at this state
  } else if (!touching_.empty()) {
    engine::ConstraintRate(ctx_.sys, t, q, v, touching_, &gdot_);
    ctx_.stats.rows_evaluated_switches += static_cast<long>(touching_.size());
  }
  for (Eigen::Index k = 0, j = 0; k < n; ++k) {
    if (g_[k] > ArmingGap()) continue;
    const int row = open_rows_[static_cast<std::size_t>(k)];
    const auto r = static_cast<std::size_t>(row);
    const double rate = gdot_[j++];
    not_armed_.push_back(row);
    if (rate > ctx_.opt.thresholds.tau1) {
      monitor_[r] = kDeparting;
      departing_rate_[r] = rate;
      departing_gap_[r] = std::min(g_[k], 0.0);
    } else {
      monitor_[r] = kUnarmed;
    }
  }
}

void GapWitness::Watch(const VectorXd& q0, const StepSamples& samples,
                       const std::vector<int>& closed) {
  screen_rows_.swap(open_rows_);  // the previous watched rows (screen_rows_ is free here)
  const Eigen::VectorXd& speed =
      ctx_.candidates.UseSpeed() ? samples.speed_bound() : ctx_.zero_speed;
  ctx_.candidates.Find(q0, speed, samples.t1() - samples.t0(), ctx_.opt.thresholds.tau0, &closed,
                       &open_rows_);
  // Rows that leave the watched set have g > τ₀ > the arming gap: watched through g again if
  // they come back.
  for (int r : screen_rows_) {
    if (!Contains(open_rows_, r)) monitor_[static_cast<std::size_t>(r)] = kArmed;
  }
  ctx_.stats.watched_row_steps += static_cast<long>(open_rows_.size());
  ctx_.stats.max_watched_rows =
      std::max(ctx_.stats.max_watched_rows, static_cast<int>(open_rows_.size()));
}

void GapWitness::BeginStep(const StepSamples& samples) {
  samples_ = &samples;
  root_.assign(open_rows_.size(), kInf);
  crossing_later_.assign(open_rows_.size(), 0);
  // Roots within this of the phase start cannot be told from the start itself.
  root_tol_start_ = ctx_.opt.root_tolerance * std::max(1.0, std::abs(phase_start_));
  sample_ = -1;
  Sample(0);
  std::swap(gaps_prev_, gaps_next_);
  std::swap(rates_prev_, rates_next_);
}

void GapWitness::Sample(int i) {
  s_prev_ = s_;
  s_ = samples_->time(i);
  sample_ = i;
  if (open_rows_.empty()) return;
  ctx_.sys.ConstraintValuesAndRates(s_, samples_->q(i), samples_->v(i), open_rows_, &gaps_next_,
                                    &rates_next_);
  ctx_.stats.rows_evaluated_samples += 2 * static_cast<long>(open_rows_.size());
}

void GapWitness::Locate(double* t_event) {
  crossing_.clear();
  for (std::size_t r = 0; r < open_rows_.size(); ++r) {
    const auto kr = static_cast<Eigen::Index>(r);
    const double a = PhiAt(s_prev_, gaps_prev_, r), b = PhiAt(s_, gaps_next_, r);
    if (a > 0 && b <= 0) {
      crossing_.emplace_back(s_prev_ + (s_ - s_prev_) * a / (a - b), r);
    } else if (a > 0 && b > 0 && monitor_[static_cast<std::size_t>(open_rows_[r])] != kUnarmed &&
               rates_prev_[kr] < 0.0 && rates_next_[kr] > 0.0) {
      // Armed or departing row with a minimum of the gap between the samples: the tunnelling
      // guard (root_finding.h).
      const double root = FindGapDip(
          s_prev_, s_, gaps_prev_[kr], gaps_next_[kr], std::max(-rates_prev_[kr], rates_next_[kr]),
          ctx_.opt.root_tolerance, [&](double s) { return GapOne(s, r); },
          [&](double s) { return PhiOne(s, r); });
      if (std::isfinite(root)) {
        *t_event = std::min(*t_event, root);
        root_[r] = root;
      }
    }
  }
  LocateCrossings(t_event);
}

// Each root-finder iteration interpolates the whole state (O(nv)), so a crossing row is located
// only if it can join the event: once an event time t_e is known, one evaluation of the
// remaining rows at t_c = t_e + 3 ε_root (a single interpolation) leaves out every row with
// φ(t_c) > 0 — its root lies beyond t_c, so its located left end would lie beyond t_e + 2 ε_root,
// the simultaneity window of Fired — and t_c is re-evaluated whenever t_e moves earlier. The rows
// located are the same as when every crossing row is located, in the order of their secant
// estimate of the root.
void GapWitness::LocateCrossings(double* t_event) {
  std::sort(crossing_.begin(), crossing_.end());
  const double tol = ctx_.opt.root_tolerance;
  double screened_at = kInf;
  for (std::size_t c = 0; c < crossing_.size(); ++c) {
    const std::size_t r = crossing_[c].second;
    if (std::isfinite(*t_event)) {
      const double t_c = std::min(s_, *t_event + 3 * tol * std::max(1.0, std::abs(*t_event)));
      if (t_c < screened_at) {
        screened_at = t_c;
        screen_rows_.clear();
        for (std::size_t c2 = c; c2 < crossing_.size(); ++c2) {
          screen_rows_.push_back(open_rows_[crossing_[c2].second]);
        }
        integrator_.Interpolate(t_c, &qs_, &vs_);
        ctx_.sys.ConstraintValues(t_c, qs_, screen_rows_, &screen_gaps_);
        ctx_.stats.rows_evaluated_roots += static_cast<long>(screen_rows_.size());
        for (std::size_t c2 = c; c2 < crossing_.size(); ++c2) {
          const std::size_t j = c2 - c;
          crossing_later_[c2] =
              Phi(t_c, screen_gaps_[static_cast<Eigen::Index>(j)], screen_rows_[j]) > 0;
        }
      }
      if (crossing_later_[c]) continue;
    }
    Bracket root = LocateRow(r);
    auto& monitor = monitor_[static_cast<std::size_t>(open_rows_[r])];
    if (monitor == kDeparting && root.lo - phase_start_ <= root_tol_start_) {
      // A departing row "returning" at the phase start itself: over the first interval its
      // rate ġ(t_phase) > τ₁ is below the round-off of g (events/simulation.h); watched through
      // g + τ₀ for the rest of the phase.
      monitor = kUnarmed;
      ++ctx_.stats.round_off_departures;
      const double a = PhiAt(s_prev_, gaps_prev_, r), b = PhiAt(s_, gaps_next_, r);
      if (!(a > 0 && b <= 0)) continue;
      root = LocateRow(r);
    }
    // The left end: the gap is still ≥ 0 there, so the row bounces off cleanly.
    *t_event = std::min(*t_event, root.lo);
    root_[r] = root.lo;
  }
}

void GapWitness::EndInterval() {
  // Arm released rows whose gap became clearly positive.
  for (std::size_t r = 0; r < open_rows_.size(); ++r) {
    const auto row = static_cast<std::size_t>(open_rows_[r]);
    if (monitor_[row] == kUnarmed && gaps_next_[static_cast<Eigen::Index>(r)] > ArmingGap()) {
      monitor_[row] = kArmed;
    }
  }
  std::swap(gaps_prev_, gaps_next_);
  std::swap(rates_prev_, rates_next_);
}

// Open rows whose own root coincides with t_event (simultaneous impacts) belong to I₁ even if
// their gap at the left end of the bracket exceeds τ₀ (very fast approach).
void GapWitness::Fired(double t_event, std::vector<int>* rows) {
  const double tol = 2 * ctx_.opt.root_tolerance * std::max(1.0, std::abs(t_event));
  for (std::size_t r = 0; r < open_rows_.size(); ++r) {
    if (root_[r] <= t_event + tol) rows->push_back(open_rows_[r]);
  }
}

// ---- Force witnesses ------------------------------------------------------------------------

Eigen::Index ForceWitness::ActivePosition(int row) const {
  const std::vector<int>& active = modes_.active();
  return std::lower_bound(active.begin(), active.end(), row) - active.begin();
}

void ForceWitness::NewPhase(double t) {
  phase_start_ = t;
  shift_.resize(0);
}

void ForceWitness::BeginStep(const StepSamples& samples) {
  samples_ = &samples;
  Prepare();
  if (samples.t0() == phase_start_ && shift_.size() == 0 && !rows_.empty()) {
    // φ at the phase start: a contact kept with φ ≤ its band is watched from there (see the
    // header).
    const VectorXd& lambda = forces_.At(0);
    Values(lambda, &shift_);
    for (Eigen::Index k = 0; k < shift_.size(); ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const double band = StartBand(kk, lambda);
      const bool watch = shift_[k] <= band && WatchFromStart(kk, lambda, shift_[k]);
      const double margin = std::max({ctx_.opt.thresholds.tau3, kMinimumMargin, band});
      shift_[k] = watch ? margin - shift_[k] : 0.0;
    }
  }
  Sample(0);
  std::swap(phi_prev_, phi_next_);
}

void ForceWitness::ShiftedValues(const Eigen::VectorXd& lambda_active, Eigen::VectorXd* phi) const {
  Values(lambda_active, phi);
  if (shift_.size() == phi->size()) *phi += shift_;
}

void ForceWitness::Sample(int i) {
  sample_ = i;
  if (rows_.empty()) return;
  ShiftedValues(forces_.At(i), &phi_next_);
}

void ForceWitness::Locate(double* t_event) {
  const double s_prev = samples_->time(sample_ - 1), s = samples_->time(sample_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    const double a = phi_prev_[kk], b = phi_next_[kk];
    if (!(a > 0 && b <= 0)) continue;
    const Bracket root = LocateRoot(s_prev, s, a, b, ctx_.opt.root_tolerance, [&](double sm) {
      ShiftedValues(forces_.AtTime(integrator_, sm), &phi_mid_);
      return phi_mid_[kk];
    });
    *t_event = std::min(*t_event, root.hi);
  }
}

void ForceWitness::EndInterval() { std::swap(phi_prev_, phi_next_); }

const VectorXd& ForceWitness::ForceAtTime(double t) { return forces_.AtTime(integrator_, t); }

void ForceWitness::Fired(double t_event, std::vector<int>* rows) {
  if (rows_.empty()) return;
  ShiftedValues(forces_.AtTime(integrator_, t_event), &phi_mid_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (phi_mid_[static_cast<Eigen::Index>(k)] <= 0) rows->push_back(rows_[k]);
  }
}

void NormalForceWitness::Prepare() {
  rows_ = modes_.closed();
  normal_.resize(rows_.size());
  for (std::size_t k = 0; k < rows_.size(); ++k) normal_[k] = ActivePosition(rows_[k]);
}

bool NormalForceWitness::WatchFromStart(std::size_t k, const VectorXd& /*lambda_start*/,
                                        double /*phi_start*/) const {
  const ContactState* s = modes_.state(rows_[k]);
  return s != nullptr && s->mode == ContactMode::kSlip;
}

void NormalForceWitness::Fired(double t_event, std::vector<int>* rows) {
  unloaded_.clear();
  if (rows_.empty()) return;
  const VectorXd& lambda = ForceAtTime(t_event);
  VectorXd phi;
  ShiftedValues(lambda, &phi);
  const std::size_t before = rows->size();
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (phi[static_cast<Eigen::Index>(k)] <= 0) rows->push_back(rows_[k]);
  }
  if (rows->size() == before) return;
  const double tau3 = ctx_.opt.thresholds.tau3;
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (phi[static_cast<Eigen::Index>(k)] > 0 && lambda[normal_[k]] <= tau3) {
      unloaded_.push_back(rows_[k]);
    }
  }
}

void NormalForceWitness::Values(const VectorXd& lambda_active, VectorXd* phi) const {
  phi->resize(static_cast<Eigen::Index>(normal_.size()));
  for (std::size_t k = 0; k < normal_.size(); ++k) {
    (*phi)[static_cast<Eigen::Index>(k)] = lambda_active[normal_[k]] + ctx_.opt.thresholds.tau3;
  }
}

void StickWitness::StartPhase(double t, const VectorXd& q) {
  NewPhase(t);
  groups_.clear();
  const std::vector<int>& sticking = modes_.sticking();
  if (sticking.empty()) return;
  // The tangential Jacobian rows of every sticking contact, block-sparse by body, or else dense
  // as one block per row: rows are then compared by value (to kRowRoundOff relative), so an entry
  // of round-off size against an exact zero (a body that drifts off its joint by O(rtol)) does not
  // make two equal rows look different.
  std::vector<int> tangent_rows;
  std::vector<int> first;
  for (int row : sticking) {
    first.push_back(static_cast<int>(tangent_rows.size()));
    for (int r : ctx_.sys.TangentRows(row)) tangent_rows.push_back(r);
  }
  first.push_back(static_cast<int>(tangent_rows.size()));
  engine::BlockSparseRows G;
  if (!ctx_.sys.BlockSparseMatrices(t, q, tangent_rows, nullptr, &G)) {
    Eigen::MatrixXd dense;
    ctx_.sys.ConstraintJacobian(t, q, tangent_rows, &dense);
    G.Clear(ctx_.sys.nv(), ctx_.sys.nv());
    for (Eigen::Index i = 0; i < dense.rows(); ++i) G.AppendDenseRow(dense.row(i));
  }
  auto row_equal = [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    const int na = G.row_start[ua + 1] - G.row_start[ua];
    if (na != G.row_start[ub + 1] - G.row_start[ub]) return false;
    double scale = 0.0, diff = 0.0;
    for (int j = 0; j < na; ++j) {
      const int ka = G.row_start[ua] + j, kb = G.row_start[ub] + j;
      if (G.block_col[static_cast<std::size_t>(ka)] != G.block_col[static_cast<std::size_t>(kb)]) {
        return false;
      }
      for (int e = 0; e < G.block_size; ++e) {
        const double x = G.values[static_cast<std::size_t>(ka * G.block_size + e)];
        const double y = G.values[static_cast<std::size_t>(kb * G.block_size + e)];
        scale = std::max(scale, std::abs(x));
        diff = std::max(diff, std::abs(x - y));
      }
    }
    return WithinRowRoundOff(diff, scale);
  };
  auto contact_equal = [&](std::size_t a, std::size_t b) {
    const int n = first[a + 1] - first[a];
    if (n != first[b + 1] - first[b]) return false;
    for (int j = 0; j < n; ++j) {
      if (!row_equal(first[a] + j, first[b] + j)) return false;
    }
    return true;
  };
  std::vector<char> grouped(sticking.size(), 0);
  for (std::size_t a = 0; a < sticking.size(); ++a) {
    if (grouped[a]) continue;
    groups_.push_back({sticking[a]});
    for (std::size_t b = a + 1; b < sticking.size(); ++b) {
      if (!grouped[b] && contact_equal(a, b)) {
        grouped[b] = 1;
        groups_.back().push_back(sticking[b]);
      }
    }
  }
}

void StickWitness::Prepare() {
  rows_.clear();
  normal_.clear();
  tangent_.clear();
  member_start_.assign(1, 0);
  tangent_count_.clear();
  mu_.clear();
  for (const std::vector<int>& group : groups_) {
    rows_.push_back(group.front());
    for (int row : group) {
      normal_.push_back(ActivePosition(row));
      mu_.push_back(ctx_.sys.constraint_info(row).friction);
      const auto tangents = ctx_.sys.TangentRows(row);
      tangent_count_.push_back(static_cast<int>(tangents.size()));
      for (int t : tangents) tangent_.push_back(ActivePosition(t));
    }
    member_start_.push_back(normal_.size());
  }
}

Eigen::Vector2d StickWitness::TangentialSum(const VectorXd& lambda_active, std::size_t k) const {
  Eigen::Vector2d sum = Eigen::Vector2d::Zero();
  std::size_t t = 0;
  for (std::size_t m = 0; m < member_start_[k]; ++m)
    t += static_cast<std::size_t>(tangent_count_[m]);
  for (std::size_t m = member_start_[k]; m < member_start_[k + 1]; ++m) {
    for (int j = 0; j < tangent_count_[m]; ++j) sum[j] += lambda_active[tangent_[t++]];
  }
  return sum;
}

double StickWitness::Capacity(const VectorXd& lambda_active, std::size_t k) const {
  double capacity = 0.0;
  for (std::size_t m = member_start_[k]; m < member_start_[k + 1]; ++m) {
    capacity += mu_[m] * lambda_active[normal_[m]];
  }
  return capacity;
}

void StickWitness::Values(const VectorXd& lambda_active, VectorXd* phi) const {
  phi->resize(static_cast<Eigen::Index>(groups_.size()));
  for (std::size_t k = 0; k < groups_.size(); ++k) {
    (*phi)[static_cast<Eigen::Index>(k)] = Capacity(lambda_active, k) -
                                           TangentialSum(lambda_active, k).norm() +
                                           ctx_.opt.thresholds.tau3;
  }
}

double StickWitness::StartBand(std::size_t k, const VectorXd& lambda_start) const {
  return std::sqrt(std::numeric_limits<double>::epsilon()) * Capacity(lambda_start, k);
}

bool StickWitness::WatchFromStart(std::size_t k, const VectorXd& lambda_start,
                                  double phi_start) const {
  // |Σλ_T| − μλ_N = τ₃ − φ: how far outside its cone the group starts.
  const double outside = ctx_.opt.thresholds.tau3 - phi_start;
  return outside <= std::sqrt(std::numeric_limits<double>::epsilon()) * Capacity(lambda_start, k);
}

void StickWitness::Fired(double t_event, std::vector<int>* rows) {
  fired_directions_.clear();
  if (groups_.empty()) return;
  const VectorXd& lambda = ForceAtTime(t_event);
  VectorXd phi;
  Values(lambda, &phi);
  std::vector<std::pair<int, Eigen::Vector2d>> fired;
  for (std::size_t k = 0; k < groups_.size(); ++k) {
    if (phi[static_cast<Eigen::Index>(k)] > 0) continue;
    const Eigen::Vector2d sum = TangentialSum(lambda, k);
    const Eigen::Vector2d d = sum.norm() > 0 ? Eigen::Vector2d(-sum / sum.norm()) : sum;
    for (int row : groups_[k]) fired.emplace_back(row, d);
  }
  // Ascending rows (the groups interleave).
  std::sort(fired.begin(), fired.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [row, d] : fired) {
    rows->push_back(row);
    fired_directions_.push_back(d);
  }
}

// ---- SlipWitness ----------------------------------------------------------------------------

SlipWitness::SlipWitness(EventContext& ctx, const integrators::Integrator& integrator,
                         const ContactModes& modes)
    : ctx_(ctx), integrator_(integrator), modes_(modes) {}

void SlipWitness::Rates(double s, const VectorXd& q, const VectorXd& v, VectorXd* rates) {
  ctx_.sys.ConstraintValuesAndRates(s, q, v, tangent_rows_, &values_, rates);
  ctx_.stats.rows_evaluated_samples += static_cast<long>(tangent_rows_.size());
}

void SlipWitness::StartPhase(double t, const VectorXd& q, const VectorXd& v) {
  rows_ = modes_.sliding();
  tangent_rows_.clear();
  first_.clear();
  count_.clear();
  for (int row : rows_) {
    const auto tangents = ctx_.sys.TangentRows(row);
    first_.push_back(static_cast<int>(tangent_rows_.size()));
    count_.push_back(static_cast<int>(tangents.size()));
    tangent_rows_.insert(tangent_rows_.end(), tangents.begin(), tangents.end());
  }
  phase_start_ = t;
  first_step_ = true;
  from_rest_.assign(rows_.size(), 0);
  start_value_.assign(rows_.size(), 0.0);
  anchor_.assign(rows_.size(), Eigen::Vector2d::Zero());
  if (rows_.empty()) return;
  Rates(t, q, v, &rates_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    const Eigen::Vector2d d = modes_.state(rows_[k])->slip_direction;
    anchor_[k] = d;
    Eigen::Vector2d u = Eigen::Vector2d::Zero();
    for (int j = 0; j < count_[k]; ++j) u[j] = rates_[first_[k] + j];
    from_rest_[k] = u.norm() <= ctx_.opt.thresholds.tau1;
    start_value_[k] = std::min(d.dot(u), 0.0);
  }
}

void SlipWitness::Values(double s, const VectorXd& rates, VectorXd* phi) const {
  phi->resize(static_cast<Eigen::Index>(rows_.size()));
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    double value = 0.0;
    for (int j = 0; j < count_[k]; ++j) value += anchor_[k][j] * rates[first_[k] + j];
    if (first_step_ && from_rest_[k]) {
      value = s > phase_start_ ? (value - start_value_[k]) / (s - phase_start_) : 1.0;
    }
    (*phi)[static_cast<Eigen::Index>(k)] = value;
  }
}

void SlipWitness::BeginStep(const StepSamples& samples) {
  samples_ = &samples;
  first_step_ = samples.t0() == phase_start_;
  if (rows_.empty()) return;
  Rates(samples.t0(), samples.q(0), samples.v(0), &rates_);
  // The anchor of the step: the current slip direction (in the plane it stays s).
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (count_[k] < 2) continue;
    const Eigen::Vector2d u(rates_[first_[k]], rates_[first_[k] + 1]);
    if (u.norm() > ctx_.opt.thresholds.tau1) anchor_[k] = u.normalized();
  }
  sample_ = 0;
  Values(samples.t0(), rates_, &phi_prev_);
}

void SlipWitness::Sample(int i) {
  sample_ = i;
  if (rows_.empty()) return;
  Rates(samples_->time(i), samples_->q(i), samples_->v(i), &rates_);
  Values(samples_->time(i), rates_, &phi_next_);
}

void SlipWitness::Locate(double* t_event) {
  const double s_prev = samples_->time(sample_ - 1), s = samples_->time(sample_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    const auto kk = static_cast<Eigen::Index>(k);
    const double a = phi_prev_[kk], b = phi_next_[kk];
    if (!(a > 0 && b <= 0)) continue;
    const Bracket root = LocateRoot(s_prev, s, a, b, ctx_.opt.root_tolerance, [&](double sm) {
      integrator_.Interpolate(sm, &qs_, &vs_);
      Rates(sm, qs_, vs_, &rates_);
      Values(sm, rates_, &phi_mid_);
      return phi_mid_[kk];
    });
    *t_event = std::min(*t_event, root.hi);
  }
}

void SlipWitness::EndInterval() { std::swap(phi_prev_, phi_next_); }

void SlipWitness::Fired(double t_event, std::vector<int>* rows) {
  if (rows_.empty()) return;
  integrator_.Interpolate(t_event, &qs_, &vs_);
  Rates(t_event, qs_, vs_, &rates_);
  Values(t_event, rates_, &phi_mid_);
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (phi_mid_[static_cast<Eigen::Index>(k)] <= 0) rows->push_back(rows_[k]);
  }
}

}  // namespace saltus::events

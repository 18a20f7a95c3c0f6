// Witness (event) functions of the event loop: families of scalar functions φ_k(t) of one kind,
// evaluated on the dense output of an accepted step; an event of the family happens where some
// φ_k falls from > 0 to ≤ 0 (events/simulation.h has the rules, Haddouni et al. 2017, Fig. 2).
//
//   GapWitness          impact     g^α of the watched open contacts (with the departing and
//                                  penetration-guard forms of the header), the tunnelling guard
//   NormalForceWitness  take-off   λ^α + τ₃ of the closed contacts (index-1 multipliers)
//
// A family is scanned sample interval by sample interval (StepScan, events/step_scan.h): Sample
// evaluates all its functions at the next sample in one batch, Locate finds the functions that
// fell through 0 in the interval and lowers the event time, EndInterval closes the interval. Once
// the event time t* is known, Fired lists the rows whose event happens at t*. Adding an event
// kind is adding a family.
//
// The samples of a step are s_i = t₀ + i (t₁ − t₀)/(n + 1), i = 0 … n + 1 (n =
// SimulationOptions::event_samples), kept with a bound on every velocity coordinate over the step
// (StepSamples; header "Watched rows").
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "events/contact_modes.h"
#include "events/event_context.h"
#include "events/force_split.h"
#include "events/root_finding.h"
#include "integrators/integrator.h"

namespace saltus::events {

// The dense output of the current accepted step [t₀, t₁] at its n + 2 samples and the speed bound
// s_j = max_i |v_j(s_i)| + max_i |v_j(s_{i+1}) − v_j(s_i)| over the step. A sample is
// interpolated when it is first read: the scan stops after the first interval with an event,
// which is the first of a step that starts a phase in most steps of a bouncing ball, and the
// speed bound, which needs them all, is read only for systems whose candidate rows depend on it
// (MechanicalSystem::CandidateRowsDependOnSpeed). The values are those of interpolating every
// sample at once. The integrator must not step again while the samples are read.
class StepSamples {
 public:
  // The integrator's last step with n interior samples.
  void Take(const integrators::Integrator& integrator, int n);
  int n() const { return n_; }
  double t0() const { return t0_; }
  double t1() const { return t1_; }
  double time(int i) const { return i == n_ + 1 ? t1_ : t0_ + (t1_ - t0_) * i / (n_ + 1); }
  const Eigen::VectorXd& q(int i) const { return q_[Interpolated(i)]; }
  const Eigen::VectorXd& v(int i) const { return v_[Interpolated(i)]; }
  // Interpolates every sample.
  const Eigen::VectorXd& speed_bound() const;

 private:
  // Sample i interpolated; its index into q_ and v_.
  std::size_t Interpolated(int i) const;

  const integrators::Integrator* integrator_ = nullptr;
  int n_ = 0;
  double t0_ = 0, t1_ = 0;
  // The lazy cache (filled by the const accessors).
  mutable std::vector<Eigen::VectorXd> q_, v_;
  mutable std::vector<char> taken_;
  mutable bool bound_taken_ = false;
  mutable Eigen::VectorXd speed_bound_, dv_bound_;
};

// The index-1 multipliers of the active rows at the samples of a step, one solve per sample
// (engine::ConstrainedDynamics), shared by the families that need contact forces. Throws
// RunFailure (linear_solve_failure) when the solve fails.
class SampleForces {
 public:
  // λ is the phase's admissible split (events/force_split.h): the solve's λ plus split.offset().
  SampleForces(EventContext& ctx, engine::ConstrainedDynamics& dynamics, const ContactModes& modes,
               const ForceSplit& split)
      : ctx_(ctx), dynamics_(dynamics), modes_(modes), split_(split) {}
  // Forgets the solves of the previous step.
  void NewStep(const StepSamples& samples);
  // λ (in the order of modes.active()) at sample i.
  const Eigen::VectorXd& At(int i);
  // λ at any time s on the dense output (root finding); not cached.
  const Eigen::VectorXd& AtTime(const integrators::Integrator& integrator, double s);
  // The residual ‖G_A v̇ + γ_A‖∞ of the solve at sample i, or a negative value when sample i was
  // not solved.
  double ResidualAt(int i) const { return i == solved_ ? residual_ : -1.0; }

 private:
  void Solve(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  EventContext& ctx_;
  engine::ConstrainedDynamics& dynamics_;
  const ContactModes& modes_;
  const ForceSplit& split_;
  const StepSamples* samples_ = nullptr;
  int solved_ = -1;  // the sample that lambda_ belongs to (−1: none, or a time off the samples)
  double residual_ = 0;
  Eigen::VectorXd vdot_, lambda_, q_, v_;
};

class WitnessSet {
 public:
  virtual ~WitnessSet() = default;
  // Starts the scan of a new step: the values at sample 0.
  virtual void BeginStep(const StepSamples& samples) = 0;
  // The values at sample i ≥ 1 (the right end of the interval [s_{i−1}, s_i]).
  virtual void Sample(int i) = 0;
  // Locates the functions that fall through 0 in the current interval; lowers *t_event to the
  // earliest event time found (∞ while none).
  virtual void Locate(double* t_event) = 0;
  // Closes the interval (the current values become the previous ones).
  virtual void EndInterval() = 0;
  // The rows (ascending) whose event happens at t_event, appended to *rows.
  virtual void Fired(double t_event, std::vector<int>* rows) = 0;
};

// The earliest event time of the step (∞ when none): every family is evaluated at the step's
// samples; after each sample interval the families locate the functions that fell through 0 in
// it, in the order given, and the scan stops after the first interval with an event.
double FindEarliestEvent(const StepSamples& samples, std::span<WitnessSet* const> families);

// Jacobian rows evaluated on a state that has drifted off its manifold by O(rtol) carry entries of
// round-off size where the exact rows have zeros (a belt off its guide by 1e-20 gives −7.5e-37
// in one corner's row and an exact 0 in the other's). Rows are therefore compared relative to
// their largest entry: entries within kRowRoundOff of it are round-off.
inline constexpr double kRowRoundOff = 1e-12;
// |x| ≤ kRowRoundOff · scale (scale ≥ 0, the row's largest |entry|).
inline bool WithinRowRoundOff(double x, double scale) {
  return std::abs(x) <= kRowRoundOff * std::max(scale, 1e-300);
}
// The rows act on the same coordinates: the entries that are not round-off of their own row
// (WithinRowRoundOff against its largest entry) lie in the same columns.
bool SameSupport(const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b);

// Gaps that the switch handler computed for the unilateral candidates within τ₀ at (t, q) after
// its projection; the phase start that follows at the same state reuses them.
struct GapSnapshot {
  double t = 0;
  Eigen::VectorXd q;
  std::vector<int> rows;  // ascending; empty when not available
  Eigen::VectorXd gaps;
  // The rates ġ of rate_rows (ascending; empty when not available) at (t, q, v_rates).
  std::vector<int> rate_rows;
  Eigen::VectorXd v_rates, rates;
};

// Impacts. Open contacts that are clearly open (g > 10⁻³ τ₀ at the phase start, "armed") are
// watched through φ = g; contacts that leave a contact with ġ > τ₁ ("departing") through
// φ = (g − g_phase)/(t − t_phase), g_phase = min(g(t_phase), 0); other touching contacts
// ("unarmed") through φ = g + τ₀ until their gap is clearly positive (events/simulation.h).
class GapWitness final : public WitnessSet {
 public:
  GapWitness(EventContext& ctx, const integrators::Integrator& integrator);

  // At a phase start (t, q, v): the open contacts touching now get their monitoring form;
  // `closed` ascending. `snapshot` (may be null) holds gaps known at this state.
  void StartPhase(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                  const std::vector<int>& closed, const GapSnapshot* snapshot);
  // The watched rows of the step that starts at q(t₀) = q0: candidates over the step's horizon
  // at its speed bound, without the closed contacts (header "Watched rows").
  void Watch(const Eigen::VectorXd& q0, const StepSamples& samples, const std::vector<int>& closed);

  void BeginStep(const StepSamples& samples) override;
  void Sample(int i) override;
  void Locate(double* t_event) override;
  void EndInterval() override;
  void Fired(double t_event, std::vector<int>* rows) override;

 private:
  enum Monitor : char { kArmed, kDeparting, kUnarmed };
  double ArmingGap() const { return 1e-3 * ctx_.opt.thresholds.tau0; }
  // φ of global row `row` with gap g at time s.
  double Phi(double s, double g, int row) const;
  // φ of watched row k from the gaps of one sample.
  double PhiAt(double s, const Eigen::VectorXd& gaps, std::size_t k) const {
    return Phi(s, gaps[static_cast<Eigen::Index>(k)], open_rows_[k]);
  }
  // φ of watched row k alone at time s on the dense output (root finding).
  double PhiOne(double s, std::size_t k);
  double GapOne(double s, std::size_t k);
  // φ of global row `row` with gap g and rate ġ at time s, and its rate φ' in *rate (ġ for
  // the armed and unarmed forms; (ġ − φ)/(s − t_phase) for the departing form).
  double PhiAndRate(double s, double g, double g_dot, int row, double* rate) const;
  // φ and φ' of watched row k alone at time s on the dense output (root finding).
  double PhiAndRateOne(double s, std::size_t k, double* rate);
  // The root bracket of watched row k in the current interval (φ falls through 0 in it), by
  // LocateRootWithRates from the sampled gaps and rates at its ends (by LocateRoot for a
  // departing row in the interval that starts at the phase start).
  Bracket LocateRow(std::size_t k);
  // The earliest located root in the interval of the rows crossing it (the old scan order:
  // by secant estimate, screened once an event time is known).
  void LocateCrossings(double* t_event);

  EventContext& ctx_;
  const integrators::Integrator& integrator_;
  const StepSamples* samples_ = nullptr;
  std::vector<int> open_rows_;  // watched rows of the current step, ascending
  std::vector<char> monitor_;   // per global row
  std::vector<int> not_armed_;  // rows whose monitor is not kArmed
  std::vector<double> departing_rate_, departing_gap_;  // per global row (kDeparting)
  double phase_start_ = 0;
  // Scan of the current step.
  int sample_ = 0;
  double s_prev_ = 0, s_ = 0, root_tol_start_ = 0;
  Eigen::VectorXd gaps_prev_, rates_prev_, gaps_next_, rates_next_;
  std::vector<double> root_;                              // per watched row (∞: none)
  std::vector<std::pair<double, std::size_t>> crossing_;  // (secant estimate, watched index)
  std::vector<char> crossing_later_;
  std::vector<int> screen_rows_, touching_, missing_;
  Eigen::VectorXd screen_gaps_, gap1_, rate1_, g_, gdot_;
  Eigen::VectorXd qs_, vs_;
};

// Witness functions of the contact forces, φ_k(λ), with λ the index-1 multipliers of the active
// rows at the interpolated state (SampleForces), so integrators of any index give smooth
// multipliers. The event time is the right end of the located bracket (the function has reached
// 0 there), and a contact fires when its function is ≤ 0 at the event time.
//
// A phase can start with φ_k ≤ 0: the decision keeps a contact whose force is zero to round-off
// (λ_N ≈ 0 with g̈_N ≈ 0; a stick force on the cone's boundary), and the phase's solve may put it
// just below −τ₃. A crossing from φ > 0 would then never be seen while the force keeps falling
// (the contact pulls, or the friction leaves the cone, for the whole phase). Such a contact is
// watched through φ_k − φ_k(t_phase) + max(τ₃, kMinimumMargin): its event fires once the force
// has fallen by the hysteresis from its value at the phase start, and the switch decides again.
// This applies (WatchFromStart) to the normal force of sliding contacts, and to a sticking group
// whose force starts outside its cone by at most √ε of its capacity μλ_N: its force sits on the
// cone's boundary to the accuracy of the contact problem (tolerance 1e-10 relative), as after a
// slip → stick decision at the instant the friction reaches its limit (a friction oscillator on
// its limit cycle), and if the required force keeps growing the stick must end. For such a group
// the band of the boundary is ±√ε μλ_N (StartBand): a group starting within it is watched from
// its start value with that margin, not τ₃: its multipliers are no more accurate when its stick
// rows are nearly dependent (the solve's λ_T varies by ε κ(W) |λ|, 4e-8 N of a 4.6 N capacity at
// the two ends of a sagging beam, whose rows differ by 1e-3 relative; docs/friction.md). A
// frictionless closed contact below −τ₃ at the start is one of redundant rows whose minimum-norm
// share the contact problem did not choose, and a sticking group further outside its cone holds one
// share of near-redundant stick rows whose split is ill-conditioned (the sum over them is inside):
// watching those from their start value repeats the same decision (a 50-sphere pile: 46,368
// take-offs instead of 817 in 1.4 s; a flexible beam sticking at both ends, 1 % outside at each
// end: 2000 stick decisions at one instant).
class ForceWitness : public WitnessSet {
 public:
  // The margin of a contact that starts its phase at φ ≤ 0 when τ₃ = 0 (N).
  static constexpr double kMinimumMargin = 1e-12;
  // A new phase starts at t (the shifts are computed at its first step).
  void NewPhase(double t);
  void BeginStep(const StepSamples& samples) override;
  void Sample(int i) override;
  void Locate(double* t_event) override;
  void EndInterval() override;
  void Fired(double t_event, std::vector<int>* rows) override;

 protected:
  ForceWitness(EventContext& ctx, const integrators::Integrator& integrator,
               const ContactModes& modes, SampleForces& forces)
      : ctx_(ctx), modes_(modes), integrator_(integrator), forces_(forces) {}
  // The contacts watched in this step (ascending), set by Prepare at the start of each step.
  virtual void Prepare() = 0;
  // φ (rows_.size()) from λ of the active rows.
  virtual void Values(const Eigen::VectorXd& lambda_active, Eigen::VectorXd* phi) const = 0;
  // The position of a row in modes.active().
  Eigen::Index ActivePosition(int row) const;
  // λ of the active rows at time t of the dense output.
  const Eigen::VectorXd& ForceAtTime(double t);
  // Whether contact k, whose function starts at phi_start ≤ 0 with the active rows' forces
  // lambda_start, is watched from its phase-start value (see above).
  virtual bool WatchFromStart(std::size_t /*k*/, const Eigen::VectorXd& /*lambda_start*/,
                              double /*phi_start*/) const {
    return false;
  }
  // The band of start values of contact k taken as on the boundary (see above): 0 (φ ≤ 0).
  virtual double StartBand(std::size_t /*k*/, const Eigen::VectorXd& /*lambda_start*/) const {
    return 0.0;
  }
  // Values plus the phase-start shift of the contacts that started at φ ≤ their band.
  void ShiftedValues(const Eigen::VectorXd& lambda_active, Eigen::VectorXd* phi) const;

  EventContext& ctx_;
  const ContactModes& modes_;
  std::vector<int> rows_;

 private:
  const integrators::Integrator& integrator_;
  SampleForces& forces_;
  const StepSamples* samples_ = nullptr;
  int sample_ = 0;
  Eigen::VectorXd phi_prev_, phi_next_, phi_mid_;
  double phase_start_ = -std::numeric_limits<double>::infinity();
  Eigen::VectorXd shift_;  // per watched contact; empty until the phase's first step
};

// Take-offs: φ_k = λ_N,k + τ₃ of the closed contacts (every mode but open); τ₃ is a hysteresis
// against chattering.
class NormalForceWitness final : public ForceWitness {
 public:
  NormalForceWitness(EventContext& ctx, const integrators::Integrator& integrator,
                     const ContactModes& modes, SampleForces& forces)
      : ForceWitness(ctx, integrator, modes, forces) {}
  // Fired also gives, when some contact fired, the closed contacts whose function did not fire
  // at t_event but whose normal force is λ_N ≤ τ₃ there (ascending): they lose their load with
  // the fired ones, and the switch decides them together (events/switch_handler.h). One force
  // evaluation at t_event serves both lists.
  void Fired(double t_event, std::vector<int>* rows) override;
  const std::vector<int>& unloaded() const { return unloaded_; }

 private:
  void Prepare() override;
  void Values(const Eigen::VectorXd& lambda_active, Eigen::VectorXd* phi) const override;
  // Sliding contacts only.
  bool WatchFromStart(std::size_t k, const Eigen::VectorXd& lambda_start,
                      double phi_start) const override;
  std::vector<Eigen::Index> normal_;  // position of each contact's λ_N in the active rows
  std::vector<int> unloaded_;         // set by Fired
};

// Stick → slip: φ = μ λ_N − ‖λ_T‖ + τ₃ of a sticking contact (its tangential rows are active,
// so λ_T is a multiplier of the same solve; τ₃ is the take-off hysteresis). Sticking contacts
// whose tangential rows are equal to 1e-12 relative (two corners of a block at one height on a
// line: W is singular and the index-1 solve splits λ_T between them by minimum norm, not by what
// the cones allow) are watched as a group: stick stays feasible while Σ λ_T lies in the summed cone
// (choose λ_T,i ∝ μ_i λ_N,i), so φ = Σ μ_i λ_N,i − ‖Σ λ_T,i‖ + τ₃, and the whole group fires
// together. Fired also gives the direction in which a fired contact starts to slide, d =
// −Σλ_T/‖Σλ_T‖ of its group (the friction force opposes the slip), for the switch to use should the
// contact problem find it on the cone's boundary (events/switch_handler.h).
class StickWitness final : public ForceWitness {
 public:
  StickWitness(EventContext& ctx, const integrators::Integrator& integrator,
               const ContactModes& modes, SampleForces& forces)
      : ForceWitness(ctx, integrator, modes, forces) {}
  // At a phase start (t, q): the groups of sticking contacts with equal tangential rows.
  void StartPhase(double t, const Eigen::VectorXd& q);
  // The groups of the phase (contacts, ascending within a group).
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  void Fired(double t_event, std::vector<int>* rows) override;
  // The slip directions of the rows appended by the last Fired (ascending), in their order.
  const std::vector<Eigen::Vector2d>& fired_directions() const { return fired_directions_; }

 private:
  void Prepare() override;
  void Values(const Eigen::VectorXd& lambda_active, Eigen::VectorXd* phi) const override;
  // Groups on the cone's boundary to √ε of their capacity (header of ForceWitness).
  bool WatchFromStart(std::size_t k, const Eigen::VectorXd& lambda_start,
                      double phi_start) const override;
  double StartBand(std::size_t k, const Eigen::VectorXd& lambda_start) const override;
  // Σ μ λ_N of group k.
  double Capacity(const Eigen::VectorXd& lambda_active, std::size_t k) const;
  // Σ λ_T of group k.
  Eigen::Vector2d TangentialSum(const Eigen::VectorXd& lambda_active, std::size_t k) const;

  std::vector<std::vector<int>> groups_;        // contacts (rows) of each group
  std::vector<Eigen::Index> normal_, tangent_;  // positions in the active rows, by group member
  std::vector<std::size_t> member_start_;       // group k: members [start_k, start_k+1)
  std::vector<int> tangent_count_;              // per member
  std::vector<double> mu_;                      // per member
  std::vector<Eigen::Vector2d> fired_directions_;
};

// Slip → stick: the slip velocity ġ_T of a sliding contact reaching 0. Per step, with the anchor
// a = ġ_T(t₀)/‖ġ_T(t₀)‖ at the step start (the plane: a = the slip sign s, fixed), φ = a·ġ_T(t).
// In the plane the slip cannot turn, and φ = s ġ_T falls through 0 exactly when the slide stops;
// in space the direction turns and the anchor is renewed at every step, so φ tracks the slip
// speed as long as the direction turns by less than π/2 within a step (issue 18 §2). A contact
// that starts to slide from rest (‖ġ_T(t_phase)‖ ≤ τ₁: a stick → slip transition) is watched in
// the first step through (a·ġ_T − min(a·ġ_T(t_phase), 0))/(t − t_phase), which is positive at
// the start (the slide develops along d, the direction of g̈_T chosen at the switch), like a
// departing gap. The event time is the right end of the bracket (the slide has stopped).
class SlipWitness final : public WitnessSet {
 public:
  SlipWitness(EventContext& ctx, const integrators::Integrator& integrator,
              const ContactModes& modes);
  // At a phase start: the sliding contacts that start from rest.
  void StartPhase(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);

  void BeginStep(const StepSamples& samples) override;
  void Sample(int i) override;
  void Locate(double* t_event) override;
  void EndInterval() override;
  void Fired(double t_event, std::vector<int>* rows) override;

 private:
  // ġ_T of the sliding contacts' tangential rows at (s, q, v) into rates (tangent_rows_ order).
  void Rates(double s, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::VectorXd* rates);
  // φ of every contact from the rates at time s.
  void Values(double s, const Eigen::VectorXd& rates, Eigen::VectorXd* phi) const;

  EventContext& ctx_;
  const integrators::Integrator& integrator_;
  const ContactModes& modes_;
  const StepSamples* samples_ = nullptr;
  std::vector<int> rows_, tangent_rows_;
  std::vector<int> first_;  // per contact: its first tangential row in tangent_rows_
  std::vector<int> count_;  // per contact: 1 (plane) or 2
  std::vector<Eigen::Vector2d> anchor_;
  std::vector<char> from_rest_;      // per contact (phase start)
  std::vector<double> start_value_;  // per contact: min(a·ġ_T(t_phase), 0)
  double phase_start_ = 0;
  bool first_step_ = false;
  int sample_ = 0;
  Eigen::VectorXd values_;  // g of tangent_rows_ beside their rates (0: velocity-level rows)
  Eigen::VectorXd rates_, phi_prev_, phi_next_, phi_mid_, qs_, vs_;
};

}  // namespace saltus::events

// The event-driven loop of Saltus (Haddouni et al. 2017, Section 2.3 and Fig. 2): between
// events the integrator advances the DAE with the active rows frozen; the witness functions are
// evaluated on its dense output; at the earliest event the switch handler resolves impacts,
// decides the new contact modes and projects back onto the constraint manifold; a new phase starts.
//
// Parts (each with its own tests in tests/events/):
//   events/contact_modes.h   the mode of every contact (open, closed, stick, slip), from which
//                            I₂ and the active rows A are derived
//   events/witness.h         the witness families on the dense output (impact, take-off), the
//                            step samples and the scan for the earliest event
//   events/root_finding.h    root location (Newton with a bracket for gaps, Illinois for forces)
//                            and the tunnelling guard
//   events/switch_handler.h  impact → modes → projection at a switching time
//   events/simulation.cc     the loop below
// docs/event-loop.md has the measurements behind the rules.
//
// Index sets over the unilateral rows U (bilateral rows B are always active):
//   I₁ = {α : g^α ≤ τ₀}                   closed in position            (eq. 13)
//   I₂ = {α ∈ I₁ : |G^α v| ≤ τ₁, λ^α ≥ 0}   closed in position and velocity (eq. 5)
// The integrator advances the DAE with A = B ∪ I₂ frozen. After every accepted step the event
// functions are evaluated on the dense output at the step end and at `event_samples` interior
// points (none for a system without unilateral rows, which has no event function):
//   impact     g^α(t) of open contacts falling through 0. A contact that starts the phase
//              touching (g ≤ 10⁻³ τ₀) and separating (ġ > τ₁, e.g. just after a bounce) is
//              watched through (g − g_phase)/(t − t_phase), g_phase = min(g(t_phase), 0): it
//              tends to ġ(t_phase) > 0 at the start, where g is at round-off level (of either
//              sign), and has a root when the gap comes back to g_phase ≥ −τ₀. A departing row
//              whose root is located within the root tolerance of t_phase has a rate that is
//              round-off over the first interval; it is watched through g + τ₀ for the rest of
//              the phase, since a switch at t_phase would meet the same state and repeat without
//              end. One touching without separating velocity (ġ ≤ τ₁: zero by the threshold, as
//              after a take-off, where ġ and g̈ start at 0 and the gap grows at third order) is
//              watched through g + τ₀ until its gap is clearly positive (a penetration guard):
//              an integrator's error, below τ₀, does not read as a return (a first-order scheme's
//              O(h²) error of either sign after a take-off fired the departing form at
//              g = −1e-14 m, and the switch opened the contact again, 2000 times);
//   take-off   λ^α(t) + τ₃ of closed contacts falling through 0, with λ from the index-1 solve
//              (engine::ConstrainedDynamics) at the interpolated state, so integrators of any
//              index give smooth multipliers (τ₃ is a hysteresis against chattering);
//   time       user time events.
// The earliest root is located to |Δt| ≤ root_tolerance·max(1, |t|) (impacts at the side of the
// bracket where the gap is still ≥ 0): gaps by Newton's method inside the bracket from the cubic
// Hermite point of the sampled gaps and rates (LocateRootWithRates, ~2 evaluations per impact),
// forces by the Illinois method (their rates are not sampled); rows whose roots coincide
// within that tolerance are handled together. Only the sampled values are computed for all
// watched rows: the iterations of a root search evaluate the gap of the one row being located
// (or, for a take-off, only the multipliers), and at t* only the multipliers are recomputed, so
// an event costs O(iterations) row evaluations instead of O(iterations × watched rows)
// (SimulationStats counts the rows evaluated by site). At t*:
//   0. the state from the dense output is projected onto the ending phase's active rows
//      (positions, eq. 35; velocities, eq. 36) unless it is within 0.1 τ₀ and 0.1 τ₁ of them
//      (SwitchHandler::OntoPhaseManifold): the interpolant meets them only to its error;
//   1. I₁ ← {g ≤ τ₀} ∪ closed ∪ rows whose impact function fired; if a row of I₁ approaches
//      (G^α v + ∂g^α/∂t < −τ₁), solve the impact LCP (eq. 4) with Newton restitution on the
//      rows of I₁ with u ≤ τ₁ and the bilateral rows as equalities. Separating rows are left
//      out (an impulse would send them back into the obstacle with u⁺ = −e u⁻); if the impact
//      makes one approach, a further impact is solved on the new set (a cascade at the same
//      instant; every stage only involves rows with u⁻ ≤ τ₁, so none adds energy). With a
//      restitution velocity threshold v_e > 0 (SimulationOptions::restitution_threshold), a row
//      of the stage approaching slower than v_e (u⁻ > −v_e) takes e = 0: slow impacts are
//      plastic, the standard threshold model of contact codes (Luding & McNamara 1998);
//   2. candidate I₂ ← {α ∈ I₁ : u⁺ ≤ max(τ₁, v_e)}. A row whose post-impact velocity is below
//      τ₁ closes even when e > 0: this is what ends Zeno accumulations (bouncing ball with
//      e = 0.9 comes to rest in finite time). With v_e > 0, every row of I₁ that an impact
//      leaves separating slower than v_e is a candidate too, and the projection of step 4 sets
//      its velocity to zero (an M-orthogonal projection: the kinetic energy cannot rise), so a
//      cluster of slowly separating rows closes at the impact instead of coming back as
//      micro-impacts;
//   3. the acceleration-level LCP (eq. 12) on the candidates keeps those with λ^α > τ₃ or
//      g̈^α ≤ W_αα τ₃; the others take off (rows whose take-off function fired open, unless a
//      closed contact on the same body is unloaded too: the group is then decided by the
//      problem, each kept only with λ^α > τ₃; events/switch_handler.h);
//      When some candidates are so only by v_e (τ₁ < u⁺ ≤ v_e), the problem is posed at the
//      velocity projected onto the candidates (the state they close to); if it still fails,
//      it is solved again without them (SimulationStats::threshold_closing_fallbacks);
//   4. positions are projected onto g_A = 0 (eq. 35) and velocities onto G_A v + ∂g_A/∂t = 0
//      (eq. 36), A = B ∪ I₂; open rows of I₁ that would be left with g < 0 join the position
//      projection, and those still approaching (−τ₁ ≤ u < 0) the velocity projection, so that
//      the same switch cannot repeat at once. Rows outside I₁ (g > τ₀ at t*) that the projection
//      leaves below −τ₀ join the position projection too, and it is repeated: projected rows can
//      move the bodies by more than τ₀ (a row with a short lever, |∂g/∂q| ≪ 1, moves q by
//      |g| / |∂g/∂q|), and such a row would otherwise start the next phase inside the obstacle;
//   5. the integrator restarts: from its initial-step estimate, or, when the new phase has the
//      ending one's active rows and no contact slides in either (the same vector field: the
//      switch only moved the state), from the ending phase's last step (Integrator::Reset,
//      continue_step; the rule and why it keeps the tolerance are there).
// More than `zeno_max_events` events inside `zeno_window` that the rule above cannot resolve
// stop the run with RunStatus::kEventAccumulation.
//
// Coulomb friction (issue 17; ../shared/FRICTION.md). A contact with μ > 0 (ConstraintRowInfo::
// friction) has tangential rows (one in the plane, two in space), and in I₂ it sticks or slides
// (events/contact_modes.h). Between events the modes are frozen: a sticking contact's tangential
// rows are active (velocity-level rows, ġ_T = 0); a sliding contact's friction force −μ λ_N d is
// carried by the force direction of its normal row, H_n = G_n − μ d·G_T
// (engine::SlidingFrictionView), so every integrator does one linear solve per evaluation and no
// complementarity solve. Two more witness families watch the frictional modes:
//   stick → slip   μ λ_N − ‖λ_T‖ + τ₃ of sticking contacts falling through 0 (λ_T the multipliers
//                  of the tangential rows; τ₃ the hysteresis of the take-off function);
//   slip → stick   the slip velocity along its direction at the step start, a·ġ_T, falling
//                  through 0 (the plane: s ġ_T with the slip sign s; a slide that starts from rest
//                  is watched through the departing quotient, as gaps are).
// At a switching time the impact problem has Coulomb's law on the impulses (tangential
// restitution 0; an energy gain above round-off, possible with Newton's law and friction, is
// flagged on the event and counted), and the acceleration-level problem decides stick or slip
// (events/switch_handler.h: a contact with ‖u_T‖ ≤ τ₁ is a stick candidate, one sliding keeps its
// direction unless it stops). Painlevé configurations (no solution or several with sliding
// contacts) stop the run with RunStatus::kPainleve or are resolved by a tangential impact
// (SimulationOptions::painleve).
//
// Watched rows. The open unilateral rows whose event functions are evaluated, sampled by the
// tunnelling guard, root-found and tested for I₁ are only those the system lists as candidates
// (engine::MechanicalSystem::CandidateRows; all rows by default, the broadphase pairs for
// contact::SpatialContacts), so the cost of a step follows the number of nearby pairs, not the
// number of rows. For an accepted step [t₀, t₁] (h = t₁ − t₀) the loop takes the velocities of
// the dense output at t₀, the event samples and t₁ and bounds every coordinate over the step by
//   s_j = max_k |v_j(s_k)| + max_k |v_j(s_{k+1}) − v_j(s_k)|,
// i.e. the largest sampled speed plus the largest change between neighbouring samples (a bound
// whenever v_j is monotone between samples, which the sampling already assumes for the gaps;
// computed only when the system's candidates depend on the speeds, MechanicalSystem::
// CandidateRowsDependOnSpeed: otherwise the scan interpolates only the samples it reaches).
// The watched rows of the step are the candidates of q(t₀) for the horizon h, speeds s and the
// margin m = τ₀: a row left out has g > τ₀ > 0 during the whole step because no material point
// can travel more than h (‖ṙ‖ + ρ ‖ω‖) within it (contact/spatial_contacts.h), so no impact or
// tunnelling is missed. The set is recomputed every step; a row that joins it mid-phase has
// g > τ₀ > 10⁻³ τ₀ and is watched through g (armed). At a switching time I₁ and the smallest gap
// after projection use the candidates at horizon 0 with margin τ₀. Impact and contact LCPs are
// over I₁ and the candidates of I₂ only.
// SimulationOptions::watch_all_rows restores the watching of every open row (for comparisons).
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contact/complementarity.h"
#include "contact/friction_cone.h"
#include "engine/constrained_dynamics.h"
#include "engine/mechanical_system.h"
#include "engine/projection.h"
#include "integrators/integrator.h"

namespace saltus::events {

// The mode of a contact (events/contact_modes.h): open, closed (frictionless), stick, slip.
using ContactMode = contact::ContactMode;
// "open", "closed", "stick", "slip" (in space), "slip+" / "slip-" (in the plane, one tangential
// row: by the sign of the slip direction's first entry).
std::string ContactModeName(ContactMode mode, const Eigen::Vector2d& slip_direction,
                            int num_tangent_rows);

// The state of a contact in I₂.
struct ContactState {
  int row = -1;  // global unilateral row
  ContactMode mode = ContactMode::kClosed;
  // kSlip: the unit slip direction in the basis of the contact's tangential rows (plane: (±1, 0)).
  Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();
};

// Where a state given to SetState comes from: the start of a run, or a state a stopped run saved.
enum class StateOrigin { kInitial, kResumed };

struct Thresholds {
  double tau0 = 1e-9;   // gap (m): g ≤ τ₀ counts as closed in position
  double tau1 = 1e-6;   // normal velocity (m/s): |G v| ≤ τ₁ counts as zero
  double tau3 = 1e-10;  // multiplier (N): λ > τ₃ keeps a contact closed
};

enum class PainleveResolution { kError, kImpact };
std::string_view ToString(PainleveResolution p);  // "error", "impact"

struct SimulationOptions {
  std::string integrator = "dopri5";
  integrators::IntegratorOptions integrator_options;
  Thresholds thresholds;
  double restitution = 0.0;  // global Newton coefficient e ∈ [0, 1] for rows without one
  double restitution_threshold = 0.0;  // v_e (m/s): approaches slower than v_e are plastic
                                       // (e = 0 for that row); 0: off (header, step 1)
  double root_tolerance = 1e-12;       // relative, on t*: |Δt| ≤ root_tolerance·max(1, |t|)
  int event_samples = 4;               // interior samples of the dense output per step
  double output_step = 0.0;            // > 0: OnOutput every output_step; 0: at every accepted step
  contact::LcpOptions lcp;
  engine::ProjectionOptions projection;  // used after events (tolerance: round-off)
  int zeno_max_events = 2000;
  double zeno_window = 1e-6;  // s
  std::vector<double> time_events;
  bool watch_all_rows = false;  // true: watch every open unilateral row (see "Watched rows")
  // Friction (issue 17): what to do when the acceleration-level problem with sliding contacts
  // has no solution or several (Painlevé): stop with RunStatus::kPainleve (kError), or resolve it
  // by a tangential impact at the current state (kImpact, an event of kind tangential_impact).
  PainleveResolution painleve = PainleveResolution::kError;
  // Friction cone of spatial contacts (two tangential rows): the exact disk, or a polygon with
  // friction_facets ≥ 3 facets (a faceted LCP; contact/friction_cone.h).
  contact::FrictionCone friction_cone = contact::FrictionCone::kExact;
  int friction_facets = 8;
  // When non-null and set (e.g. by a signal handler: a lock-free atomic store is
  // async-signal-safe), AdvanceTo stops at the next step boundary with RunStatus::kInterrupted.
  // The flag is the caller's: it is read, never cleared. See also Simulation::RequestStop.
  const std::atomic<bool>* stop_flag = nullptr;
};

// impact: contacts hit (Newton restitution; with friction, Coulomb on the impulses); takeoff: a
// contact opens; contact_closed: a contact joins I₂; time: a user time event; stick: a sliding
// contact sticks; slip: a sticking contact starts to slide (or a slide reverses);
// tangential_impact: an impulse without collision resolving a Painlevé configuration.
// to_time_stepping / to_event_driven: the hybrid scheme (tools/hybrid_scheme.h) hands the whole
// system from the event loop to Moreau–Jean time-stepping or back (no contact rows; T + V before
// and after the hand-over). The event loop itself never records them.
enum class EventKind {
  kImpact,
  kTakeoff,
  kContactClosed,
  kTime,
  kStick,
  kSlip,
  kTangentialImpact,
  kToTimeStepping,
  kToEventDriven
};
inline constexpr int kNumEventKinds = 9;
// The kinds the event loop and Moreau–Jean record (every kind but the two scheme switches).
inline constexpr int kNumPhysicalEventKinds = 7;
// "impact", "takeoff", "contact_closed", "time", "stick", "slip", "tangential_impact",
// "to_time_stepping", "to_event_driven"
std::string_view ToString(EventKind k);

struct Event {
  double t = 0;
  EventKind kind = EventKind::kTime;
  std::vector<int> rows;         // global unilateral rows of the contacts involved
  std::vector<double> impulses;  // per row: normal impulse (impacts); 0 otherwise
  // Per row: the tangential impulse in the basis of the contact's tangential rows (impacts of
  // frictional contacts; zero otherwise; the plane uses the first entry).
  std::vector<Eigen::Vector2d> tangential_impulses;
  // Per row: the contact's mode after the event, and its slip direction when it slides (same
  // basis; plane: ±1 in the first entry).
  std::vector<ContactMode> modes;
  std::vector<Eigen::Vector2d> slip_directions;
  double energy_before = 0, energy_after = 0;  // T + V at t⁻ and t⁺
  // Impacts: the kinetic energy rose by more than round-off (Newton's law with friction can do
  // so: contact/friction_problem.h); counted in SimulationStats::energy_gains.
  bool energy_gain = false;
  // Impacts: the impact problem had several post-impact velocities (contact/friction_cone.h,
  // "Choice among solutions": the least kinetic energy was taken); counted in
  // SimulationStats::indeterminate_impacts.
  bool indeterminate = false;
};

enum class RunStatus {
  kFinished,
  kStepSizeUnderflow,
  kNewtonFailure,
  kLinearSolveFailure,
  kNonFinite,
  kLcpFailure,
  kProjectionFailure,
  kEventAccumulation,
  kInterrupted,  // SimulationOptions::stop_flag or Simulation::RequestStop (not a failure)
  kPainleve,     // a frictional contact problem with no solution or several (painleve: error)
};
std::string_view ToString(RunStatus s);

struct SimulationStats {
  integrators::IntegratorStats integrator;
  long events[kNumEventKinds] = {};  // by EventKind
  long lcp_solves = 0;
  double max_position_violation = 0;      // ‖g_A‖∞ over accepted steps (before projection)
  double max_velocity_violation = 0;      // ‖G_A v + ∂g_A/∂t‖∞
  double max_acceleration_violation = 0;  // ‖G_A v̇ + γ_A‖∞ of the index-1 solve at step ends
  double min_gap_after_projection = 0;    // smallest g over unilateral rows after events
                                          // (rows within τ₀ of closing; ∞ if none ever was)
  long watched_row_steps = 0;             // Σ over accepted steps of the watched open rows
  int max_watched_rows = 0;               // largest number of watched open rows in one step
  // Work of the event loop: rows evaluated (the gap g or the rate ġ of one row counts 1), by
  // where, and index-1 solves for the multipliers of the closed rows (take-off functions).
  long rows_evaluated_samples = 0;   // event samples of accepted steps (gaps and rates)
  long rows_evaluated_roots = 0;     // root finding and the tunnelling guard
  long rows_evaluated_switches = 0;  // switching times (I₁, penetration checks) and phase starts
  long multiplier_solves = 0;        // λ of the closed rows (samples, root finding, t*)
  long round_off_departures = 0;     // departing rows whose root fell at the phase start
                                     // (round-off rate: watched through g + τ₀ instead)
  long threshold_closing_fallbacks = 0;  // acceleration problems that failed with the rows
                                         // closing by v_e and were solved without them
  // Friction: impacts that raised the kinetic energy by more than round-off (and the largest
  // gain, J), and the Painlevé configurations met (their diagnoses, the first 100 kept).
  long energy_gains = 0;
  double largest_energy_gain = 0;
  long painleve_inconsistent = 0;
  long painleve_indeterminate = 0;
  std::vector<std::string> painleve_diagnoses;
  // Impacts whose problem had several post-impact velocities (the least kinetic energy taken),
  // and their diagnoses naming the contacts and μ (the first 100 kept).
  long indeterminate_impacts = 0;
  std::vector<std::string> impact_diagnoses;
  double lcp_seconds = 0;  // wall time in the impact and contact problems
  long largest_lcp = 0;    // most unknowns of one LCP (largest component solved)
  double wall_seconds = 0;
};

// The statistics of consecutive runs of one system (restarts, or the two schemes of a hybrid
// run) as those of one run: counts and times summed, the largest violations and energy gain the
// largest of both, the smallest gap the smaller, the integrator's step range the union
// (integrators::IntegratorStats::Add), the diagnoses appended.
SimulationStats Combined(const SimulationStats& a, const SimulationStats& b);

struct RunResult {
  RunStatus status = RunStatus::kFinished;
  std::string message;  // empty when finished
  double t = 0;         // time reached
};

// Receives every accepted step, every output time and every event. Default: do nothing.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void OnStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    (void)t, (void)q, (void)v;
  }
  virtual void OnOutput(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    (void)t, (void)q, (void)v;
  }
  // q at t*, velocities before and after the event.
  virtual void OnEvent(const Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                       const Eigen::VectorXd& v_plus) {
    (void)e, (void)q, (void)v_minus, (void)v_plus;
  }
};

class Simulation {
 public:
  // Throws std::invalid_argument on bad options (unknown integrator, unsupported formulation,
  // restitution outside [0, 1], non-positive thresholds, ...), naming the option.
  Simulation(std::shared_ptr<const engine::MechanicalSystem> system, SimulationOptions options);
  ~Simulation();

  // Sets the initial state: projects onto the bilateral constraints, finds the closed
  // contacts (I₁, I₂) and resolves an initial impact if contacts approach. Throws
  // std::invalid_argument on wrong sizes or non-finite values, and on a contact penetrating by
  // more than τ₀ in an initial state. A resumed state (StateOrigin::kResumed: one a stopped run
  // saved, `saltus run --resume`) may penetrate, as a run stopped by a failure or a
  // time-stepping run leaves it: its penetrating contacts are in I₁ and the switch projects them
  // to g = 0 (step 4).
  void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                StateOrigin origin = StateOrigin::kInitial);

  // Advances to t_end (or until failure). May be called repeatedly with increasing t_end.
  // Stops early with RunStatus::kInterrupted when a stop is requested (below): the state is then
  // that of the last accepted step or event, consistent, and a later call continues from it.
  RunResult AdvanceTo(double t_end);
  // Asks a running AdvanceTo to stop at its next step boundary (callable from an observer, or
  // from another thread or a signal handler); the request is consumed by the AdvanceTo it stops.
  void RequestStop() { stop_requested_.store(true, std::memory_order_relaxed); }
  // Withdraws a stop request that no AdvanceTo consumed (one made by an observer on the last
  // step before t_end): the next AdvanceTo then runs.
  void CancelStopRequest() { stop_requested_.store(false, std::memory_order_relaxed); }
  // For a state handed over from another scheme at the same time (tools/hybrid_scheme.h), after
  // SetState: the state's own output is not repeated (the other scheme gave the outputs up to
  // t) and, with output_step > 0, the next output is at `next_output` (the run's grid).
  void ContinueOutputs(double next_output);

  void AddObserver(Observer* observer) { observers_.push_back(observer); }

  double t() const;
  const Eigen::VectorXd& q() const;
  const Eigen::VectorXd& v() const;
  // Unilateral rows currently closed (I₂ ∩ U: every contact whose mode is not open), ascending.
  const std::vector<int>& closed_rows() const;
  // The rows kept as equalities between events (A = B ∪ I₂ ∩ U, events/contact_modes.h),
  // ascending.
  const std::vector<int>& active_rows() const;
  // The mode of every closed contact (stick, slip with its direction, or closed), ascending by
  // row as closed_rows(); no solve (ContactForces() adds the forces).
  const std::vector<ContactState>& contact_states() const;
  // Multipliers of the active rows at the current state (index-1 solve), in row order of
  // active_rows().
  Eigen::VectorXd Multipliers() const;
  // The force of every closed contact at the current state: normal λ_N and tangential λ_T (the
  // multipliers of its tangential rows when it sticks, −μ λ_N d when it slides, 0 when it is
  // frictionless), in the basis of its tangential rows, with its mode. In the order of
  // closed_rows().
  struct ContactForce {
    int row = -1;
    ContactMode mode = ContactMode::kClosed;
    double normal = 0;
    Eigen::Vector2d tangential = Eigen::Vector2d::Zero();
    Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();
  };
  std::vector<ContactForce> ContactForces() const;
  const SimulationStats& stats() const;
  const engine::MechanicalSystem& system() const { return *system_; }
  const SimulationOptions& options() const { return options_; }

 private:
  struct Impl;
  std::shared_ptr<const engine::MechanicalSystem> system_;
  SimulationOptions options_;
  std::vector<Observer*> observers_;
  std::atomic<bool> stop_requested_{false};
  std::unique_ptr<Impl> impl_;
};

}  // namespace saltus::events

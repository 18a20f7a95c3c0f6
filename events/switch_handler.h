// What the event loop does at a switching time t* (Haddouni et al. 2017, Fig. 2 and Section 2.3;
// steps 1-4 of events/simulation.h): the impact problem, the new contact modes from the
// acceleration-level problem, and the projection onto the constraint manifold.
//
//   I₁        = {α : g^α(t*) ≤ τ₀} ∪ (closed contacts) ∪ (contacts whose impact function fired)
//   impact    eq. (4) on the rows of I₁ with u⁻ ≤ τ₁, repeated while the impact leaves a row of
//             I₁ approaching (a cascade at the same instant, at most kMaxImpactStages stages);
//             with friction, Newton's law on the normal velocity and Coulomb's on the impulses
//             (contact/friction_problem.h), the energy checked after each stage; an impact
//             with several post-impact velocities (contacts of one component, ≤ 6 frictional
//             in the plane: enumerated) takes the one of least kinetic energy
//             (contact/friction_cone.h, "Choice among solutions"), is logged with its contacts
//             and μ, counted and flagged on its event
//   modes     the acceleration-level problem (eq. 12; with friction, the Coulomb law at
//             acceleration level) on the rows of I₁ left with u_N⁺ ≤ max(τ₁, v_e) decides which
//             stay closed and how (stick, or slip with a direction)
//   project   positions onto g_A = 0 (eq. 35), velocities onto G_A v + ∂g_A/∂t = 0 (eq. 36)
//
// Friction at the mode decision. A frictional contact of the candidates is a stick candidate when
// its tangential velocity is ‖u_T‖ ≤ τ₁ (it sticks if the cone admits a force with g̈_T = 0, else
// it starts to slide along g̈_T: MBSim's rule), and sliding with d = u_T/‖u_T‖ otherwise (its
// friction force −μ λ_N d substituted). A contact whose stick → slip function fired cannot stay
// stuck: should the problem say stick (the force on the cone's boundary to round-off), it slides
// along −λ_T. Every decision is made once per switching time, so a stick → slip → stick loop at
// one instant cannot occur. When the problem with sliding contacts has no solution or several
// (Painlevé: contact/friction_problem.h), the run stops (SimulationOptions::painleve = kError) or
// a tangential impact at the current state (an impulse without collision, e = 0; Génot &
// Brogliato 1999) resolves it and the modes are decided again at the new velocity.
//
// Redundant normal rows with sliding friction. When the normal rows of sliding contacts are
// linearly dependent (the woodpecker's sleeve jammed at two diagonal corners: both gaps are the
// same function of its angle), the phase's index-1 solve fixes only their resultant, while the
// friction force −μ_i λ_N,i d_i depends on each λ_N,i: the problem is indeterminate (Pfeiffer &
// Glocker 1996, Sec. 7.3) and the minimum-norm split of the phase would differ from the solution
// the decision chose, so the slip could reverse at once and the same switch repeat without end.
// A sliding contact that the chosen solution leaves without force (λ_N ≤ τ₃; a vertex solution
// of the planar LCP loads one row of a dependent pair) is therefore left open when its normal row
// is in the span of the other active rows and those have another μ: the phase then reproduces
// the chosen solution, and the contact stays touching through the rows it depends on (its gap
// witness watches it). With one μ over the group the phase keeps the minimum-norm split (the
// symmetric loads of a box spinning on four corners), an admissible split of the same problem.
//
// Take-offs that lose their load together. A contact whose take-off function fired opens without
// being posed to the acceleration problem, unless another closed contact on the same coordinates
// (its Jacobian row has the same support, round-off entries counted as zeros — SameSupport in
// events/witness.h: points of one face on one surface) is unloaded
// at t* too (λ_N ≤ τ₃; two corners of a slider leaving its guide). The fired and unloaded
// contacts of such a group are then all candidates of the one problem, and each stays closed only
// if that problem loads it (λ_N > τ₃; not by g̈ ≤ W_αα τ₃, which holds for every contact of the
// group to round-off): the complementarity decides who opens, and a contact that opens has g̈ ≥ 0.
// Deciding the unloaded contact alone kept it closed at λ = 0 while the fired one, left out of the
// problem, came back at once; the two alternated. The group is decided once per switching time.
//
// Each step is a member function; the rules behind each are in events/simulation.h.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "contact/friction_problem.h"
#include "contact/impact_problem.h"
#include "events/contact_modes.h"
#include "events/event_context.h"
#include "events/witness.h"

namespace saltus::events {

// An impact cascade longer than this is taken as a cycle (a settling cascade in a dense pile
// converges geometrically: 47 stages for a factor 1000 in the fastest approach at a ratio of
// 0.86 per stage), and the run stops.
inline constexpr int kMaxImpactStages = 1000;

// A normal row whose distance from the row space of other rows is below this fraction of its
// norm is redundant with them (the scale of the Jacobians' round-off: 1e-10 relative).
inline constexpr double kRedundancyTolerance = 1e-10;

// The velocity projections after a switch accept a stalled residual below this fraction of τ₁
// (engine::ProjectionOptions::stall_tolerance): the event loop counts |ġ| ≤ τ₁ as zero, so such
// a residual changes no decision (nearly redundant closed rows of a settled pile leave one along
// W's near-null space).
inline constexpr double kVelocityStallFraction = 1e-3;

// A dense-output state whose phase rows are violated by at most this fraction of τ₀ (positions)
// and τ₁ (velocities) is not projected before the switch (SwitchHandler::OntoPhaseManifold):
// spread over other rows, such an error leaves gaps that I₁'s threshold τ₀ still takes as
// closed together, and rates that τ₁ takes as zero.
inline constexpr double kPhaseResidualFraction = 0.1;

// The witnesses that fired at a switching time (rows ascending).
struct FiredWitnesses {
  std::vector<int> impacting;    // impact function located at t*: the contact belongs to I₁
  std::vector<int> forced_open;  // take-off function ≤ 0: the contact opens
  std::vector<int> unloaded;  // closed, not fired, λ_N ≤ τ₃ at t* (set when some row fired)
  std::vector<int> slipping;  // stick → slip function ≤ 0: the contact cannot stay stuck
  std::vector<Eigen::Vector2d> slip_directions;  // per slipping row: the direction it slides in
};

class SwitchHandler {
 public:
  explicit SwitchHandler(EventContext& ctx);

  // At (t, q, v⁻) with the fired witnesses. On return v is v⁺, q and v are projected, `modes`
  // holds the new modes and `events` the impact and mode-change events (each with the modes of
  // its contacts after the switch). Throws RunFailure (lcp_failure, projection_failure, painleve).
  void Handle(double t, Eigen::VectorXd& q, Eigen::VectorXd& v, ContactModes& modes,
              const FiredWitnesses& fired, std::vector<Event>* events);

  // The state (q, v) at t* from the dense output, moved onto the manifold of the phase that
  // ends there: positions onto g_A = 0 (eq. 35) and velocities onto G_A v + ∂g_A/∂t = 0
  // (eq. 36), A the phase's active rows. The integrators project their step ends, not their
  // interpolants, so the dense output meets the phase's constraints only to its interpolation
  // error, while the exact solution at t* is on that manifold, rows leaving at t* (a take-off:
  // g = ġ = 0 there) included. Projected after the switch onto other rows instead, the error
  // becomes motion that no row holds (a slider whose two corners leave a guide wall together
  // is tilted, and they reach the opposite wall at different times). A state within
  // kPhaseResidualFraction of τ₀ and τ₁ is left as it is (see there). So is one whose projection
  // does not converge (the projection after the switch reports it).
  void OntoPhaseManifold(double t, Eigen::VectorXd& q, Eigen::VectorXd& v,
                         const std::vector<int>& phase_rows);

  // The gaps of the unilateral candidates within τ₀ after the last Handle (GapWitness reuses
  // them at the phase start that follows).
  const GapSnapshot& snapshot() const { return snapshot_; }

  // Event records are reused from switch to switch, with the storage of their lists, so that a
  // switch allocates nothing in steady state: Recycle takes the records of *events back (and
  // clears it), NewEvent appends a record with empty lists (a recycled one when there is one).
  void Recycle(std::vector<Event>* events);
  Event& NewEvent(std::vector<Event>* events, double t, EventKind kind);

 private:
  // I₁ (ascending, into i1_, returned), and u = ġ of its rows into u_.
  const std::vector<int>& ClosedInPosition(double t, const Eigen::VectorXd& q,
                                           const Eigen::VectorXd& v, const std::vector<int>& closed,
                                           const std::vector<int>& impacting);
  // Step 1: the impact cascade on I₁ (v and u_ updated); the impact event when any row approached.
  void ResolveImpacts(double t, const Eigen::VectorXd& q, Eigen::VectorXd& v,
                      const std::vector<int>& i1, double energy_before, std::vector<Event>* events);
  // One stage of the cascade on `rows` with restitution `e`: v ← v⁺; the impulses (normal, and
  // tangential per row) into the outputs. Throws RunFailure.
  void ImpactStage(double t, const Eigen::VectorXd& q, Eigen::VectorXd& v,
                   const std::vector<int>& rows, const std::vector<double>& e,
                   Eigen::VectorXd* normal, std::vector<Eigen::Vector2d>* tangential,
                   bool* energy_gain, bool* indeterminate);
  // Steps 2-3: the states of the contacts of I₁ that stay closed.
  std::vector<ContactState> DecideModes(double t, const Eigen::VectorXd& q, Eigen::VectorXd& v,
                                        const std::vector<int>& i1, const FiredWitnesses& fired,
                                        std::vector<Event>* events);
  // The take-off group at t* (ascending; see the header).
  std::vector<int> TakeoffGroup(double t, const Eigen::VectorXd& q,
                                const FiredWitnesses& fired) const;
  // The frictionless decision (λ > τ₃ or g̈ ≤ W_αα τ₃; the take-off group λ > τ₃ only) on
  // `candidates` at v_acc, or nothing when the problem fails (then *message says why).
  bool DecideFrictionless(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v_acc,
                          const std::vector<int>& candidates, const std::vector<int>& grouped,
                          std::vector<ContactState>* states, std::string* message);
  // The frictional decision on `candidates` at v_acc; kLcpFailure when the problem failed;
  // kPainleve when it is a Painlevé case, with the contacts concerned in painleve_rows and, when
  // it is indeterminate, one of its solutions in states.
  // The take-off group stays closed only with λ_N > τ₃.
  RunStatus DecideFrictional(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v_acc,
                             const std::vector<int>& candidates, const std::vector<int>& grouped,
                             const FiredWitnesses& fired, std::vector<ContactState>* states,
                             std::string* message, std::vector<int>* painleve_rows);
  // A sliding contact that the decision leaves without normal force (λ_N ≤ τ₃) and whose normal
  // row lies in the span of the other active rows (to kRedundancyTolerance, relative) is dropped
  // from `states`: it stays touching through the others, and keeping it closed would let the
  // phase's minimum-norm multipliers load it and change its friction force (see the header).
  void DropIfRedundant(double t, const Eigen::VectorXd& q, int row,
                       std::vector<ContactState>* states);
  std::vector<int> ActiveRowsExcept(const std::vector<ContactState>& states, int row) const;
  // The tangential impact that resolves a Painlevé configuration of `candidates` (v updated,
  // event appended). Whether it changed v (false: no impulsive solution, nothing happened).
  bool TangentialImpact(double t, const Eigen::VectorXd& q, Eigen::VectorXd& v,
                        const std::vector<int>& candidates, std::vector<Event>* events);
  // The contacts of `rows` for the frictional problems, stick candidates or sliding at v.
  std::vector<contact::FrictionalContact> Contacts(double t, const Eigen::VectorXd& q,
                                                   const Eigen::VectorXd& v,
                                                   const std::vector<int>& rows, bool impact,
                                                   const std::vector<double>* restitution);
  // Step 4: the projection; keeps the gaps of the candidates within τ₀ at the final q.
  void Project(double t, Eigen::VectorXd& q, Eigen::VectorXd& v, const std::vector<int>& i1,
               const std::vector<int>& new_closed, const std::vector<int>& active);
  // The candidates within τ₀ at q and their gaps into near_, g_near_.
  void NearGaps(double t, const Eigen::VectorXd& q);
  // Smallest gap after projection and the snapshot, from near_ / g_near_ at (t, q).
  void RecordGaps(double t, const Eigen::VectorXd& q);
  // The mode-change events from the states before and after.
  void RecordModeChanges(double t, const std::vector<ContactState>& before,
                         const std::vector<ContactState>& after, double energy_before,
                         double energy_after, std::vector<Event>* events);
  contact::FrictionOptions FrictionOptions() const;
  // The simulation's projection options with the stalled-residual bound of the velocity
  // projections (kVelocityStallFraction).
  engine::ProjectionOptions VelocityProjection() const;

  EventContext& ctx_;
  bool frictional_ = false;        // some contact of the system has μ > 0
  bool offered_solution_ = false;  // the last DecideFrictional was indeterminate with a solution
  Eigen::VectorXd u_;              // ġ of the rows of I₁
  Eigen::VectorXd v_of_u_;         // the v at which u_ was computed (with the q of the switch)
  bool q_unmoved_ = false;         // q is still that of ClosedInPosition (no projection)
  // OntoPhaseManifold's workspace: the phase rows' g and ġ, the projected state.
  Eigen::VectorXd g_phase_, rate_phase_, q_phase_, v_phase_;
  std::vector<int> near_;
  Eigen::VectorXd g_near_;
  bool near_gaps_current_ = false;  // near_ / g_near_ hold the candidates' gaps at the current q
  GapSnapshot snapshot_;
  // ResolveImpacts' workspace: the total impulses, the rows of a stage and their results.
  Eigen::VectorXd total_impulse_, u_initial_, stage_normal_;
  std::vector<Eigen::Vector2d> total_tangential_, stage_tangential_;
  std::vector<int> stage_rows_;
  std::vector<Eigen::Index> stage_index_;
  std::vector<double> stage_restitution_;
  // The frictionless impact problem's storage: M's factor once per run when M is constant, the
  // result without allocation (contact::ImpactWorkspace).
  contact::ImpactWorkspace impact_workspace_;
  // Handle's workspace: I₁, a union buffer, the modes before the switch, Project's gaps of I₁.
  std::vector<int> i1_, union_buffer_;
  std::vector<ContactState> before_;
  Eigen::VectorXd g_i1_;
  std::vector<Event> spare_events_;  // recycled records (Recycle, NewEvent)
};

}  // namespace saltus::events

// Moreau–Jean time-stepping: the event-capturing alternative to the event loop (events/), for
// systems whose contacts change too often to locate every event, such as piles (Acary &
// Brogliato, Numerical Methods for Nonsmooth Dynamical Systems, LNACM 35, 2008, Sec. 10.1;
// Moreau, Numerical aspects of the sweeping process, CMAME 177, 1999; Jean, The non-smooth
// contact dynamics method, CMAME 177, 1999). Impacts and resting contact are treated alike, by
// one contact problem on impulses per step of fixed size h; no event is located.
//
// One step from (t_k, q_k, v_k), θ ∈ [1/2, 1]:
//   1. prediction   t̃ = t_k + (1 − θ) h,   q̃ = q_k ⊕ (1 − θ) h v_k
//                   (θ = 1/2: Moreau's midpoint scheme; θ = 1: the catching-up scheme);
//   2. index set    I = {α ∈ U : g^α(t̃, q̃) ≤ m^α}, over the rows the system lists as
//                   candidates at q̃ (engine::MechanicalSystem::CandidateRows: the broadphase
//                   pairs), with the margin m^α = min(2√3 h ‖v_k‖∞, 2 h max(−U^α_k, 0) + h v_e)
//                   + τ₀ (below, "Speculative contacts"; m = 0 with MoreauJeanOptions::
//                   speculative off, the classical index set g ≤ 0);
//   3. one contact problem (StepContactSolver; frictionless: contact::SolveVelocityStep, an LCP
//      on the Delassus matrix solved by the chain of contact/complementarity.h; with μ > 0 on a
//      row of I: contact::SolveFrictionalVelocityStep, Coulomb's law on the impulses with the
//      exact cone, or the faceted one, of contact/friction_cone.h)
//        M(q̃) (v_{k+1} − v_k) = h F(t̃, q̃, v_k) + G(q̃)ᵀ P,      G_B v_{k+1} + ∂g_B/∂t = 0,
//        0 ≤ U^α_{k+1} + e^α U^α_k + s^α ⊥ P^α ≥ 0  (α ∈ I),     P^α = 0  (α ∉ I),
//      with U = G(q̃) v + ∂g/∂t (Newton's impact law over the step, Acary & Brogliato eq. 10.5),
//      e^α the row's restitution (else the global one) and e^α = 0 when U^α_k > −v_e (the
//      restitution threshold of the event loop: slow approaches are plastic); s^α = 0 on the
//      closed rows (g^α(q̃) ≤ 0), and on the open ones s^α = g^α(q̃)/(θ h), e^α = 0 (below);
//   4. update       q_{k+1} = q̃ ⊕ θ h v_{k+1},   t_{k+1} = t_k + h.
// On vector spaces q_{k+1} = q_k + h ((1 − θ) v_k + θ v_{k+1}): the θ-method on the positions.
//
// Speculative contacts. With I = {g(q̃) ≤ 0} alone a row that is open at q̃ but closes during the
// step is not in the step's problem: the step ends up to θ h |U| inside, and the next step's
// capture adds (1 − e) h |U| / 2 (a pile's landing: −1.08 mm at 1.65 m/s, h = 1 ms; and a row
// that starts to approach only because of another row's impulse in the same step is missed
// altogether; docs/time-stepping.md). The rows within the margin m enter the problem with the
// gap-aware law of Moreau's sweeping process on positions, written at the step's end with
// g(q_{k+1}) ≈ g(q̃) + θ h U_{k+1} (Acary & Brogliato 2008, Sec. 10.1, the catching-up form
// g_{k+1} ≥ 0 linearized at q̃; the same idea as the speculative contacts of game physics,
// E. Catto, "Contact manifolds / speculative contacts", GDC 2013):
//   open α (g(q̃) > 0):  0 ≤ U_{k+1} + g(q̃)/(θ h) ⊥ P ≥ 0,
// i.e. the row may close to g = 0 by the step's end and no further, and gets no impulse when it
// does not close. Where g is convex along the motion (sphere–sphere, sphere–plane: the distance
// of centres), g(q_{k+1}) ≥ g(q̃) + θ h U_{k+1} ≥ 0 exactly on translations. The margin: a row
// enters when its own approach could close it within two steps, or it is within h v_e (a resting
// contact that gravity closes), and never beyond what bodies moving at ‖v_k‖∞ can close (√3 h
// ‖v_k‖∞ each). A row that the step's impulses drive in from further (an approach that starts
// within the step) and that ends the step below −τ₀ is added to I and the step solved again (at
// most kMaxSpeculativeRounds times), so the margin decides the cost, not the result: a margin
// of 2√3 h ‖v_k‖∞ for every row (first try) put 1421 contacts, most of them open, in one
// frictional component of the 200-sphere pile at 0.47 s, which the chain did not solve.
// Restitution: an open row with e > 0 that approached faster than v_e at the step's start
// (U_k < −v_e) and received an impulse in that problem impacts within the step; the problem is
// solved once more with Newton's law (e, s = 0) on those rows (the restitution pass of
// speculative contacts: Newton's law needs the approach velocity, which the gap law would have
// lowered). It then leaves with U_{k+1} = −e U_k (single contact) and ends the step at
// g ≥ g(q̃) > 0: the impact is located within O(h) in time, but nothing penetrates. A plastic
// row (e = 0, or U_k ≥ −v_e) keeps the gap law: stopping it at U_{k+1} = 0 would leave it up
// to θ h |U| above the surface to fall again (an O(√(h U / g)) delay). Friction acts only through
// P: an open row with P = 0 has no friction, one with P > 0 is closed at the step's end (u_N⁺ = −s,
// De Saxcé's cone on the shifted normal velocity: contact/friction_problem.h). Penetration that is
// left: a gap-law capture ends the step at g = 0 with U_{k+1} = −g(q̃)/(θ h), no faster than the
// approach U_k + h a of the free motion, and the next step's prediction moves it (1 − θ) h
// |U_{k+1}| inside, where the closed row's law U ≥ 0 keeps it. With e > 0 only approaches slower
// than v_e are captured so: |g| ≤ (1 − θ) h (v_e + h |a|), 10 µm for v_e = 0.01 m/s, |a| = 9.81
// m/s², h = 1 ms, before the position projection below; with e = 0, (1 − θ) h (|U| + h |a|), half
// the h |U| of the classical index set. The energy over a step with only gap-law impulses: ½ P (U_k
// + U_{k+1}) with U_{k+1} = −s ≤ 0 on a row with P > 0, ≤ 0 when it approached (U_k ≤ 0). The
// forces are evaluated once per step at (t̃, q̃, v_k): the iteration matrix is M, not the M + hθC +
// h²θ²K of the linearized θ-method on F (Acary & Brogliato, Sec. 10.1.2); the two agree for gravity
// and constant loads, and stiff or strongly damped force elements need h below their explicit
// stability limit. The scheme is of order 1. Accuracy: impact times are within O(h). Without
// speculative contacts the step before the capture may end up to θ h |U| inside, and the prediction
// of the capturing step moves (1 − θ) h |U| further, so a contact penetrates by at most about h |U|
// (O(h·v)) and positions are not corrected; with them, by the (1 − θ) h (v_e + h |a|) above (e >
// 0) before the position projection, by τ₀ after it. A resting contact (U_k ≈ 0, α
// ∈ I) has U_{k+1} ≥ 0 and does not sink further. Joints (bilateral rows) are enforced at velocity
// level; the positions drift by O(h²) per step and are projected back onto g_B = 0
// (engine::ProjectPositions) when ‖g_B‖∞ exceeds MoreauJeanOptions::joint_drift.
//
// Deferred open rows (systems with friction; MoreauJeanOptions::defer_open_rows). An open row of
// I that the free motion leaves open and approaches no faster than v_e (U_free + s ≥ 0 and U_free
// ≥ −v_e, U_free = G(q̃)(v_k + M⁻¹ h F): the near contacts of a settling pile) is left out of the
// first solve of the step. P = 0 satisfies its law whenever the answer has U_{k+1} + s ≥ 0
// (for Coulomb's law too: with P = 0 the law asks ŵ = w + μ ‖w_T‖ e_N ∈ K_μ*, i.e. w_N ≥ 0), so
// an answer of the problem without the deferred rows in which each of them has U_{k+1} + s ≥
// −τ₀/(θ h) is an answer of the whole problem, the deferred rows ending within τ₀ of g ≥ 0 (their
// P = 0 changes neither v_{k+1} nor the other rows' laws). A deferred row that the answer violates
// joins and the step is solved again from the last answer (at most kMaxDeferredRounds rounds;
// then every deferred row joins). Why: the open rows link the bodies of the body–contact graph, so
// they merge frictional components (contact/sparse_friction_step.h) into larger and harder ones
// although they carry no impulse (docs/time-stepping.md: the 200-sphere μ = 0.5 pile). Off by
// default: in the 100-sphere μ = 0.5 pile the neighbours' impulses push the near rows in, 3.7
// rounds a step to t = 0.6 s, and the CPU rose from 28 s to 49–87 s (docs/time-stepping.md).
//
// Position projection (MoreauJeanOptions::project_contacts; with speculative contacts, for systems
// without joints): after the step q_{k+1} is moved to the nearest point, in the metric of M, of
// the linearized admissible set {g + G δ ≥ 0}: δ = M⁻¹ Gᵀ λ with 0 ≤ W λ + g ⊥ λ ≥ 0, W = G M⁻¹
// Gᵀ at q_{k+1} (the projected Moreau–Jean scheme of V. Acary, "Projected event-capturing
// time-stepping schemes for nonsmooth mechanical systems with unilateral contact and Coulomb's
// friction", CMAME 256, 2013), solved as contact::SolveVelocityStep with v = 0, f = 0 and s = g −
// ∂g/∂t, on the rows within 2 d + τ₀ of contact (d the deepest penetration: a correction of at most
// d per row reaches no further), and repeated while a row is below −τ₀ (at most
// kMaxProjectionPasses; then kProjectionFailure). Sphere–sphere and sphere–plane gaps are convex in
// the centres, so g(q ⊕ δ) ≥ g + G δ ≥ 0 for translations. Velocities are kept. It runs only on
// steps that end with a row below −τ₀; each moves the bodies by at most d ≤ (1 − θ) h (v_e + h |a|)
// and raises the potential energy by at most m |g_grav| d per body. The projected rows end at g ≈ 0
// (within the LCP tolerance, and ≥ 0 up to it where g is convex); a row is closed at the next
// step's start when g(q_k) ≤ 0 (the classical law, s = 0) and open, with the laws above, only when
// g(q_k) > 0. Why not "open when g(q_k) > −τ₀": a row that the projection left touching (g within
// τ₀ of 0) and that is hit at U_k < −v_e would get the floor s = gap law, which asks it to end the
// step at g ≥ g_k after the prediction moved it (1 − θ) h |U_k| in, i.e. to leave at
// U_{k+1} ≥ (1 − θ)/θ |U_k| = |U_k| for θ = 1/2: an elastic rebound whatever its e. The piles
// then kept bouncing, and their contact problems cost 1.1–2.8× more (docs/time-stepping.md,
// fifteenth session). As closed rows they obey Newton's law with their e, may end up to
// (1 − θ) h |U_k| inside, and the projection puts them back. A projection target of −τ₀/2 (every
// projected row strictly inside) was measured slower, and so was keeping fast approaches open.
//
// Default: on when no unilateral row has friction, off otherwise. On the settled μ = 0.5 pile
// (N = 100, resumed at t = 1.5 s) a step cost 9.5 s CPU with it against 0.036 s without: after
// each projection the hyperstatic contacts sit within round-off of g = 0, some open and some
// closed, and the frictional components went from NSGS to the Newton stage and PROX (16 and 1 of
// 20 steps; docs/time-stepping.md, fifteenth session). With friction the penetration is then the
// speculative law's (1 − θ) h (v_e + h |a|).
//
// Sleeping (MoreauJeanOptions::sleeping; systems without joints whose mass matrix is block
// diagonal, engine::MechanicalSystem::BlockSparseMatrices: the bodies are its blocks). A body is
// calm after a step when ‖v_c‖∞ ≤ sleep_speed, ready when it has been calm for the last
// ⌈sleep_time / h⌉ steps; the islands are the components of the graph whose vertices are the
// ready bodies and whose edges are the rows of I between two of them (the ground is no vertex).
// An island falls asleep unless a row of I that received an impulse P > 0 in the step links it
// to an awake body that is not ready (that body loads it); a row with P = 0 to such a body does
// not keep it awake (it becomes a boundary row, below). Why: a pile is one component of I, and
// a calm group of it always had a sliding or rolling neighbour within the speculative margin,
// so with the components of all awake bodies (the fifteenth session's rule) no part of a pile
// slept while one body moved (docs/time-stepping.md, sixteenth session). It falls asleep: its
// velocities are set to 0, its bodies are not integrated (no force impulse, so v stays 0 and q
// does not move) and the rows of I among them (or between one of them and the ground) leave the
// contact problem, keeping the impulses of the step they fell asleep in for the outputs
// (active_rows/impulses). Why it is sound: under a load such as gravity a body cannot stay calm
// for the window unless its contacts carry it (free fall changes v by g h per step, ≫ sleep_speed),
// and a supported pile whose bodies all stay calm is at rest up to sleep_speed; freezing it changes
// its velocities by at most sleep_speed and its positions by at most sleep_speed × the time it
// sleeps had the integrated pile kept creeping at that speed. An island wakes (all its bodies,
// integrated from the next problem on, and calm again for a whole window before they sleep) when
//   - an awake body approaches it: a row α of I between an awake body and one of its bodies (a
//     boundary row) whose law the step would break with P^α = 0. The sleeping side has v = 0 and
//     gets no impulse, so P^α = 0 is an answer for α exactly when the awake side's motion keeps
//     the row's end gap g(q̃) + θ h U^α_{k+1} ≥ min(g^α(q_k), 0) − τ₀ (the floor of the gap law of
//     "Speculative contacts", within τ₀; for Coulomb's law too, as for deferred rows). Before the
//     problem, the free motion's rate U_free = G (v_k + M⁻¹ h F) of the awake side stands in for
//     U_{k+1} (a resting contact pressed by gravity fails it and wakes at once); after it, the
//     actual U_{k+1} of the answer is checked, and an island whose boundary row fails wakes and
//     the step is solved again. So a neighbour sliding past a calm group, or resting against it
//     without pressing it, leaves it asleep; one that closes a gap, or pushes, wakes it. Each
//     pass wakes at least one island, so the passes end;
//   - a row that a step's impulses drove in from outside I touches it (the speculative round
//     then solves the step again; the row is a boundary row as above), or the position
//     projection would move it: a boundary row of the projection's problem with λ > 0 wakes its
//     island and the projection pass is made again with the island awake (rows between sleeping
//     bodies, or a sleeping body and the ground, stay out of the projection);
//   - the applied forces F of one of its bodies change by more than 1e-9 max(1, ‖F_sleep‖∞)
//     from the value they had when it fell asleep (a time-dependent load, a host force).
// The bodies of a row (its contact pair's: two, or one and the ground) are read once per row
// from its block-sparse Jacobian row and kept for the run. Cost: the broadphase and the gaps of I
// are still evaluated over all bodies (O(N)); the contact problems, the projections and the
// speculative rounds only over the awake islands; in steady state the sleeping bookkeeping
// allocates nothing.
//
// Outputs, through events::Observer (the same writers as the event loop):
//   OnStep    every step, at t_{k+1};
//   OnOutput  at the first step end at or after each point of the output grid (output_step,
//             0: every step) — the steps of a grid that is a multiple of h land on it;
//   OnEvent   one event of kind impact per step in which some contact of I approached
//             (U^α_k < −τ₁) and received an impulse: those rows, their impulses P^α, T + V at
//             t_k and at t_{k+1}, with v⁻ = v_k and v⁺ = v_{k+1}.
// Statistics reuse events::SimulationStats: integrator.accepted_steps (steps), smallest/largest
// step, rhs_evaluations (force evaluations), events[kImpact] (steps with impacts), lcp_solves
// (steps with a non-empty index set), lcp_seconds, largest_lcp, max_position_violation (deepest
// penetration −g over the rows of I at the step ends, after the position projection),
// min_gap_after_projection (smallest gap over those rows), max_velocity_violation (of the joints,
// before projection), wall_seconds.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "contact/complementarity.h"
#include "contact/friction_cone.h"
#include "contact/impact_problem.h"
#include "contact/sparse_friction_step.h"
#include "contact/sparse_rolling_step.h"
#include "engine/block_sparse.h"
#include "engine/disjoint_sets.h"
#include "engine/mechanical_system.h"
#include "engine/projection.h"
#include "events/simulation.h"  // Observer, Event, RunResult, SimulationStats (header-only use)

namespace saltus::timestepping {

// The name that selects the scheme (`simulation.integrator`, `saltus run --integrator`) and its
// one-line description for `saltus list`.
constexpr std::string_view kMoreauJeanName = "moreau_jean";
constexpr std::string_view kMoreauJeanDescription =
    "Moreau-Jean time-stepping (theta-method at velocity level, one contact problem per fixed "
    "step simulation.step; no event location)";

// Times a step is solved again with the rows its impulses drove below −τ₀ (header,
// "Speculative contacts").
constexpr int kMaxSpeculativeRounds = 3;
// Restitution passes per contact problem at most (header, "Speculative contacts").
constexpr int kMaxRestitutionPasses = 8;
// Rounds that add deferred open rows to a step's problem before all of them join (header,
// "Deferred open rows").
constexpr int kMaxDeferredRounds = 4;
// Linear projections of the positions after a step at most (header, "Position projection").
constexpr int kMaxProjectionPasses = 3;

struct MoreauJeanOptions {
  double h = 1e-3;                     // fixed step (s), > 0
  double theta = 0.5;                  // θ ∈ [1/2, 1]
  double restitution = 0.0;            // global e ∈ [0, 1] for rows without their own
  double restitution_threshold = 0.0;  // v_e (m/s) ≥ 0: slower approaches are plastic
  double tau0 = 1e-9;  // gap (m): a larger initial penetration is bad input (as the event loop)
  double tau1 = 1e-6;  // approach speed (m/s) above which an impulse counts as an impact
  double output_step = 0.0;   // ≥ 0; 0: OnOutput at every step
  double joint_drift = 1e-8;  // ‖g_B‖∞ (m) above which the positions are projected, > 0
  // Speculative contacts (header): rows within the margin of contact enter every step's problem
  // with the gap-aware law. Off: the classical index set g(q̃) ≤ 0 (for comparisons).
  bool speculative = true;
  // Deferred open rows (header): a speculative row that the free motion leaves open enters the
  // problem only when the answer without it violates its law. Off (the default, measured slower):
  // every row of I from the start.
  bool defer_open_rows = false;
  // Position projection after the step onto g ≥ −τ₀ (header), with speculative contacts and
  // without joints: on (true), off (false: the positions of the step are kept, penetration up to
  // (1 − θ) h v_e), or unset (the default): on when no unilateral row has friction.
  std::optional<bool> project_contacts;
  // Sleeping (header, "Sleeping"), for systems without joints that provide their mass blocks:
  // an island whose bodies all kept ‖v_c‖∞ ≤ sleep_speed for sleep_time is frozen. Off: every
  // body is integrated at every step.
  bool sleeping = true;
  double sleep_speed = 1e-5;  // m/s (rad/s for rotations), > 0
  double sleep_time = 0.1;    // s, > 0
  contact::LcpOptions lcp;
  // Cone of the contacts with two tangential rows (friction > 0): exact, or friction_facets ≥ 3
  // facets (contact/friction_cone.h).
  contact::FrictionCone friction_cone = contact::FrictionCone::kExact;
  int friction_facets = 8;
  engine::ProjectionOptions projection;
  // When non-null and set, AdvanceTo stops at the next step boundary (RunStatus::kInterrupted).
  const std::atomic<bool>* stop_flag = nullptr;
};

// The options of an event-driven run mapped onto the scheme: h = integrator_options.h_init (the
// fixed step, `simulation.step`), restitution, threshold, τ₀, τ₁, output step, LCP and
// projection options and the stop flag; θ = 1/2.
MoreauJeanOptions FromSimulationOptions(const events::SimulationOptions& options);

// The options that a scene's `simulation:` section sets for the scheme beyond the event loop's
// (tools/scene.h: theta, speculative, project_contacts, sleeping, sleep_speed, sleep_time), with
// MoreauJeanOptions' defaults; ApplyTo copies them into the scheme's options.
struct SceneKeys {
  double theta = MoreauJeanOptions{}.theta;
  bool speculative = MoreauJeanOptions{}.speculative;
  std::optional<bool> project_contacts = MoreauJeanOptions{}.project_contacts;
  bool sleeping = MoreauJeanOptions{}.sleeping;
  double sleep_speed = MoreauJeanOptions{}.sleep_speed;
  double sleep_time = MoreauJeanOptions{}.sleep_time;
  void ApplyTo(MoreauJeanOptions* o) const {
    o->theta = theta;
    o->speculative = speculative;
    o->project_contacts = project_contacts;
    o->sleeping = sleeping;
    o->sleep_speed = sleep_speed;
    o->sleep_time = sleep_time;
  }
};

// The contact problem of one step (step 3 above), so that frictional problems can replace the
// frictionless one: given the predicted (t̃, q̃), v_k, the impulse f = h F of the forces, the
// bilateral rows, the rows of I, their restitution e and gap rates s (one per row), return
// v_{k+1} with the impulses (contact::ImpactResult: impulse_u per row of I, u_minus_u = U_k, ok
// and message).
class StepContactSolver {
 public:
  virtual ~StepContactSolver() = default;
  virtual contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                                      const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                      const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                                      std::span<const int> unilateral_rows,
                                      std::span<const double> restitution,
                                      std::span<const double> gap_rate,
                                      const contact::LcpOptions& options) const = 0;
  // Whether Solve takes gap rates s > 0 (the speculative rows of MoreauJean); a solver that
  // does not gets only the rows with g(q̃) ≤ 0 and s = 0.
  virtual bool TakesGapRates() const { return true; }
};

// Frictionless contact: contact::SolveVelocityStep.
class FrictionlessStepSolver : public StepContactSolver {
 public:
  contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                              std::span<const int> unilateral_rows,
                              std::span<const double> restitution, std::span<const double> gap_rate,
                              const contact::LcpOptions& options) const override;
};

// Coulomb friction on the rows with friction > 0 (engine::ConstraintRowInfo::friction and their
// tangential rows): a step without joints whose contacts include a frictional one goes to the
// block-sparse contact::SolveFrictionalVelocityStepSparse when it applies (exact cone, nv ≥
// engine::kSparseMinimumNv, spatial contacts, the system's block structure); every other step to
// the dense contact::SolveFrictionalVelocityStep, which hands a step whose rows are all
// frictionless to contact::SolveVelocityStep. `sparse` = false forces the dense path (tests).
// impulse_u holds the normal impulses P_N; largest_lcp the number of contact rows (normal and
// tangential) of the step.
// On the sparse path:
//  - each contact starts from its impulses (P_N, P_T) of the previous sparse step when it was
//    in that step too (same normal row), else from 0: in a resting pile consecutive steps have
//    nearly the same impulses;
//  - `accepted_residual` (contact::FrictionChainOptions): an answer of the chain whose residual
//    is above the tolerance but within this bound is used, and counted in stats(). MoreauJean
//    passes τ₀/h: an error δ of the post-step velocities moves a contact by at most h δ ≤ τ₀ in
//    the step, the gap the scheme already tolerates.
// The warm start and the counts are the solver's state: one solver per run (Solve is not
// thread-safe).
class FrictionalStepSolver : public StepContactSolver {
 public:
  FrictionalStepSolver(contact::FrictionCone cone, int facets, bool sparse = true,
                       double accepted_residual = 0.0)
      : cone_(cone), facets_(facets), sparse_(sparse), accepted_residual_(accepted_residual) {}
  contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                              std::span<const int> unilateral_rows,
                              std::span<const double> restitution, std::span<const double> gap_rate,
                              const contact::LcpOptions& options) const override;
  // Components solved on the sparse path, per stage of the chain, since construction (a
  // component solved again unchanged within a step counts once: contact::ComponentMemo).
  const contact::SparseFrictionStats& stats() const { return stats_; }
  long reused_components() const { return memo_.reused; }

 private:
  // The sparse path with the warm start (above); std::nullopt when it does not apply.
  std::optional<contact::FrictionalImpactResult> SolveSparse(
      const engine::MechanicalSystem& system, double t, const Eigen::VectorXd& q,
      const Eigen::VectorXd& v, const Eigen::VectorXd& f, std::span<const int> unilateral_rows,
      std::span<const double> restitution, std::span<const double> gap_rate,
      contact::FrictionOptions fo) const;

  contact::FrictionCone cone_;
  int facets_;
  bool sparse_;
  double accepted_residual_;
  mutable contact::SparseFrictionStats stats_;
  mutable std::unordered_map<int, Eigen::Vector3d> previous_;  // normal row -> (P_N, P_T)
  mutable contact::ComponentMemo memo_;  // the components of the step being solved
};

// Coulomb friction with rolling resistance, for systems with resistance rows (issue 18 §3; the
// law of contact/rolling_friction_step.h, 5 unknowns per contact, with the gap term s of
// speculative contacts on the normal rows). For systems without joints whose mass matrix is
// block diagonal (and `sparse`): contact::SolveRollingFrictionVelocityStepSparse, Gauss–Seidel
// over the contacts of each component with a local solve per contact, each contact starting from
// its impulses (P_N, P_T, P_R) of the previous step when it was in it (same normal row), else 0
// (in a resting pile consecutive steps have nearly the same impulses), and Siconos' dense
// rolling solver on a component the sweeps leave above the tolerance (the fallback); otherwise
// contact::SolveRollingFrictionVelocityStep (dense, Siconos' solver, cold). impulse_u holds P_N;
// largest_lcp the number of contact rows (normal, tangential and rolling) of the step.
// `accepted_residual` as FrictionalStepSolver's: an answer whose residual (relative to
// max(1, ‖b‖∞), so m/s on a pile's problems) is above the tolerance but within it is used, and
// counted in accepted(). MoreauJean passes τ₀/h (an error δ of the post-step velocities moves a
// contact by at most h δ ≤ τ₀ in the step). The warm start and the counts are the solver's
// state: one solver per run.
class RollingFrictionStepSolver : public StepContactSolver {
 public:
  explicit RollingFrictionStepSolver(double accepted_residual = 0.0, bool sparse = true)
      : accepted_residual_(accepted_residual), sparse_(sparse) {}
  contact::ImpactResult Solve(const engine::MechanicalSystem& system, double t,
                              const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                              const Eigen::VectorXd& f, std::span<const int> bilateral_rows,
                              std::span<const int> unilateral_rows,
                              std::span<const double> restitution, std::span<const double> gap_rate,
                              const contact::LcpOptions& options) const override;
  long accepted() const { return accepted_ + sparse_stats_.accepted; }
  double largest_accepted_residual() const {
    return std::max(largest_accepted_, sparse_stats_.largest_accepted_residual);
  }
  // Components of the sparse path by outcome, and its sweeps, since construction.
  const contact::RollingStepStats& sparse_stats() const { return sparse_stats_; }

 private:
  double accepted_residual_;
  bool sparse_;
  mutable long accepted_ = 0;
  mutable double largest_accepted_ = 0.0;
  mutable contact::RollingStepStats sparse_stats_;
  mutable std::unordered_map<int, Eigen::Matrix<double, 5, 1>> previous_;  // normal row -> P
};

class MoreauJean {
 public:
  // Throws std::invalid_argument naming the option: h ≤ 0 or not finite, θ outside [1/2, 1],
  // restitution outside [0, 1] (also a row's own), negative threshold, τ₀ or τ₁ ≤ 0, negative
  // output step, joint_drift ≤ 0, friction_facets < 3 with the faceted cone, a spinning
  // resistance row (not in Siconos' rolling cone; contact/rolling_friction_step.h), a faceted
  // cone with rolling resistance rows. `contact_solver` null: RollingFrictionStepSolver when the
  // system has rolling resistance rows, else FrictionalStepSolver (accepted residual τ₀/h) when
  // some unilateral row has friction > 0, else FrictionlessStepSolver.
  MoreauJean(std::shared_ptr<const engine::MechanicalSystem> system, MoreauJeanOptions options,
             std::shared_ptr<const StepContactSolver> contact_solver = nullptr);
  ~MoreauJean();

  // Sets the state: projects onto the joints (positions and velocities). Throws
  // std::invalid_argument on wrong sizes, non-finite values, joints that cannot be closed, or a
  // contact penetrating by more than τ₀ in an initial state (naming it). A resumed state
  // (events::StateOrigin::kResumed, `saltus run --resume`) may penetrate: the scheme keeps
  // penetrations of order h times the approach velocity in its own steps (the contacts of g ≤ 0
  // are in its index set from the next step on).
  void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                events::StateOrigin origin = events::StateOrigin::kInitial);
  // Steps of h up to t_end (the last one shortened to land on t_end); may be called again with
  // a larger t_end. Stops early on a failed contact problem (kLcpFailure), a failed joint
  // projection (kProjectionFailure), a non-finite state (kNonFinite) or a stop request
  // (kInterrupted); the state is then that of the last completed step. Throws std::logic_error
  // before SetState and std::invalid_argument on a non-finite t_end.
  events::RunResult AdvanceTo(double t_end);
  void RequestStop() { stop_requested_.store(true, std::memory_order_relaxed); }

  void AddObserver(events::Observer* observer) { observers_.push_back(observer); }

  double t() const { return t_; }
  const Eigen::VectorXd& q() const { return q_; }
  const Eigen::VectorXd& v() const { return v_; }
  // Unilateral rows of the index set I of the last step (ascending; with speculative contacts
  // also the open rows within the margin, with P = 0 unless they closed) and their impulses P.
  const std::vector<int>& active_rows() const { return active_; }
  const Eigen::VectorXd& impulses() const { return impulses_; }
  double last_step() const { return last_step_; }  // h of the last step (0 before the first)
  const events::SimulationStats& stats() const { return stats_; }
  long contact_impacts() const { return contact_impacts_; }  // rows that impacted, summed
  // Steps solved again because a row outside I ended below −τ₀, and restitution passes.
  long speculative_rounds() const { return speculative_rounds_; }
  long restitution_passes() const { return restitution_passes_; }
  // Rounds in which deferred open rows joined a step's problem (header, "Deferred open rows").
  long deferred_rounds() const { return deferred_rounds_; }
  // Linear position projections applied (header, "Position projection"), and the deepest
  // penetration they started from (m; 0 without projections).
  long contact_projections() const { return contact_projections_; }
  double deepest_before_projection() const { return deepest_before_projection_; }
  double projection_seconds() const { return projection_seconds_; }  // wall time in them
  // Whether the steps end with the position projection (options().project_contacts, or its
  // default for this system).
  bool projects_contacts() const { return project_; }
  // Sleeping (header): islands put to sleep and woken since SetState, bodies asleep now, and
  // the body-steps skipped (a sleeping body over one step counts 1).
  long islands_slept() const { return islands_slept_; }
  long islands_woken() const { return islands_woken_; }
  int bodies_asleep() const {
    return static_cast<int>(std::count(asleep_.begin(), asleep_.end(), char{1}));
  }
  long sleeping_body_steps() const { return sleeping_body_steps_; }
  bool sleeping_enabled() const { return sleep_enabled_; }
  const engine::MechanicalSystem& system() const { return *system_; }
  const MoreauJeanOptions& options() const { return options_; }
  const StepContactSolver& contact_solver() const { return *contact_solver_; }
  // T + V at (t, q, v), with the diagonal mass blocks when the system provides them.
  double Energy(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) const;

 private:
  // One step from the current state to t_next; false with *result set when it fails.
  bool Step(double t_next, events::RunResult* result);
  // The unilateral rows with g(t̃, q̃) ≤ margin among the candidates that may come within τ₀
  // over `horizon` at velocity coordinates up to `speed`, with their gaps and rates.
  void IndexSet(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v, double margin,
                double horizon, double speed);
  // The step's contact problem on active_ with the laws of the header (restitution pass
  // included); false with *result set when it fails.
  // Projects q onto g ≥ −τ₀ for the unilateral rows (header, "Position projection"); false when
  // a projection fails or kMaxProjectionPasses passes leave a row below −τ₀.
  bool ProjectContacts(double t, Eigen::VectorXd* q);
  // v_k + M(q)⁻¹ f (by the system's mass blocks when it has them).
  Eigen::VectorXd FreeVelocity(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& f) const;
  bool SolveContacts(double t_pred, const Eigen::VectorXd& q_pred, const Eigen::VectorXd& f,
                     double h, contact::ImpactResult* step, events::RunResult* result);
  // Sleeping (header). Reads the bodies of the rows of `rows` not read yet (row_bodies_).
  void ReadRowBodies(double t, const Eigen::VectorXd& q, std::span<const int> rows);
  const std::array<int, 2>& BodiesOf(int row) const {
    return row_bodies_[static_cast<std::size_t>(row)];
  }
  bool HasAwakeBody(int row) const;
  bool HasSleepingBody(int row) const;
  // Wakes the islands whose forces F changed since they fell asleep and, until none is left,
  // those of the boundary rows of active_ (an awake and a sleeping body) that the free motion
  // breaks; then moves the rows of active_ with no awake body to sleep_rows_ and the boundary
  // rows to watch_rows_, keeping gaps_ and rates_ aligned with active_.
  void WakeAndSplit(double t_pred, const Eigen::VectorXd& q_pred, const Eigen::VectorXd& F,
                    double h);
  // Wakes the sleeping islands of the boundary rows `rows` whose law (header, "Sleeping") the
  // velocities w break at (t̃, q̃); true when some island woke.
  bool WakeOnBrokenBoundaryRows(double t_pred, const Eigen::VectorXd& q_pred,
                                const Eigen::VectorXd& w, double h, std::span<const int> rows);
  // active_ ∪ sleep_rows_ ∪ watch_rows_ (sorted) with their gaps and rates at (t̃, q̃, v_k).
  void RejoinRows(double t_pred, const Eigen::VectorXd& q_pred);
  void WakeIsland(int island);
  // Calm counters of the awake bodies after a step, and the islands (components of the awake
  // bodies linked by the rows of I) whose bodies were all calm for sleep_time fall asleep.
  void UpdateSleeping(const Eigen::VectorXd& F);

  std::shared_ptr<const engine::MechanicalSystem> system_;
  MoreauJeanOptions options_;
  std::shared_ptr<const StepContactSolver> contact_solver_;
  std::vector<events::Observer*> observers_;
  std::vector<int> bilateral_, active_, candidates_;
  std::vector<char> is_unilateral_;
  std::vector<double> restitution_of_row_;
  Eigen::VectorXd gaps_, rates_;  // of `active_` at the prediction
  double t_ = 0, t_base_ = 0, next_output_ = 0, last_step_ = 0;
  long steps_from_base_ = 0;
  bool initialized_ = false, initial_output_done_ = false;
  Eigen::VectorXd q_, v_, impulses_;
  events::SimulationStats stats_;
  long contact_impacts_ = 0;
  long speculative_rounds_ = 0, restitution_passes_ = 0, deferred_rounds_ = 0;
  long contact_projections_ = 0;
  double deepest_before_projection_ = 0.0, projection_seconds_ = 0.0;
  // Sleeping (header): per body (block of v).
  bool sleep_enabled_ = false;
  int block_ = 0;
  std::vector<int> calm_steps_, island_of_;  // island_of_: −1 awake
  std::vector<char> asleep_;
  std::vector<std::vector<int>> islands_;  // bodies of each sleeping island (empty: woken)
  Eigen::VectorXd sleep_force_;            // F of the sleeping bodies when they fell asleep
  std::vector<int> sleep_rows_;            // rows of I between sleeping bodies (this step)
  std::vector<int> watch_rows_;  // boundary rows of I left out of this step's problem (P = 0)
  std::unordered_map<int, double> frozen_impulse_;  // P of the rows of sleeping islands
  // Bodies of each row (blocks of v; −1: the ground; kUnread: not read yet), read once.
  static constexpr int kUnread = -2;
  std::vector<std::array<int, 2>> row_bodies_;
  // Work space of the sleeping bookkeeping, kept so that a step allocates nothing.
  std::vector<int> boundary_, unread_, island_of_root_, report_rows_;
  Eigen::VectorXd report_impulses_;
  std::vector<char> restless_;
  engine::DisjointSets sets_{0};
  engine::BlockSparseRows row_blocks_;
  engine::MassBlocks mass_blocks_;
  Eigen::VectorXd w_, g_k_, g_w_, u_w_;
  long islands_slept_ = 0, islands_woken_ = 0, sleeping_body_steps_ = 0;
  bool speculative_step_ = false;
  bool friction_ = false;  // some unilateral row has friction > 0
  bool project_ = false;   // the position projection is on (projects_contacts)
  double h_ = 0.0;  // the step being taken  // the laws of "Speculative contacts" in this step
  std::atomic<bool> stop_requested_{false};
};

}  // namespace saltus::timestepping

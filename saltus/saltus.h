// Saltus as a physics backend: the public facade for programs that embed the engine.
//
// A saltus::Model is an immutable mechanical system with its contacts
//
//   q̇ = T(q) v,   M(q) v̇ = F(q, v, t) + f_ext + Gᵀ λ,   g_B(q, t) = 0,   0 ≤ g_U ⊥ λ_U ≥ 0,
//
// with Newton impacts v⁺ on the unilateral rows U (Haddouni, Acary, Garreau, Beley & Brogliato,
// Multibody Syst. Dyn. 41 (2017), eq. 1-6); sizes q (nq), v (nv), λ (num_constraints). It is
// built from a scene file (docs/scene-format.md), in code item by item (saltus::PlanarBuilder,
// saltus::SpatialBuilder, saltus/builder.h), from planar bodies, from a Lagrangian system given by
// callbacks, or from any engine::MechanicalSystem (spatial bodies included).
// A saltus::Simulation runs it with the event-driven scheme of the reference paper (Fig. 2):
// advance to a time or by steps, read and set (t, q, v), read multipliers, joint reactions
// (forces, torques, driver efforts; issue 3 §2), index sets I₁ = {g ≤ τ₀} (eq. 13) and I₂
// (closed contacts, eq. 5) and statistics, observe steps and events, apply external generalized
// forces f_ext between steps (co-simulation) and save and restore the full state (a host can
// rewind).
//
// Moreau–Jean time-stepping (issue 23 §3): with SimulationOptions::integrator = "moreau_jean"
// (timestepping::kMoreauJeanName) and a fixed step (integrator_options.h_init > 0, adaptive =
// false: the scene key simulation.step) the same Simulation runs timestepping::MoreauJean
// (timestepping/moreau_jean.h; θ = the scene's simulation.theta, 1/2 for models built in code)
// instead of the event loop, behind tools::Scheme (tools/run_scheme.h). Everything below holds for
// it too — observers (OnStep every step, OnOutput on the output grid, one impact event per step
// with impacts), restarts, Save/Restore, host forces, re-entrancy, RequestStop — except:
// Multipliers/AllMultipliers give the joints 0 and the contacts of the last step's index set
// their mean force P/h; ContactForces and JointReactions throw StateError (the scheme keeps
// neither contact modes nor joint impulses); CurrentIndexSets().i2 is the last step's index set.
//
// Errors: every entry point validates its arguments and throws a saltus::Error subclass whose
// message names the offending item. A run that cannot continue (step size underflow, LCP
// failure, ...) is not an exception: Advance returns a status and the state stays at the last
// accepted step. Internals (event loop, integrators, LCP solvers) are behind a private
// implementation; the model description types (engine::PlanarBody, contact::PlanarContact,
// engine::LagrangianCallbacks, ...) are plain structs shared with the engine.
//
// Restarts: the integrator restarts (as after an event) when the state is set, when f_ext
// changes, at Save and at Restore. Because Save restarts too, continuing after Save and
// continuing after a later Restore of that snapshot give bit-identical results.
//
// Calls from inside observers and callbacks (re-entrancy). While AdvanceTo (or a restart, or a
// multiplier solve that evaluates the force callback) runs, the observers and the force callback
// of this Simulation may call:
//   - the queries (t, q, v, ActiveRows, CurrentIndexSets, stats, options, model,
//     external_force), and Multipliers / AllMultipliers / JointReactions except from inside the
//     force callback (they evaluate the force: StateError there);
//   - Add*Observer / RemoveObserver at any time, themselves included: an observer added during a
//     notification is first called at the next one, a removed one is not called again;
//   - RequestStop;
//   - SetState, SetPositions, SetVelocities, SetExternalForce, SetForceCallback and Restore:
//     their arguments are checked at once (InvalidArgument / StateError thrown to the caller),
//     and the change is deferred to the end of the current step (with its events): the loop
//     stops at that step boundary, the changes are applied there in call order (SetPositions and
//     SetVelocities keep the t and v, resp. t and q, of that boundary), and AdvanceTo continues
//     to its t_end from the new state. Outside AdvanceTo (observers of a restart's initial
//     impact, the force callback inside Multipliers) they are applied when that call ends. An
//     error of a deferred change (e.g. a penetrating state) propagates from the running call,
//     with the state of that boundary kept. Changes requested by a callback that then throws are
//     discarded.
// AdvanceTo, Step, Run and Save from inside are refused with StateError. Destroying, moving or
// move-assigning a Simulation from inside its own observer aborts with a message (the object is
// in use on the caller's stack).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/joint_limits.h"
#include "contact/planar_contacts.h"
#include "contact/shapes.h"
#include "engine/lagrangian_system.h"
#include "engine/mechanical_system.h"
#include "engine/planar_model.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "tools/hybrid_options.h"
#include "tools/limits.h"
#include "tools/reaction_writer.h"

namespace saltus {

// ---- Errors -------------------------------------------------------------------------------
// Base of every exception the facade throws. A message about one call of the facade carries
// that call's name apart from the rest: what() is "<call>: <detail>" (e.g. "AdvanceTo: t_end =
// 1e+308 s is beyond ..."), and a front end that names its calls otherwise (Python's `run`,
// `sim.q`) composes its own message from detail().
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what), detail_(what) {}
  Error(const std::string& call, const std::string& detail)
      : std::runtime_error(call + ": " + detail), call_(call), detail_(detail) {}
  const std::string& call() const { return call_; }  // "" when the message names no call
  const std::string& detail() const { return detail_; }

 private:
  std::string call_, detail_;
};
// A bad argument: wrong size, value out of range, NaN, unknown name.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};
// A malformed or unreadable scene file; what() is "<file>:<line>: <item>: <what>".
class SceneError : public InvalidArgument {
 public:
  SceneError(const std::string& what, std::string file, int line)
      : InvalidArgument(what), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 1-based, 0 when unknown

 private:
  std::string file_;
  int line_;
};
// A call that is not valid in the current state (e.g. restoring a snapshot of another model,
// or a state from which the simulation cannot restart).
class StateError : public Error {
 public:
  using Error::Error;
};

// ---- Model --------------------------------------------------------------------------------
// The options of a Simulation under the names of a scene's `simulation:` section: the event
// loop's (events::SimulationOptions) and those the facade reads itself:
//   theta      θ ∈ [1/2, 1] of integrator moreau_jean (scene key simulation.theta; 1/2 for
//              models built in code);
//   speculative  speculative contacts of integrator moreau_jean on (the default) or off
//              (scene key simulation.speculative; timestepping/moreau_jean.h);
//   project_contacts, sleeping, sleep_speed, sleep_time   the position projection and sleeping
//              of integrator moreau_jean (the scene keys of the same names, timestepping/
//              moreau_jean.h; defaults: on without friction, on, 1e-5 m/s, 0.1 s);
//   hybrid     the hybrid scheme (scene keys simulation.hybrid, step, hybrid_events,
//              hybrid_window, hybrid_calm_time, hybrid_calm_speed; tools/hybrid_scheme.h): the
//              event loop of `integrator` hands the system to Moreau–Jean time-stepping with
//              hybrid.step and theta when its events crowd, and takes it back when calm;
//   friction, rolling_friction, spinning_friction   the scene's simulation-wide coefficients
//              (μ, μ_R, μ_S ≥ 0). They are part of the model (applied to its contacts when it is
//              built), reported here; a Simulation refuses options whose coefficients differ
//              from its model's (build the model with them instead).
struct SimulationOptions : events::SimulationOptions {
  double theta = 0.5;
  bool speculative = true;
  std::optional<bool> project_contacts;  // unset: on when no contact has friction
  bool sleeping = true;
  double sleep_speed = 1e-5;
  double sleep_time = 0.1;
  tools::HybridOptions hybrid;
  double friction = 0.0;
  double rolling_friction = 0.0;
  double spinning_friction = 0.0;
};
using Event = events::Event;
using EventKind = events::EventKind;
using RunStatus = events::RunStatus;
// A contact's mode: open, closed (frictionless), stick or slip (issue 17; events/contact_modes.h).
using ContactMode = contact::ContactMode;
using Statistics = events::SimulationStats;
// Joint reactions (Simulation::JointReactions): per joint its name, the body it acts on (body_b,
// or body_a when body_b is the ground) and the force and torque on that body (world frame,
// torque about the joint point on it; planar models fill force (fx, fy, 0) and torque
// (0, 0, tz)); per driver its name, joint and effort (defined in tools/reaction_writer.h).
using JointLoad = tools::JointLoad;
using DriverEffort = tools::DriverEffort;
using JointLoads = tools::JointLoads;
// The model description types, reachable without the inner namespaces (their definitions and
// units: engine/planar_model.h, engine/spatial_model.h, contact/planar_contacts.h,
// contact/shapes.h, contact/joint_limits.h, engine/lagrangian_system.h).
constexpr int kGround = engine::kGround;
using MechanicalSystem = engine::MechanicalSystem;
using PlanarModel = engine::PlanarModel;
using PlanarModelBuilder = engine::PlanarModelBuilder;
using PlanarBody = engine::PlanarBody;
using PlanarJoint = engine::PlanarJoint;
using PlanarJointType = engine::PlanarJointType;
using PlanarDriver = engine::PlanarDriver;
using PlanarSpringDamper = engine::PlanarSpringDamper;
using PlanarLoad = engine::PlanarLoad;
using PlanarContact = contact::PlanarContact;
using PlanarContactType = contact::PlanarContactType;
using SpatialModel = engine::SpatialModel;
using SpatialModelBuilder = engine::SpatialModelBuilder;
using SpatialMultibodySystem = engine::SpatialMultibodySystem;
using SpatialBody = engine::SpatialBody;
using SpatialJoint = engine::SpatialJoint;
using SpatialJointType = engine::SpatialJointType;
using SpatialDriver = engine::SpatialDriver;
using SpatialSpringDamper = engine::SpatialSpringDamper;
using SpatialTorsionalSpring = engine::SpatialTorsionalSpring;
using SpatialLoad = engine::SpatialLoad;
using DriverKind = engine::DriverKind;
using TimeProfile = engine::TimeProfile;
using Shape = contact::Shape;
using JointLimit = contact::JointLimit;
using LagrangianCallbacks = engine::LagrangianCallbacks;
using ConstraintCallbacks = engine::ConstraintCallbacks;
using Formulation = integrators::Formulation;

class Model {
 public:
  // From a scene file / YAML text (docs/scene-format.md). Throws SceneError.
  static Model FromSceneFile(const std::string& path);
  static Model FromSceneText(const std::string& yaml, const std::string& label = "<scene>");
  // Planar bodies, joints, springs, loads (in `model`) and unilateral contacts. Throws
  // InvalidArgument naming a bad contact.
  static Model FromPlanar(std::shared_ptr<const engine::PlanarModel> model,
                          std::vector<contact::PlanarContact> contacts = {});
  // A Lagrangian system from callbacks with constraint blocks from callbacks; q0, v0 the
  // initial state (size n). Throws InvalidArgument.
  static Model FromLagrangian(engine::LagrangianCallbacks dynamics,
                              std::vector<engine::ConstraintCallbacks> constraints,
                              const Eigen::VectorXd& q0, const Eigen::VectorXd& v0);
  // Any mechanical system (spatial multibody, user subclasses) with its initial state.
  static Model FromSystem(std::shared_ptr<const engine::MechanicalSystem> system,
                          const Eigen::VectorXd& q0, const Eigen::VectorXd& v0);

  int nq() const;
  int nv() const;
  int num_constraints() const;
  std::string name() const;  // the scene name, or "" for models built in code
  const Eigen::VectorXd& initial_q() const;
  const Eigen::VectorXd& initial_v() const;
  // Options of the scene's `simulation:` section, or the defaults for models built in code.
  const SimulationOptions& default_options() const;
  // The scene's t_end, or 0 for models built in code.
  double default_t_end() const;
  std::vector<std::string> PositionNames() const;    // nq
  std::vector<std::string> VelocityNames() const;    // nv
  std::vector<std::string> ConstraintNames() const;  // num_constraints
  std::vector<int> UnilateralRows() const;           // ascending
  // Planar geometry (for visualization): null / empty for non-planar models.
  std::shared_ptr<const engine::PlanarModel> planar_model() const;
  const std::vector<contact::PlanarContact>& planar_contacts() const;
  const engine::MechanicalSystem& system() const;

  struct Data;  // private

 private:
  explicit Model(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  friend class Simulation;
  std::shared_ptr<const Data> data_;
};

// ---- Simulation ---------------------------------------------------------------------------
// Bounds on what one call may ask for (tools/limits.h, README "Limits"): |t| of AdvanceTo and
// SetState at most kMaxMagnitude, and the default number of output rows of one AdvanceTo
// (Simulation::SetMaxOutputRows).
using tools::kDefaultMaxOutputRows;
using tools::kMaxMagnitude;

struct RunResult {
  RunStatus status = RunStatus::kFinished;
  std::string message;  // why the run stopped early; empty when finished
  double t = 0;         // time reached
  bool ok() const { return status == RunStatus::kFinished; }
};

// A trajectory recorded by Simulation::Run: one row per output time (and on both sides of every
// event), plus the event log.
struct Trajectory {
  std::vector<double> t;              // rows
  std::vector<Eigen::VectorXd> q, v;  // per row (nq, nv)
  std::vector<Event> events;          // in time order
  Eigen::MatrixXd QMatrix() const;    // rows × nq
  Eigen::MatrixXd VMatrix() const;    // rows × nv
};

// A saved state: t, q, v, closed contacts, f_ext and statistics (opaque but copyable).
struct Snapshot {
  double t = 0;
  Eigen::VectorXd q, v, f_ext;
  std::vector<int> closed_rows;
  Statistics stats;
  const void* model_id = nullptr;  // the model it belongs to
  // Hybrid runs (SimulationOptions::hybrid): the phase (event loop or time-stepping) and the
  // counters of its switch criterion, so that a restored run goes on in the same phase.
  std::optional<tools::HybridState> hybrid;
};

// The force of one closed contact (Simulation::ContactForces) at the current state. Normal
// λ_N and tangential λ_T: the multipliers of the contact's normal row and, when it sticks, of
// its tangential rows; when it slides, λ_T = −μ λ_N d with d its slip direction (Coulomb's law,
// issue 17 §2); 0 for a frictionless contact. λ_T and d are in the basis of the contact's
// tangential rows (num_tangent_rows: 1 in the plane, using the first entry; 2 in space). The
// vectors are the same forces in the world frame, acting on the contact's body b at its point
// (tools/contact_forces.h).
struct ContactForce {
  std::string name;                         // the contact (its normal row's name)
  int row = -1;                             // its unilateral row
  ContactMode mode = ContactMode::kClosed;  // closed, stick or slip (open contacts are not listed)
  // "closed", "stick", "slip" (space) or "slip+" / "slip-" (the plane, by the sign of d).
  std::string mode_name;
  double normal = 0;                                         // λ_N ≥ 0 (N)
  Eigen::Vector2d tangential = Eigen::Vector2d::Zero();      // λ_T (N)
  Eigen::Vector2d slip_direction = Eigen::Vector2d::Zero();  // d (unit) when sliding, else 0
  int num_tangent_rows = 0;
  int body = -1;                                               // body b (kGround: the ground)
  Eigen::Vector3d point = Eigen::Vector3d::Zero();             // contact point, world (m)
  Eigen::Vector3d normal_force = Eigen::Vector3d::Zero();      // λ_N n on body b, world (N)
  Eigen::Vector3d tangential_force = Eigen::Vector3d::Zero();  // on body b, world (N)
};

// Index sets of the unilateral rows at the current state (ascending global row indices).
struct IndexSets {
  std::vector<int> i1;  // closed in position, g ≤ τ₀ (eq. 13)
  std::vector<int> i2;  // closed in position and velocity, the active contacts (eq. 5)
};

using StepObserver =
    std::function<void(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v)>;
using EventObserver =
    std::function<void(const Event& e, const Eigen::VectorXd& q, const Eigen::VectorXd& v_minus,
                       const Eigen::VectorXd& v_plus)>;
// f(t, q, v) → generalized force (nv) added to F; evaluated by the integrator at every stage.
using ForceCallback = std::function<void(double t, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& v, Eigen::VectorXd* f)>;

class Simulation {
 public:
  // Starts at the model's initial state. Throws InvalidArgument on bad options (unknown
  // integrator, formulation it does not support, moreau_jean without a fixed step h_init > 0
  // and adaptive = false, restitution outside [0, 1], thresholds ≤ 0,
  // tolerances, output_step < 0 or NaN, ...) or an inconsistent initial state (penetration,
  // joints that cannot close).
  explicit Simulation(const Model& model);
  Simulation(const Model& model, const SimulationOptions& options);
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;

  // Advances to t_end (≥ t(), t_end ≤ kMaxMagnitude). Throws InvalidArgument on a bad t_end or one
  // that would exceed max_output_rows(). An exception thrown by a user callback (force,
  // observer) propagates unchanged after the simulation has restarted from its last accepted
  // step, so the run can continue. Returns kInterrupted after RequestStop or a set stop_flag.
  RunResult AdvanceTo(double t_end);
  // AdvanceTo(t() + dt), dt > 0: one communication step of a co-simulation.
  RunResult Step(double dt);
  // AdvanceTo(t_end) recording the trajectory and events (what observers see).
  Trajectory Run(double t_end, RunResult* result = nullptr);
  // Run appending to *trajectory; when AdvanceTo throws (a callback's exception), *trajectory
  // keeps the rows and events recorded so far.
  RunResult RunInto(double t_end, Trajectory* trajectory);

  // Asks a running AdvanceTo to stop at its next step boundary with RunStatus::kInterrupted and a
  // consistent state; a later AdvanceTo continues bit-identically. Callable from an observer, a
  // callback or another thread (it only sets an atomic flag); a request made while nothing runs
  // stops the next AdvanceTo at once. Consumed by the AdvanceTo it stops. (SimulationOptions::
  // stop_flag, e.g. set by a signal handler, stops every AdvanceTo while it is set.)
  void RequestStop();

  // Output rows allowed for one AdvanceTo when options().output_step > 0: AdvanceTo(t_end)
  // throws InvalidArgument when (t_end − t) / output_step exceeds it (an output step that would
  // produce an unbounded amount of data). Default: the model's (scene key
  // simulation.max_output_rows) or kDefaultMaxOutputRows. Throws InvalidArgument unless ≥ 1.
  void SetMaxOutputRows(double rows);
  double max_output_rows() const;

  double t() const;
  const Eigen::VectorXd& q() const;
  const Eigen::VectorXd& v() const;
  // Sets the state and restarts (projection onto the joints, index sets, initial impact).
  // Throws InvalidArgument on sizes (q: nq, v: nv), NaN/Inf or penetration.
  void SetState(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v);
  void SetPositions(const Eigen::VectorXd& q);   // keeps t and v
  void SetVelocities(const Eigen::VectorXd& v);  // keeps t and q

  // Rows of the current phase (joints, then closed contacts; ascending) and their multipliers
  // λ (same order) at the current state, from the index-1 solve.
  std::vector<int> ActiveRows() const;
  Eigen::VectorXd Multipliers() const;
  // λ for every constraint row (num_constraints), zero on open contacts.
  Eigen::VectorXd AllMultipliers() const;
  IndexSets CurrentIndexSets() const;
  // The force of every closed contact at the current state, in ascending row order (open
  // contacts carry none). Throws StateError from inside the force callback (the solve evaluates
  // the force), like Multipliers.
  std::vector<ContactForce> ContactForces() const;
  // Reaction force and torque of every joint and effort of every driver at the current state
  // (e.g. after Step: driving torques, bearing loads), from the multipliers λ of Multipliers()
  // (index-1 solve on the joints and closed contacts with the host's forces included, Haddouni
  // et al. 2017, eq. 8-9): each joint's Gᵀλ of its rows and its drivers' rows reduced to the
  // joint point of one body (engine::PlanarMultibodySystem::JointReactions,
  // engine::SpatialMultibodySystem::JointReactions). Same values as `saltus run --reactions`.
  // Throws StateError for a model that is not a planar or spatial multibody system (Lagrangian
  // or user MechanicalSystem models have no joints).
  JointLoads JointReactions() const;
  // Accumulated over the whole life of this Simulation (restarts included; Restore sets them
  // back to the snapshot's).
  Statistics stats() const;
  const SimulationOptions& options() const;
  const Model& model() const;

  // Observers are called during AdvanceTo: every accepted step (and output time) and every
  // event. Returns an id for RemoveObserver. Throws InvalidArgument on an empty function.
  int AddStepObserver(StepObserver observer);
  int AddOutputObserver(StepObserver observer);
  int AddEventObserver(EventObserver observer);
  void RemoveObserver(int id);  // throws InvalidArgument on an unknown id

  // External generalized force f_ext (nv, finite), held constant until changed (zero-order
  // hold between co-simulation steps); restarts the integrator.
  void SetExternalForce(const Eigen::VectorXd& f_ext);
  const Eigen::VectorXd& external_force() const;
  // A state-dependent force added to F (empty: none). Restarts the integrator.
  void SetForceCallback(ForceCallback force);

  // Full state for rewinding; see the header comment on restarts.
  Snapshot Save();
  // Throws StateError if the snapshot belongs to another model.
  void Restore(const Snapshot& snapshot);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs one scene with several integrators (a comparison study): one RunResult and Statistics per
// integrator name, in order. Throws InvalidArgument on an unknown name.
struct StudyEntry {
  std::string integrator;
  RunResult result;
  Statistics stats;
  Trajectory trajectory;
};
std::vector<StudyEntry> CompareIntegrators(const Model& model,
                                           const std::vector<std::string>& integrators,
                                           double t_end, const SimulationOptions& options);

// Names of the integrators in the table, then "moreau_jean".
std::vector<std::string> IntegratorNames();
// The version of the library ("0.1.0").
std::string Version();

}  // namespace saltus

// Models built in code (PlanarBuilder, SpatialBuilder): saltus/builder.h.
#include "saltus/builder.h"  // IWYU pragma: export

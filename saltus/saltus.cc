#include "saltus/saltus.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "integrators/integrator.h"
#include "timestepping/moreau_jean.h"
#include "tools/contact_forces.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"

namespace saltus {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

using tools::NumberText;

// Throws InvalidArgument(call, detail) unless ok (saltus::Error: the call apart from the detail).
void Require(bool ok, const std::string& call, const std::string& detail) {
  if (!ok) throw InvalidArgument(call, detail);
}

// Runs fn, turning the engine's standard exceptions into the facade's hierarchy. Exceptions of
// other types (user callbacks, Python errors) pass unchanged.
template <class Fn>
auto Translate(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const Error&) {
    throw;
  } catch (const tools::SceneError& e) {
    throw SceneError(e.what(), e.file(), e.line());
  } catch (const std::invalid_argument& e) {
    throw InvalidArgument(e.what());
  } catch (const std::out_of_range& e) {
    throw InvalidArgument(e.what());
  } catch (const std::logic_error& e) {
    throw StateError(e.what());
  }
}

void RequireVector(const VectorXd& x, Eigen::Index n, const std::string& call,
                   const std::string& name) {
  Require(x.size() == n, call,
          name + " has size " + std::to_string(x.size()) + ", expected " + std::to_string(n));
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    Require(std::isfinite(x[i]), call,
            name + "[" + std::to_string(i) + "] = " + NumberText(x[i]) + " is not finite");
  }
}

// Forces added by the host: a constant f_ext and/or a callback (owned by Simulation::Impl).
struct ForceInput {
  VectorXd f_ext;
  bool has_f_ext = false;
  ForceCallback callback;
  mutable int callback_depth = 0;  // > 0 while the callback runs (re-entrancy checks)
};

// The model's system with the host's forces added to F. Everything else is forwarded, so any
// MechanicalSystem (planar, Lagrangian, spatial) drops in: the constraint blocks are the inner
// system's own (same global rows, tangential rows tied to their normal rows, broadphase
// candidates and block-sparse rows), and so are the non-ideal force directions, the block-sparse
// matrices and the accepted-step hook of force elements that use the last step's multipliers.
class ForcedSystem final : public engine::MechanicalSystem {
 public:
  ForcedSystem(std::shared_ptr<const engine::MechanicalSystem> inner, const ForceInput* input)
      : inner_(std::move(inner)), input_(input) {
    for (const auto& block : inner_->constraint_blocks()) AddConstraintBlock(block);
  }
  int nq() const override { return inner_->nq(); }
  int nv() const override { return inner_->nv(); }
  void MassMatrix(const VectorXd& q, MatrixXd* M) const override { inner_->MassMatrix(q, M); }
  bool HasConstantMassMatrix() const override { return inner_->HasConstantMassMatrix(); }
  void Forces(double t, const VectorXd& q, const VectorXd& v, VectorXd* F) const override {
    inner_->Forces(t, q, v, F);
    if (input_->has_f_ext) *F += input_->f_ext;
    if (input_->callback) {
      thread_local VectorXd f;
      f.setZero(inner_->nv());
      ++input_->callback_depth;
      try {
        input_->callback(t, q, v, &f);
      } catch (...) {
        --input_->callback_depth;
        throw;
      }
      --input_->callback_depth;
      if (f.size() != inner_->nv()) {
        throw InvalidArgument("force callback returned " + std::to_string(f.size()) +
                              " entries, expected nv = " + std::to_string(inner_->nv()));
      }
      *F += f;
    }
  }
  void IntegratePosition(const VectorXd& q, const VectorXd& v, double h,
                         VectorXd* q_next) const override {
    inner_->IntegratePosition(q, v, h, q_next);
  }
  bool PositionDifference(const VectorXd& q, const VectorXd& q_base,
                          VectorXd* theta) const override {
    return inner_->PositionDifference(q, q_base, theta);
  }
  void DexpInv(const VectorXd& theta, const VectorXd& v, VectorXd* theta_dot) const override {
    inner_->DexpInv(theta, v, theta_dot);
  }
  double PotentialEnergy(double t, const VectorXd& q) const override {
    return inner_->PotentialEnergy(t, q);
  }
  // Tangent matrices: the inner system's (possibly analytic) ones; f_ext is constant, and a
  // force callback is differentiated by the default finite differences.
  void ForceJacobians(double t, const VectorXd& q, const VectorXd& v, MatrixXd* K,
                      MatrixXd* C) const override {
    if (input_->callback) {
      engine::MechanicalSystem::ForceJacobians(t, q, v, K, C);
    } else {
      inner_->ForceJacobians(t, q, v, K, C);
    }
  }
  void MassMatrixProductJacobian(const VectorXd& q, const VectorXd& a,
                                 MatrixXd* K_M) const override {
    inner_->MassMatrixProductJacobian(q, a, K_M);
  }
  void ConstraintForceJacobian(double t, const VectorXd& q, std::span<const int> rows,
                               const VectorXd& lambda, MatrixXd* K_G) const override {
    inner_->ConstraintForceJacobian(t, q, rows, lambda, K_G);
  }
  void ConstraintVelocityJacobian(double t, const VectorXd& q, const VectorXd& v,
                                  std::span<const int> rows, MatrixXd* Z) const override {
    inner_->ConstraintVelocityJacobian(t, q, v, rows, Z);
  }
  bool HasNonIdealForces() const override { return inner_->HasNonIdealForces(); }
  void ForceDirections(double t, const VectorXd& q, const VectorXd& v, std::span<const int> rows,
                       MatrixXd* H) const override {
    inner_->ForceDirections(t, q, v, rows, H);
  }
  bool BlockSparseMatrices(double t, const VectorXd& q, std::span<const int> rows,
                           engine::MassBlocks* M, engine::BlockSparseRows* G) const override {
    return inner_->BlockSparseMatrices(t, q, rows, M, G);
  }
  bool UsesAcceptedSteps() const override { return inner_->UsesAcceptedSteps(); }
  void AcceptStep(double t, const VectorXd& q, const VectorXd& v, std::span<const int> rows,
                  const VectorXd& lambda) const override {
    inner_->AcceptStep(t, q, v, rows, lambda);
  }
  std::string PositionName(int i) const override { return inner_->PositionName(i); }
  std::string VelocityName(int i) const override { return inner_->VelocityName(i); }

 private:
  std::shared_ptr<const engine::MechanicalSystem> inner_;
  const ForceInput* input_;
};

Statistics EmptyStats() {
  Statistics s;
  s.min_gap_after_projection = std::numeric_limits<double>::infinity();
  return s;
}

}  // namespace

// ==========================================================================================
// Model
// ==========================================================================================
struct Model::Data {
  std::shared_ptr<const engine::MechanicalSystem> system;
  VectorXd q0, v0;
  std::string name;
  SimulationOptions options;  // with the scene's theta and friction coefficients
  double t_end = 0;
  double max_output_rows = kDefaultMaxOutputRows;
  std::shared_ptr<const engine::PlanarModel> planar;
  std::vector<contact::PlanarContact> contacts;
};

namespace {

std::shared_ptr<Model::Data> PlanarData(std::shared_ptr<engine::PlanarMultibodySystem> system) {
  auto data = std::make_shared<Model::Data>();
  // Aliasing pointer: the model lives as long as the system that owns it.
  data->planar = std::shared_ptr<const engine::PlanarModel>(system, &system->model());
  data->q0 = system->model().InitialPositions();
  data->v0 = system->model().InitialVelocities();
  data->system = std::move(system);
  return data;
}

// A planar or spatial (`dimension: 3`, assembled) scene with its options.
std::shared_ptr<Model::Data> SceneData(const tools::Scene& scene) {
  tools::SceneSystem built = tools::BuildSceneSystem(scene);
  auto data = std::make_shared<Model::Data>();
  if (auto planar = std::dynamic_pointer_cast<engine::PlanarMultibodySystem>(built.system)) {
    data->planar = std::shared_ptr<const engine::PlanarModel>(planar, &planar->model());
  }
  data->system = std::move(built.system);
  data->q0 = std::move(built.q0);
  data->v0 = std::move(built.v0);
  data->name = scene.name;
  static_cast<events::SimulationOptions&>(data->options) = scene.options;
  const timestepping::SceneKeys& ts = scene.time_stepping;
  data->options.theta = ts.theta;
  data->options.speculative = ts.speculative;
  data->options.project_contacts = ts.project_contacts;
  data->options.sleeping = ts.sleeping;
  data->options.sleep_speed = ts.sleep_speed;
  data->options.sleep_time = ts.sleep_time;
  data->options.hybrid = scene.hybrid;
  data->options.friction = scene.friction.friction;
  data->options.rolling_friction = scene.friction.rolling_friction;
  data->options.spinning_friction = scene.friction.spinning_friction;
  data->t_end = scene.t_end;
  data->max_output_rows = scene.max_output_rows;
  data->contacts = scene.contacts;
  return data;
}

}  // namespace

Model Model::FromSceneText(const std::string& yaml, const std::string& label) {
  return Translate([&] { return Model(SceneData(tools::ParseScene(yaml, label))); });
}

Model Model::FromSceneFile(const std::string& path) {
  return Translate([&] { return Model(SceneData(tools::LoadSceneFile(path))); });
}

Model Model::FromPlanar(std::shared_ptr<const engine::PlanarModel> model,
                        std::vector<contact::PlanarContact> contacts) {
  Require(model != nullptr, "Model::FromPlanar", "null planar model");
  return Translate([&] {
    auto system = std::make_shared<engine::PlanarMultibodySystem>(model);
    if (!contacts.empty()) {
      system->AddConstraintBlock(std::make_shared<const contact::PlanarContacts>(model, contacts));
    }
    auto data = PlanarData(std::move(system));
    data->contacts = std::move(contacts);
    return Model(std::move(data));
  });
}

Model Model::FromLagrangian(engine::LagrangianCallbacks dynamics,
                            std::vector<engine::ConstraintCallbacks> constraints,
                            const VectorXd& q0, const VectorXd& v0) {
  return Translate([&] {
    const int n = dynamics.n;
    auto system = std::make_shared<engine::LagrangianSystem>(std::move(dynamics));
    for (std::size_t k = 0; k < constraints.size(); ++k) {
      system->AddConstraintBlock(
          std::make_shared<const engine::CallbackConstraints>(std::move(constraints[k]), n));
    }
    return FromSystem(std::move(system), q0, v0);
  });
}

Model Model::FromSystem(std::shared_ptr<const engine::MechanicalSystem> system, const VectorXd& q0,
                        const VectorXd& v0) {
  Require(system != nullptr, "Model::FromSystem", "null mechanical system");
  RequireVector(q0, system->nq(), "Model::FromSystem", "initial q");
  RequireVector(v0, system->nv(), "Model::FromSystem", "initial v");
  auto data = std::make_shared<Data>();
  data->system = std::move(system);
  data->q0 = q0;
  data->v0 = v0;
  return Model(std::move(data));
}

int Model::nq() const { return data_->system->nq(); }
int Model::nv() const { return data_->system->nv(); }
int Model::num_constraints() const { return data_->system->num_constraints(); }
std::string Model::name() const { return data_->name; }
const VectorXd& Model::initial_q() const { return data_->q0; }
const VectorXd& Model::initial_v() const { return data_->v0; }
const SimulationOptions& Model::default_options() const { return data_->options; }
double Model::default_t_end() const { return data_->t_end; }
std::vector<std::string> Model::PositionNames() const {
  std::vector<std::string> names;
  for (int i = 0; i < nq(); ++i) names.push_back(data_->system->PositionName(i));
  return names;
}
std::vector<std::string> Model::VelocityNames() const {
  std::vector<std::string> names;
  for (int i = 0; i < nv(); ++i) names.push_back(data_->system->VelocityName(i));
  return names;
}
std::vector<std::string> Model::ConstraintNames() const {
  std::vector<std::string> names;
  for (int r = 0; r < num_constraints(); ++r) {
    names.push_back(data_->system->constraint_info(r).name);
  }
  return names;
}
std::vector<int> Model::UnilateralRows() const {
  return data_->system->RowsOfKind(engine::ConstraintKind::kUnilateral);
}
std::shared_ptr<const engine::PlanarModel> Model::planar_model() const { return data_->planar; }
const std::vector<contact::PlanarContact>& Model::planar_contacts() const {
  return data_->contacts;
}
const engine::MechanicalSystem& Model::system() const { return *data_->system; }

// ==========================================================================================
// Simulation
// ==========================================================================================
Eigen::MatrixXd Trajectory::QMatrix() const {
  MatrixXd m(static_cast<Eigen::Index>(q.size()), q.empty() ? 0 : q.front().size());
  for (std::size_t k = 0; k < q.size(); ++k) m.row(static_cast<Eigen::Index>(k)) = q[k];
  return m;
}
Eigen::MatrixXd Trajectory::VMatrix() const {
  MatrixXd m(static_cast<Eigen::Index>(v.size()), v.empty() ? 0 : v.front().size());
  for (std::size_t k = 0; k < v.size(); ++k) m.row(static_cast<Eigen::Index>(k)) = v[k];
  return m;
}

namespace {

// The observers of one kind. Safe to modify while being notified (an observer may add or remove
// observers, itself included): a notification calls the observers present when it began, skips
// those removed since, and keeps each callee alive through its own call.
template <class Fn>
class ObserverList {
 public:
  void Add(int id, Fn fn) { entries_.push_back({id, std::make_shared<Fn>(std::move(fn))}); }
  bool Remove(int id) {
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [id](const Entry& e) { return e.id == id && e.fn; });
    if (it == entries_.end()) return false;
    if (notifying_ > 0) {
      it->fn.reset();  // erased when the outermost notification ends
    } else {
      entries_.erase(it);
    }
    return true;
  }
  template <class... Args>
  void Notify(const Args&... args) {
    struct Depth {
      ObserverList* list;
      explicit Depth(ObserverList* l) : list(l) { ++list->notifying_; }
      ~Depth() {
        if (--list->notifying_ == 0) {
          std::erase_if(list->entries_, [](const Entry& e) { return !e.fn; });
        }
      }
    } depth(this);
    const std::size_t n = entries_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::shared_ptr<Fn> fn = entries_[i].fn;  // alive even if removed by its own call
      if (fn) (*fn)(args...);
    }
  }

 private:
  struct Entry {
    int id;
    std::shared_ptr<Fn> fn;  // null once removed during a notification
  };
  std::vector<Entry> entries_;
  int notifying_ = 0;
};

[[noreturn]] void AbortInside(const char* what) {
  std::fprintf(stderr,
               "saltus::Simulation: %s from inside one of its own observers or callbacks (the "
               "object is in use on the stack); aborting\n",
               what);
  std::abort();
}

}  // namespace

struct Simulation::Impl : public events::Observer {
  Model model;
  SimulationOptions options;       // as given (options())
  SimulationOptions loop_options;  // options with stop_flag = &loop_stop
  ForceInput force;
  std::shared_ptr<const ForcedSystem> system;
  std::unique_ptr<tools::Scheme> sim;    // the event loop or Moreau–Jean (tools/run_scheme.h)
  Statistics base_stats = EmptyStats();  // of the simulations before the current restart
  bool skip_restart_output = false;      // the restart's repeated output row at its time
  double restart_t = 0;
  int next_id = 1;
  ObserverList<StepObserver> step_observers, output_observers;
  ObserverList<EventObserver> event_observers;
  // Created at the first JointReactions call (the model's own system: rows are the same).
  std::unique_ptr<const tools::JointLoadEvaluator> reactions;
  double max_output_rows;

  // Re-entrancy (header): `busy` counts the facade calls on the stack that run user code
  // (AdvanceTo, restarts, multiplier solves); state changes requested meanwhile wait in
  // `pending` and the loop is asked to stop at its next step boundary through `loop_stop`.
  int busy = 0;
  std::vector<std::function<void()>> pending;
  std::atomic<bool> loop_stop{false};  // read by the event loop (its stop_flag)
  std::atomic<bool> user_stop{false};  // RequestStop, until an AdvanceTo consumes it

  Impl(const Model& m, const SimulationOptions& o)
      : model(m), options(o), loop_options(o), max_output_rows(m.data_->max_output_rows) {
    loop_options.stop_flag = &loop_stop;
    system = std::make_shared<const ForcedSystem>(model.data_->system, &force);
  }

  struct Busy {
    Impl& im;
    explicit Busy(Impl& i) : im(i) { ++im.busy; }
    ~Busy() { --im.busy; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
  };

  // Runs `change` now, or (inside a running call) at the next step boundary (header).
  void ApplyOrDefer(std::function<void()> change) {
    if (busy == 0) {
      change();
      ApplyPending();
      return;
    }
    pending.push_back(std::move(change));
    loop_stop.store(true, std::memory_order_relaxed);
  }
  // Applies the deferred changes in call order (a change's restart may queue more); on an error
  // the remaining ones are dropped and the error propagates.
  void ApplyPending() {
    while (!pending.empty()) {
      std::vector<std::function<void()>> changes;
      changes.swap(pending);
      try {
        for (auto& change : changes) change();
      } catch (...) {
        pending.clear();
        throw;
      }
    }
    if (busy == 0) loop_stop.store(false);  // nothing runs: a deferral's stop is spent
  }
  void Refuse(const std::string& call) const {
    if (busy > 0) {
      throw StateError(call,
                       "not allowed from inside an observer or callback of this simulation "
                       "(call it after the running advance returns)");
    }
  }
  // Runs a solve that evaluates the force callback (Multipliers, ContactForces): refused inside
  // that callback; changes the callback asks for meanwhile are applied when it ends (discarded if
  // it throws).
  template <typename Fn>
  auto Solve(const std::string& call, Fn&& fn) -> decltype(fn()) {
    RefuseInForce(call);
    try {
      auto result = [&] {
        Busy guard(*this);
        return Translate(fn);
      }();
      if (busy == 0) ApplyPending();
      return result;
    } catch (...) {
      if (busy == 0) pending.clear();
      throw;
    }
  }
  void RefuseInForce(const std::string& call) const {
    if (force.callback_depth > 0) {
      throw StateError(call,
                       "not available from inside the force callback (it evaluates the "
                       "force)");
    }
  }
  // The event loop, for the queries that need its phase (contact modes, the joints'
  // multipliers); StateError under Moreau–Jean time-stepping, which keeps neither.
  const events::Simulation& EventLoop(const std::string& call) const {
    if (const events::Simulation* loop = sim->event_loop()) return *loop;
    throw StateError(
        call, "not available with integrator " + std::string(timestepping::kMoreauJeanName) +
                  " or hybrid on (time-stepping keeps only the contact impulses of the last step: "
                  "Multipliers() gives their mean forces P / h)");
  }
  // The stop requests of the user: RequestStop (consumed here when `consume`) and the stop_flag
  // of the options (never cleared: it is the caller's).
  bool UserStop(bool consume) {
    const bool flag = options.stop_flag != nullptr && options.stop_flag->load();
    const bool requested = consume ? user_stop.exchange(false) : user_stop.load();
    return flag || requested;
  }
  // Called at every step, output and event: the caller's stop_flag (set by a signal handler or
  // another thread) reaches the loop at its next boundary.
  void ForwardStop() {
    if (UserStop(false)) loop_stop.store(true, std::memory_order_relaxed);
  }

  // A fresh event loop at (t, q, v): projection, index sets, initial impact, integrator start.
  // The new loop is current while it starts (observers of its initial impact see it); only a
  // successful restart replaces the running loop.
  // `hybrid`: the phase a hybrid run resumes in (Scheme::ResumeHybridState); none: the event loop.
  void Restart(double t, const VectorXd& q, const VectorXd& v, bool repeat_output,
               const std::optional<tools::HybridState>& hybrid = std::nullopt) {
    Busy guard(*this);
    std::unique_ptr<tools::Scheme> previous = std::move(sim);
    const bool previous_skip = skip_restart_output;
    const double previous_restart_t = restart_t;
    skip_restart_output = !repeat_output;
    restart_t = t;
    try {
      sim = Translate([&] {
        timestepping::SceneKeys keys;
        keys.theta = options.theta;
        keys.speculative = options.speculative;
        keys.project_contacts = options.project_contacts;
        keys.sleeping = options.sleeping;
        keys.sleep_speed = options.sleep_speed;
        keys.sleep_time = options.sleep_time;
        auto s = tools::MakeScheme(system, loop_options, keys, options.hybrid);
        s->AddObserver(this);
        if (hybrid) s->ResumeHybridState(*hybrid);
        return s;
      });
      Translate([&] { sim->SetState(t, q, v, events::StateOrigin::kInitial); });
    } catch (...) {
      sim = std::move(previous);
      skip_restart_output = previous_skip;
      restart_t = previous_restart_t;
      throw;
    }
    if (previous) base_stats = events::Combined(base_stats, previous->stats());
  }

  // New host forces and a restart at the current state; a rejected force (wrong size, a throwing
  // callback) leaves the simulation as it was.
  void SetForceInput(ForceInput changed) {
    ForceInput previous = std::move(force);
    force = std::move(changed);
    const VectorXd q0 = sim->q(), v0 = sim->v();
    try {
      Restart(sim->t(), q0, v0, false, sim->hybrid_state());
    } catch (...) {
      force = std::move(previous);
      throw;
    }
  }

  // One AdvanceTo of the loop (the deferred changes are applied by the caller).
  events::RunResult AdvanceLoop(double t_end) {
    Busy guard(*this);
    events::RunResult r;
    try {
      r = Translate([&] { return sim->AdvanceTo(t_end); });
    } catch (...) {
      // A callback threw inside a step: the loop's (t, q, v) is the last accepted step, but its
      // integrator may be half-way through a step. Restart from there, then report.
      pending.clear();
      loop_stop.store(false);
      const double t0 = sim->t();
      const VectorXd q0 = sim->q(), v0 = sim->v();
      try {
        Restart(t0, q0, v0, false, sim->hybrid_state());
      } catch (...) {
        // The original exception says more than a failed restart.
      }
      throw;
    }
    loop_stop.store(false);
    return r;
  }

  void OnStep(double t, const VectorXd& q, const VectorXd& v) override {
    step_observers.Notify(t, q, v);
    ForwardStop();
  }
  void OnOutput(double t, const VectorXd& q, const VectorXd& v) override {
    ForwardStop();
    if (skip_restart_output) {
      skip_restart_output = false;
      if (t == restart_t) return;  // already reported before the restart
    }
    output_observers.Notify(t, q, v);
  }
  void OnEvent(const Event& e, const VectorXd& q, const VectorXd& v_minus,
               const VectorXd& v_plus) override {
    event_observers.Notify(e, q, v_minus, v_plus);
    ForwardStop();
  }
};

Simulation::Simulation(const Model& model) : Simulation(model, model.default_options()) {}

Simulation::Simulation(const Model& model, const SimulationOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {
  Require(std::isfinite(options.output_step) && options.output_step >= 0, "Simulation",
          "output_step must be >= 0 and finite, got " + NumberText(options.output_step));
  Require(options.theta >= 0.5 && options.theta <= 1.0, "Simulation",
          "theta must be in [0.5, 1], got " + NumberText(options.theta));
  const SimulationOptions& built = model.default_options();
  Require(options.friction == built.friction &&
              options.rolling_friction == built.rolling_friction &&
              options.spinning_friction == built.spinning_friction,
          "Simulation",
          "friction, rolling_friction and spinning_friction are the model's contact "
          "coefficients (" +
              NumberText(built.friction) + ", " + NumberText(built.rolling_friction) + ", " +
              NumberText(built.spinning_friction) +
              "), fixed when it was built: give them to the scene or the builder instead");
  Require(!(options.hybrid.enabled && options.integrator == timestepping::kMoreauJeanName),
          "Simulation",
          "hybrid switches between the event loop and moreau_jean: choose an event-loop "
          "integrator (e.g. dopri5), not moreau_jean");
  if (options.integrator == timestepping::kMoreauJeanName) {
    const integrators::IntegratorOptions& io = options.integrator_options;
    Require(io.h_init > 0 && std::isfinite(io.h_init) && !io.adaptive, "Simulation",
            "integrator moreau_jean needs a fixed step: h_init > 0 with adaptive = false (the "
            "scene key simulation.step; Options.step in Python), got h_init = " +
                NumberText(io.h_init) + (io.adaptive ? ", adaptive = true" : ""));
  }
  impl_->Restart(0.0, model.initial_q(), model.initial_v(), true);
  impl_->ApplyPending();
}

Simulation::~Simulation() {
  if (impl_ && impl_->busy > 0) AbortInside("destroyed");
}
Simulation::Simulation(Simulation&& other) noexcept {
  if (other.impl_ && other.impl_->busy > 0) AbortInside("moved from");
  impl_ = std::move(other.impl_);
}
Simulation& Simulation::operator=(Simulation&& other) noexcept {
  if (impl_ && impl_->busy > 0) AbortInside("move-assigned to");
  if (other.impl_ && other.impl_->busy > 0) AbortInside("moved from");
  impl_ = std::move(other.impl_);
  return *this;
}

RunResult Simulation::AdvanceTo(double t_end) {
  auto& im = *impl_;
  im.Refuse("AdvanceTo");
  Require(std::isfinite(t_end) && t_end <= kMaxMagnitude, "AdvanceTo",
          "t_end = " + NumberText(t_end) + " s is not finite or beyond the limit of " +
              NumberText(kMaxMagnitude) + " s");
  Require(t_end >= t(), "AdvanceTo",
          "t_end = " + NumberText(t_end) + " s is before the current time t = " + NumberText(t()) +
              " s");
  if (const double step = im.options.output_step; step > 0) {
    const double rows = (t_end - t()) / step;
    Require(rows <= im.max_output_rows, "AdvanceTo",
            "output_step = " + NumberText(step) + " s over " + NumberText(t_end - t()) +
                " s gives " + NumberText(std::ceil(rows)) +
                " output rows, more than max_output_rows = " + NumberText(im.max_output_rows) +
                " (raise max_output_rows or output_step)");
  }
  for (;;) {
    if (im.UserStop(true)) {
      im.loop_stop.store(false);
      return RunResult{RunStatus::kInterrupted, "stopped on request at t = " + NumberText(t()),
                       t()};
    }
    const events::RunResult r = im.AdvanceLoop(t_end);
    im.ApplyPending();
    if (r.status == RunStatus::kInterrupted) {
      if (im.UserStop(true)) return RunResult{r.status, r.message, t()};
      if (t() >= t_end) return RunResult{RunStatus::kFinished, "", t()};
      continue;  // stopped for deferred changes only: go on from the new state
    }
    if (r.status == RunStatus::kFinished && t() < t_end) continue;  // a change moved t back
    return RunResult{r.status, r.message, t()};
  }
}

RunResult Simulation::Step(double dt) {
  Require(std::isfinite(dt) && dt > 0, "Step", "dt must be > 0 and finite, got " + NumberText(dt));
  return AdvanceTo(t() + dt);
}

Trajectory Simulation::Run(double t_end, RunResult* result) {
  Trajectory traj;
  const RunResult r = RunInto(t_end, &traj);
  if (result != nullptr) *result = r;
  return traj;
}

RunResult Simulation::RunInto(double t_end, Trajectory* traj) {
  impl_->Refuse("Run");
  Require(traj != nullptr, "RunInto", "null trajectory");
  const std::size_t first_row = traj->t.size();
  const auto row = [traj](double t, const VectorXd& q, const VectorXd& v) {
    traj->t.push_back(t);
    traj->q.push_back(q);
    traj->v.push_back(v);
  };
  const int out_id = AddOutputObserver(row);
  const int ev_id = AddEventObserver(
      [&](const Event& e, const VectorXd& q, const VectorXd& v_minus, const VectorXd& v_plus) {
        traj->events.push_back(e);
        row(e.t, q, v_minus);
        row(e.t, q, v_plus);
      });
  struct Remove {
    Simulation* s;
    int a, b;
    ~Remove() {
      s->RemoveObserver(a);
      s->RemoveObserver(b);
    }
  } remove{this, out_id, ev_id};
  const double t_start = t();
  const VectorXd q_start = q(), v_start = v();
  const auto add_start_row = [&] {
    // The starting row is reported only by the first advance after a SetState.
    if (traj->t.size() == first_row || traj->t[first_row] > t_start) {
      const auto at = static_cast<std::ptrdiff_t>(first_row);
      traj->t.insert(traj->t.begin() + at, t_start);
      traj->q.insert(traj->q.begin() + at, q_start);
      traj->v.insert(traj->v.begin() + at, v_start);
    }
  };
  try {
    const RunResult r = AdvanceTo(t_end);
    add_start_row();
    return r;
  } catch (...) {
    add_start_row();
    throw;
  }
}

void Simulation::RequestStop() {
  impl_->user_stop.store(true);
  impl_->loop_stop.store(true);  // seen by a running loop at its next step boundary
}

void Simulation::SetMaxOutputRows(double rows) {
  Require(rows >= 1, "SetMaxOutputRows", "max_output_rows must be >= 1, got " + NumberText(rows));
  impl_->max_output_rows = rows;
}
double Simulation::max_output_rows() const { return impl_->max_output_rows; }

double Simulation::t() const { return impl_->sim->t(); }
const VectorXd& Simulation::q() const { return impl_->sim->q(); }
const VectorXd& Simulation::v() const { return impl_->sim->v(); }

void Simulation::SetState(double t, const VectorXd& q, const VectorXd& v) {
  Require(std::isfinite(t) && std::abs(t) <= kMaxMagnitude, "SetState",
          "t = " + NumberText(t) + " s is not finite or |t| is beyond " +
              NumberText(kMaxMagnitude) + " s");
  RequireVector(q, impl_->model.nq(), "SetState", "q");
  RequireVector(v, impl_->model.nv(), "SetState", "v");
  auto* im = impl_.get();
  im->ApplyOrDefer([im, t, q, v] { im->Restart(t, q, v, true); });
}
void Simulation::SetPositions(const VectorXd& q) {
  RequireVector(q, impl_->model.nq(), "SetPositions", "q");
  auto* im = impl_.get();
  im->ApplyOrDefer([im, q] {
    const VectorXd v0 = im->sim->v();
    im->Restart(im->sim->t(), q, v0, true);
  });
}
void Simulation::SetVelocities(const VectorXd& v) {
  RequireVector(v, impl_->model.nv(), "SetVelocities", "v");
  auto* im = impl_.get();
  im->ApplyOrDefer([im, v] {
    const VectorXd q0 = im->sim->q();
    im->Restart(im->sim->t(), q0, v, true);
  });
}

std::vector<int> Simulation::ActiveRows() const { return impl_->sim->ActiveRows(); }
VectorXd Simulation::Multipliers() const {
  auto& im = *impl_;
  return im.Solve("Multipliers", [&] { return im.sim->Multipliers(); });
}
VectorXd Simulation::AllMultipliers() const {
  const VectorXd lambda = Multipliers();
  const std::vector<int> rows = impl_->sim->ActiveRows();
  VectorXd all = VectorXd::Zero(impl_->model.num_constraints());
  for (std::size_t k = 0; k < rows.size() && static_cast<Eigen::Index>(k) < lambda.size(); ++k) {
    all[rows[k]] = lambda[static_cast<Eigen::Index>(k)];
  }
  return all;
}
std::vector<ContactForce> Simulation::ContactForces() const {
  auto& im = *impl_;
  const events::Simulation& loop = im.EventLoop("ContactForces");
  tools::ContactForces forces(*im.model.data_->system, loop);  // the model's contact blocks
  im.Solve("ContactForces", [&] {
    forces.Evaluate(t(), q(), v());
    return 0;
  });
  std::vector<ContactForce> out;
  for (const tools::ContactForces::Arrow& a : forces.arrows()) {
    ContactForce c;
    c.name = im.system->constraint_info(a.row).name;
    c.row = a.row;
    c.mode = a.mode;
    c.mode_name = events::ContactModeName(a.mode, a.slip_direction, a.num_tangent_rows);
    c.normal = a.normal;
    c.tangential = a.tangential;
    c.slip_direction = a.slip_direction;
    c.num_tangent_rows = a.num_tangent_rows;
    c.body = a.body;
    c.point = a.point;
    c.normal_force = a.normal_force;
    c.tangential_force = a.tangential_force;
    out.push_back(std::move(c));
  }
  return out;
}
IndexSets Simulation::CurrentIndexSets() const {
  IndexSets sets;
  const auto& sys = *impl_->system;
  const std::vector<int> unilateral = impl_->model.UnilateralRows();
  if (!unilateral.empty()) {
    VectorXd g;
    sys.ConstraintValues(t(), q(), unilateral, &g);
    for (std::size_t k = 0; k < unilateral.size(); ++k) {
      if (g[static_cast<Eigen::Index>(k)] <= impl_->options.thresholds.tau0) {
        sets.i1.push_back(unilateral[k]);
      }
    }
  }
  sets.i2 = impl_->sim->closed_rows();
  return sets;
}
JointLoads Simulation::JointReactions() const {
  auto& im = *impl_;
  im.RefuseInForce("JointReactions");
  im.EventLoop("JointReactions");
  if (!im.reactions) {
    try {
      im.reactions = std::make_unique<const tools::JointLoadEvaluator>(*im.model.data_->system);
    } catch (const std::invalid_argument&) {
      throw StateError("JointReactions",
                       "the model is not a planar or spatial multibody system (a Lagrangian or "
                       "user MechanicalSystem model has no joints)");
    }
  }
  const VectorXd lambda = Multipliers();
  return Translate([&] {
    JointLoads loads;
    im.reactions->Evaluate(t(), q(), im.sim->ActiveRows(), lambda, &loads);
    return loads;
  });
}
Statistics Simulation::stats() const {
  return events::Combined(impl_->base_stats, impl_->sim->stats());
}
const SimulationOptions& Simulation::options() const { return impl_->options; }
const Model& Simulation::model() const { return impl_->model; }

int Simulation::AddStepObserver(StepObserver observer) {
  Require(static_cast<bool>(observer), "AddStepObserver", "empty function");
  impl_->step_observers.Add(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
int Simulation::AddOutputObserver(StepObserver observer) {
  Require(static_cast<bool>(observer), "AddOutputObserver", "empty function");
  impl_->output_observers.Add(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
int Simulation::AddEventObserver(EventObserver observer) {
  Require(static_cast<bool>(observer), "AddEventObserver", "empty function");
  impl_->event_observers.Add(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
void Simulation::RemoveObserver(int id) {
  auto& im = *impl_;
  if (im.step_observers.Remove(id) || im.output_observers.Remove(id) ||
      im.event_observers.Remove(id)) {
    return;
  }
  throw InvalidArgument("RemoveObserver", "no observer with id " + std::to_string(id));
}

void Simulation::SetExternalForce(const VectorXd& f_ext) {
  RequireVector(f_ext, impl_->model.nv(), "SetExternalForce", "f_ext");
  auto* im = impl_.get();
  im->ApplyOrDefer([im, f_ext] {
    ForceInput changed = im->force;
    changed.f_ext = f_ext;
    changed.has_f_ext = !f_ext.isZero(0.0);
    im->SetForceInput(std::move(changed));
  });
}
const VectorXd& Simulation::external_force() const {
  if (impl_->force.f_ext.size() != impl_->model.nv()) {
    impl_->force.f_ext = VectorXd::Zero(impl_->model.nv());
  }
  return impl_->force.f_ext;
}
void Simulation::SetForceCallback(ForceCallback force) {
  auto* im = impl_.get();
  im->ApplyOrDefer([im, force = std::move(force)] {
    ForceInput changed = im->force;
    changed.callback = force;
    im->SetForceInput(std::move(changed));
  });
}

Snapshot Simulation::Save() {
  auto& im = *impl_;
  im.Refuse("Save");
  Snapshot s;
  s.t = t();
  s.q = q();
  s.v = v();
  s.f_ext = external_force();
  s.model_id = im.model.data_.get();
  s.hybrid = im.sim->hybrid_state();
  im.Restart(s.t, s.q, s.v, false, s.hybrid);
  s.closed_rows = im.sim->closed_rows();
  s.stats = im.base_stats;  // the restart folded the previous statistics in
  im.ApplyPending();        // changes requested by observers of the restart
  return s;
}

void Simulation::Restore(const Snapshot& s) {
  auto* im = impl_.get();
  if (s.model_id != im->model.data_.get()) {
    throw StateError("Restore", "the snapshot was saved from a simulation of another model");
  }
  RequireVector(s.q, im->model.nq(), "Restore", "snapshot q");
  RequireVector(s.v, im->model.nv(), "Restore", "snapshot v");
  RequireVector(s.f_ext, im->model.nv(), "Restore", "snapshot f_ext");
  im->ApplyOrDefer([im, s] {
    im->force.f_ext = s.f_ext;
    im->force.has_f_ext = !s.f_ext.isZero(0.0);
    im->Restart(s.t, s.q, s.v, false, s.hybrid);
    im->base_stats = s.stats;
    if (im->sim->closed_rows() != s.closed_rows) {
      throw StateError("Restore", "the closed contacts differ from the saved ones");
    }
  });
}

std::vector<StudyEntry> CompareIntegrators(const Model& model,
                                           const std::vector<std::string>& integrators,
                                           double t_end, const SimulationOptions& options) {
  Require(!integrators.empty(), "CompareIntegrators", "no integrator given");
  std::vector<StudyEntry> out;
  for (const std::string& name : integrators) {
    SimulationOptions o = options;
    o.integrator = name;
    Simulation sim(model, o);
    StudyEntry entry;
    entry.integrator = name;
    entry.trajectory = sim.Run(t_end, &entry.result);
    entry.stats = sim.stats();
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<std::string> IntegratorNames() {
  std::vector<std::string> names;
  for (const auto& e : integrators::IntegratorTable()) names.emplace_back(e.name);
  names.emplace_back(timestepping::kMoreauJeanName);
  return names;
}

std::string Version() { return SALTUS_VERSION_STRING; }

}  // namespace saltus

#include "saltus/saltus.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "integrators/integrator.h"
#include "tools/run_scheme.h"
#include "tools/scene.h"

namespace saltus {

using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

[[noreturn]] void ThrowInvalid(const std::string& what) { throw InvalidArgument(what); }

void Require(bool ok, const std::string& what) {
  if (!ok) ThrowInvalid(what);
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

void RequireVector(const VectorXd& x, Eigen::Index n, const std::string& name) {
  Require(x.size() == n,
          name + " has size " + std::to_string(x.size()) + ", expected " + std::to_string(n));
  Require(x.allFinite(), name + " contains NaN or Inf");
}

// Forces added by the host: a constant f_ext and/or a callback (owned by Simulation::Impl).
struct ForceInput {
  VectorXd f_ext;
  bool has_f_ext = false;
  ForceCallback callback;
};

// All constraint rows of another system as one block (global row = local row).
class ForwardingBlock final : public engine::ConstraintBlock {
 public:
  explicit ForwardingBlock(std::shared_ptr<const engine::MechanicalSystem> inner)
      : inner_(std::move(inner)) {}
  int num_rows() const override { return inner_->num_constraints(); }
  const engine::ConstraintRowInfo& row_info(int i) const override {
    return inner_->constraint_info(i);
  }
  void Values(double t, const VectorXd& q, std::span<const int> rows,
              Eigen::Ref<VectorXd> g) const override {
    thread_local VectorXd buf;
    inner_->ConstraintValues(t, q, rows, &buf);
    g = buf;
  }
  void Jacobian(double t, const VectorXd& q, std::span<const int> rows,
                Eigen::Ref<MatrixXd> G) const override {
    thread_local MatrixXd buf;
    inner_->ConstraintJacobian(t, q, rows, &buf);
    G = buf;
  }
  void Gamma(double t, const VectorXd& q, const VectorXd& v, std::span<const int> rows,
             Eigen::Ref<VectorXd> gamma) const override {
    thread_local VectorXd buf;
    inner_->ConstraintGamma(t, q, v, rows, &buf);
    gamma = buf;
  }
  void TimeDerivative(double t, const VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<VectorXd> g_t) const override {
    thread_local VectorXd buf;
    inner_->ConstraintTimeDerivative(t, q, rows, &buf);
    g_t = buf;
  }

 private:
  std::shared_ptr<const engine::MechanicalSystem> inner_;
};

// The model's system with the host's forces added to F. Everything else is forwarded, so any
// MechanicalSystem (planar, Lagrangian, spatial) drops in.
class ForcedSystem final : public engine::MechanicalSystem {
 public:
  ForcedSystem(std::shared_ptr<const engine::MechanicalSystem> inner, const ForceInput* input)
      : inner_(std::move(inner)), input_(input) {
    AddConstraintBlock(std::make_shared<const ForwardingBlock>(inner_));
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
      input_->callback(t, q, v, &f);
      if (f.size() != inner_->nv()) {
        ThrowInvalid("force callback returned " + std::to_string(f.size()) +
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
  std::string PositionName(int i) const override { return inner_->PositionName(i); }
  std::string VelocityName(int i) const override { return inner_->VelocityName(i); }

 private:
  std::shared_ptr<const engine::MechanicalSystem> inner_;
  const ForceInput* input_;
};

// Statistics of consecutive simulations (restarts) as one run.
Statistics Combine(const Statistics& a, const Statistics& b) {
  Statistics s = a;
  s.integrator.Add(b.integrator);
  for (int k = 0; k < 4; ++k) s.events[k] += b.events[k];
  s.lcp_solves += b.lcp_solves;
  s.max_position_violation = std::max(a.max_position_violation, b.max_position_violation);
  s.max_velocity_violation = std::max(a.max_velocity_violation, b.max_velocity_violation);
  s.max_acceleration_violation =
      std::max(a.max_acceleration_violation, b.max_acceleration_violation);
  s.min_gap_after_projection = std::min(a.min_gap_after_projection, b.min_gap_after_projection);
  s.wall_seconds += b.wall_seconds;
  return s;
}

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
  SimulationOptions options;
  double t_end = 0;
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
  data->options = scene.options;
  data->t_end = scene.t_end;
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
  Require(model != nullptr, "Model::FromPlanar: null planar model");
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
  Require(system != nullptr, "Model::FromSystem: null mechanical system");
  RequireVector(q0, system->nq(), "initial q");
  RequireVector(v0, system->nv(), "initial v");
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

struct Simulation::Impl : public events::Observer {
  Model model;
  SimulationOptions options;
  ForceInput force;
  std::shared_ptr<const ForcedSystem> system;
  std::unique_ptr<tools::Scheme> sim;    // the event loop, or Moreau–Jean time-stepping
  Statistics base_stats = EmptyStats();  // of the simulations before the current restart
  bool skip_restart_output = false;      // the restart's repeated output row at its time
  double restart_t = 0;
  int next_id = 1;
  std::vector<std::pair<int, StepObserver>> step_observers, output_observers;
  std::vector<std::pair<int, EventObserver>> event_observers;
  // Created at the first JointReactions call (the model's own system: rows are the same).
  std::unique_ptr<const tools::JointLoadEvaluator> reactions;

  Impl(const Model& m, const SimulationOptions& o) : model(m), options(o) {
    system = std::make_shared<const ForcedSystem>(model.data_->system, &force);
  }

  // A fresh event loop at (t, q, v): projection, index sets, initial impact, integrator start.
  void Restart(double t, const VectorXd& q, const VectorXd& v, bool repeat_output) {
    auto fresh = Translate([&] {
      auto s = tools::MakeScheme(system, options);
      s->AddObserver(this);
      s->SetState(t, q, v);
      return s;
    });
    // Only a successful restart replaces the running loop.
    if (sim) base_stats = Combine(base_stats, sim->stats());
    sim = std::move(fresh);
    skip_restart_output = !repeat_output;
    restart_t = t;
  }

  void OnStep(double t, const VectorXd& q, const VectorXd& v) override {
    for (auto& [id, f] : step_observers) f(t, q, v);
  }
  void OnOutput(double t, const VectorXd& q, const VectorXd& v) override {
    if (skip_restart_output) {
      skip_restart_output = false;
      if (t == restart_t) return;  // already reported before the restart
    }
    for (auto& [id, f] : output_observers) f(t, q, v);
  }
  void OnEvent(const Event& e, const VectorXd& q, const VectorXd& v_minus,
               const VectorXd& v_plus) override {
    for (auto& [id, f] : event_observers) f(e, q, v_minus, v_plus);
  }
};

Simulation::Simulation(const Model& model) : Simulation(model, model.default_options()) {}

Simulation::Simulation(const Model& model, const SimulationOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {
  impl_->Restart(0.0, model.initial_q(), model.initial_v(), true);
}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

RunResult Simulation::AdvanceTo(double t_end) {
  Require(std::isfinite(t_end), "AdvanceTo: t_end must be finite, got " + std::to_string(t_end));
  Require(t_end >= t(), "AdvanceTo: t_end = " + std::to_string(t_end) +
                            " is before the current time t = " + std::to_string(t()));
  auto& im = *impl_;
  events::RunResult r;
  try {
    r = Translate([&] { return im.sim->AdvanceTo(t_end); });
  } catch (...) {
    // A callback threw inside a step: the loop's (t, q, v) is the last accepted step, but its
    // integrator may be half-way through a step. Restart from there, then report.
    const double t0 = im.sim->t();
    const VectorXd q0 = im.sim->q(), v0 = im.sim->v();
    try {
      im.Restart(t0, q0, v0, false);
    } catch (...) {
      // The original exception says more than a failed restart.
    }
    throw;
  }
  return RunResult{r.status, r.message, r.t};
}

RunResult Simulation::Step(double dt) {
  Require(std::isfinite(dt) && dt > 0,
          "Step: dt must be > 0 and finite, got " + std::to_string(dt));
  return AdvanceTo(t() + dt);
}

Trajectory Simulation::Run(double t_end, RunResult* result) {
  Trajectory traj;
  auto& im = *impl_;
  const int out_id = AddOutputObserver([&](double t, const VectorXd& q, const VectorXd& v) {
    traj.t.push_back(t);
    traj.q.push_back(q);
    traj.v.push_back(v);
  });
  const int ev_id = AddEventObserver(
      [&](const Event& e, const VectorXd& q, const VectorXd& v_minus, const VectorXd& v_plus) {
        traj.events.push_back(e);
        traj.t.push_back(e.t);
        traj.q.push_back(q);
        traj.v.push_back(v_minus);
        traj.t.push_back(e.t);
        traj.q.push_back(q);
        traj.v.push_back(v_plus);
      });
  const double t_start = t();
  const VectorXd q_start = q(), v_start = v();
  struct Remove {
    Simulation* s;
    int a, b;
    ~Remove() {
      s->RemoveObserver(a);
      s->RemoveObserver(b);
    }
  } remove{this, out_id, ev_id};
  const RunResult r = AdvanceTo(t_end);
  (void)im;
  // The starting row is reported only by the first advance after a SetState.
  if (traj.t.empty() || traj.t.front() > t_start) {
    traj.t.insert(traj.t.begin(), t_start);
    traj.q.insert(traj.q.begin(), q_start);
    traj.v.insert(traj.v.begin(), v_start);
  }
  if (result != nullptr) *result = r;
  return traj;
}

double Simulation::t() const { return impl_->sim->t(); }
const VectorXd& Simulation::q() const { return impl_->sim->q(); }
const VectorXd& Simulation::v() const { return impl_->sim->v(); }

void Simulation::SetState(double t, const VectorXd& q, const VectorXd& v) {
  Require(std::isfinite(t), "SetState: t must be finite");
  RequireVector(q, impl_->model.nq(), "SetState: q");
  RequireVector(v, impl_->model.nv(), "SetState: v");
  impl_->Restart(t, q, v, true);
}
void Simulation::SetPositions(const VectorXd& q) {
  RequireVector(q, impl_->model.nq(), "SetPositions: q");
  const VectorXd v0 = v();
  impl_->Restart(t(), q, v0, true);
}
void Simulation::SetVelocities(const VectorXd& v) {
  RequireVector(v, impl_->model.nv(), "SetVelocities: v");
  const VectorXd q0 = q();
  impl_->Restart(t(), q0, v, true);
}

std::vector<int> Simulation::ActiveRows() const { return impl_->sim->ActiveRows(); }
VectorXd Simulation::Multipliers() const {
  return Translate([&] { return impl_->sim->Multipliers(); });
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
  if (!im.reactions) {
    try {
      im.reactions = std::make_unique<const tools::JointLoadEvaluator>(*im.model.data_->system);
    } catch (const std::invalid_argument&) {
      throw StateError(
          "JointReactions: the model is not a planar or spatial multibody system (a Lagrangian or "
          "user MechanicalSystem model has no joints)");
    }
  }
  return Translate([&] {
    JointLoads loads;
    im.reactions->Evaluate(t(), q(), im.sim->ActiveRows(), im.sim->Multipliers(), &loads);
    return loads;
  });
}
Statistics Simulation::stats() const { return Combine(impl_->base_stats, impl_->sim->stats()); }
const SimulationOptions& Simulation::options() const { return impl_->options; }
const Model& Simulation::model() const { return impl_->model; }

int Simulation::AddStepObserver(StepObserver observer) {
  Require(static_cast<bool>(observer), "AddStepObserver: empty function");
  impl_->step_observers.emplace_back(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
int Simulation::AddOutputObserver(StepObserver observer) {
  Require(static_cast<bool>(observer), "AddOutputObserver: empty function");
  impl_->output_observers.emplace_back(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
int Simulation::AddEventObserver(EventObserver observer) {
  Require(static_cast<bool>(observer), "AddEventObserver: empty function");
  impl_->event_observers.emplace_back(impl_->next_id, std::move(observer));
  return impl_->next_id++;
}
void Simulation::RemoveObserver(int id) {
  auto erase = [id](auto& list) {
    const auto it =
        std::find_if(list.begin(), list.end(), [id](const auto& p) { return p.first == id; });
    if (it == list.end()) return false;
    list.erase(it);
    return true;
  };
  auto& im = *impl_;
  if (erase(im.step_observers) || erase(im.output_observers) || erase(im.event_observers)) return;
  ThrowInvalid("RemoveObserver: no observer with id " + std::to_string(id));
}

void Simulation::SetExternalForce(const VectorXd& f_ext) {
  RequireVector(f_ext, impl_->model.nv(), "SetExternalForce: f_ext");
  auto& im = *impl_;
  const ForceInput previous = im.force;
  im.force.f_ext = f_ext;
  im.force.has_f_ext = !f_ext.isZero(0.0);
  const VectorXd q0 = q(), v0 = v();
  try {
    im.Restart(t(), q0, v0, false);
  } catch (...) {
    im.force = previous;  // a rejected force leaves the simulation as it was
    throw;
  }
}
const VectorXd& Simulation::external_force() const {
  if (impl_->force.f_ext.size() != impl_->model.nv()) {
    impl_->force.f_ext = VectorXd::Zero(impl_->model.nv());
  }
  return impl_->force.f_ext;
}
void Simulation::SetForceCallback(ForceCallback force) {
  auto& im = *impl_;
  const ForceInput previous = im.force;
  im.force.callback = std::move(force);
  const VectorXd q0 = q(), v0 = v();
  try {
    im.Restart(t(), q0, v0, false);
  } catch (...) {
    im.force = previous;  // a rejected force leaves the simulation as it was
    throw;
  }
}

Snapshot Simulation::Save() {
  auto& im = *impl_;
  Snapshot s;
  s.t = t();
  s.q = q();
  s.v = v();
  s.f_ext = external_force();
  s.model_id = im.model.data_.get();
  im.Restart(s.t, s.q, s.v, false);
  s.closed_rows = im.sim->closed_rows();
  s.stats = im.base_stats;  // the restart folded the previous statistics in
  return s;
}

void Simulation::Restore(const Snapshot& s) {
  auto& im = *impl_;
  if (s.model_id != im.model.data_.get()) {
    throw StateError("Restore: the snapshot was saved from a simulation of another model");
  }
  RequireVector(s.q, im.model.nq(), "Restore: snapshot q");
  RequireVector(s.v, im.model.nv(), "Restore: snapshot v");
  RequireVector(s.f_ext, im.model.nv(), "Restore: snapshot f_ext");
  im.force.f_ext = s.f_ext;
  im.force.has_f_ext = !s.f_ext.isZero(0.0);
  im.Restart(s.t, s.q, s.v, false);
  im.base_stats = s.stats;
  if (im.sim->closed_rows() != s.closed_rows) {
    throw StateError("Restore: the closed contacts differ from the saved ones");
  }
}

std::vector<StudyEntry> CompareIntegrators(const Model& model,
                                           const std::vector<std::string>& integrators,
                                           double t_end, const SimulationOptions& options) {
  Require(!integrators.empty(), "CompareIntegrators: no integrator given");
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
  return names;
}

std::string Version() { return SALTUS_VERSION_STRING; }

}  // namespace saltus

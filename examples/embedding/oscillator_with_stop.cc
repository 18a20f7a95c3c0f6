// Embedding Saltus in C++: a user-defined mechanical system run by the event-driven loop.
//
// A mass m on a linear spring of stiffness k (1 DOF, q the displacement, v = q̇):
//
//   m v̇ = −k q + λ,        g(q) = q − q_stop ≥ 0,  λ ≥ 0,  g λ = 0,
//
// with a unilateral stop at q_stop < 0 and Newton restitution e at impacts (v⁺ = −e v⁻). The
// system is an engine::LagrangianSystem (mass, forces, potential as callbacks) and the stop is an
// engine::CallbackConstraints block with one unilateral row; events::Simulation does the rest.
// Released at rest from q0 > 0, the mass first reaches the stop at t₁ = acos(q_stop/q0)/ω,
// ω = √(k/m), with speed q0 ω sin(ω t₁); the program prints that and every impact it finds.
//
// Built in the Saltus tree as the target `oscillator_with_stop` (examples/CMakeLists.txt), which
// only links saltus::events; an embedding project does the same.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "engine/lagrangian_system.h"
#include "events/simulation.h"

namespace {

constexpr double kMass = 1.0;         // kg
constexpr double kStiffness = 100.0;  // N/m  (ω = 10 rad/s)
constexpr double kStop = -0.05;       // m
constexpr double kQ0 = 0.1;           // m, released at rest
constexpr double kRestitution = 0.8;

// Prints every impact as it happens.
class ImpactPrinter : public saltus::events::Observer {
 public:
  void OnEvent(const saltus::events::Event& e, const Eigen::VectorXd& q,
               const Eigen::VectorXd& v_minus, const Eigen::VectorXd& v_plus) override {
    if (e.kind != saltus::events::EventKind::kImpact) return;
    ++impacts_;
    std::printf(
        "impact %2d  t = %.10f s  q = %+.3e m  v- = %+.6f m/s  v+ = %+.6f m/s  "
        "impulse = %.6f N.s  energy %.6f -> %.6f J\n",
        impacts_, e.t, q[0], v_minus[0], v_plus[0], e.impulses.empty() ? 0.0 : e.impulses[0],
        e.energy_before, e.energy_after);
  }
  int impacts() const { return impacts_; }

 private:
  int impacts_ = 0;
};

}  // namespace

int main() {
  using saltus::engine::CallbackConstraints;
  using saltus::engine::ConstraintCallbacks;
  using saltus::engine::ConstraintKind;
  using saltus::engine::LagrangianCallbacks;
  using saltus::engine::LagrangianSystem;

  // ---- The smooth dynamics: M = m, F = −k q, V = ½ k q². ----
  LagrangianCallbacks dynamics;
  dynamics.n = 1;
  dynamics.mass = [](const Eigen::VectorXd&, Eigen::MatrixXd* M) {
    *M = Eigen::MatrixXd::Constant(1, 1, kMass);
  };
  dynamics.forces = [](double, const Eigen::VectorXd& q, const Eigen::VectorXd&,
                       Eigen::VectorXd* F) { *F = -kStiffness * q; };
  dynamics.potential = [](double, const Eigen::VectorXd& q) {
    return 0.5 * kStiffness * q[0] * q[0];
  };
  dynamics.coordinate_names = {"x"};
  auto system = std::make_shared<LagrangianSystem>(dynamics);

  // ---- The stop: one unilateral row g = q − q_stop, G = [1], γ = 0 (linear in q). ----
  ConstraintCallbacks stop;
  stop.rows = {{ConstraintKind::kUnilateral, "stop", kRestitution}};
  stop.values = [](double, const Eigen::VectorXd& q, Eigen::VectorXd* g) {
    *g = Eigen::VectorXd::Constant(1, q[0] - kStop);
  };
  stop.jacobian = [](double, const Eigen::VectorXd&, Eigen::MatrixXd* G) {
    *G = Eigen::MatrixXd::Ones(1, 1);
  };
  system->AddConstraintBlock(std::make_shared<CallbackConstraints>(stop, system->nv()));

  // ---- The simulation. ----
  saltus::events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-10;
  options.integrator_options.atol = 1e-12;
  saltus::events::Simulation simulation(system, options);
  ImpactPrinter printer;
  simulation.AddObserver(&printer);
  simulation.SetState(0.0, Eigen::VectorXd::Constant(1, kQ0), Eigen::VectorXd::Zero(1));

  const double omega = std::sqrt(kStiffness / kMass);
  const double t1 = std::acos(kStop / kQ0) / omega;
  std::printf("oscillator with a stop: m = %g kg, k = %g N/m, stop at %g m, released at %g m\n",
              kMass, kStiffness, kStop, kQ0);
  std::printf("closed form: first impact at t = %.10f s with v- = %+.6f m/s\n", t1,
              -kQ0 * omega * std::sin(omega * t1));

  const saltus::events::RunResult result = simulation.AdvanceTo(2.0);
  const auto& stats = simulation.stats();
  std::printf("%s at t = %g s: %d impacts, %ld accepted steps, final q = %+.6f m, v = %+.6f m/s\n",
              std::string(saltus::events::ToString(result.status)).c_str(), result.t,
              printer.impacts(), stats.integrator.accepted_steps, simulation.q()[0],
              simulation.v()[0]);
  if (result.status != saltus::events::RunStatus::kFinished) {
    std::fprintf(stderr, "run failed: %s\n", result.message.c_str());
    return 1;
  }
  return 0;
}

// Material damping of flexible bodies (engine/flexible_beam.h, docs/flexible-bodies.md
// "Damping"): the free decay of a cantilever's modes against the closed form of the damped
// oscillator, for each of Rayleigh's α (mass-proportional), Rayleigh's β (stiffness-proportional)
// and the modal damping ratio ζ.
//
// The beam frame is welded to the ground, so only the modal coordinates η move. They are
// mass-normalized: for small deflections each mode obeys
//   η̈_i + c_i η̇_i + ω_i² η_i = 0,   c_i = α + β ω_i² + 2 ζ ω_i,
// whose solution from η_i(0) = a, η̇_i(0) = 0 is (underdamped, ω_d = √(ω_i² − c_i²/4))
//   η_i(t) = a e^{−c_i t/2} (cos ω_d t + c_i/(2 ω_d) sin ω_d t).
// The geometric-stiffening and foreshortening terms are of second order in the deflection: they
// shift the frequencies by O((δ/L)²), a phase error that grows with ω t (measured: the error
// below scales with the amplitude squared, 3.6e-6 at tip deflections of 1.7e-3 m, 3.6e-8 at
// 1.7e-4 m, the amplitude used here).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "engine/flexible_beam.h"
#include "engine/planar_model.h"
#include "events/simulation.h"
#include "flexible_test_models.h"
#include "planar_test_models.h"

namespace saltus::engine {
namespace {

double DampedFreeDecay(double a, double omega, double c, double t) {
  const double omega_d = std::sqrt(omega * omega - 0.25 * c * c);
  return a * std::exp(-0.5 * c * t) *
         (std::cos(omega_d * t) + 0.5 * c / omega_d * std::sin(omega_d * t));
}

struct Damping {
  double alpha = 0, beta = 0, zeta = 0;
};

// Largest |η_i(t) − closed form| over t = 0.25, 0.5, …, 4 s, relative to the initial amplitude,
// for the Kane cantilever (ω₁ = 3.80, ω₂ = 23.8 rad/s) with two modes both released from rest.
double WorstDecayError(const Damping& d) {
  BeamProperties beam = testing::KaneBeam(8, 2);
  beam.rayleigh_alpha = d.alpha;
  beam.rayleigh_beta = d.beta;
  beam.modal_damping = d.zeta;
  const FlexibleBeam reference(beam);
  PlanarModelBuilder builder;
  const int b = builder.AddBody(testing::FlexibleBody("beam", beam));
  builder.AddJoint(testing::Joint("weld", PlanarJointType::kFixed, kGround, b, {0, 0}, {0, 0}));
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());

  // Mass-normalized shapes move the tip by O(2/√(ρAL)) ≈ 0.6 m per unit η: tip deflections of
  // ~1.7e-4 m = 1.7e-5 L.
  const Eigen::Vector2d a(3e-4, 1e-4);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(system->nq()), v = q;
  q.tail(2) = a;
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-10;
  options.integrator_options.atol = 1e-14;
  events::Simulation sim(system, options);
  sim.SetState(0.0, q, v);

  const Eigen::Vector2d omega = reference.frequencies();
  double worst = 0.0;
  for (int k = 1; k <= 16; ++k) {
    const double t = 0.25 * k;
    EXPECT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished);
    for (int i = 0; i < 2; ++i) {
      const double c = d.alpha + d.beta * omega(i) * omega(i) + 2.0 * d.zeta * omega(i);
      const double eta = sim.q()(system->nq() - 2 + i);
      worst = std::max(worst, std::abs(eta - DampedFreeDecay(a(i), omega(i), c, t)) / a(i));
    }
  }
  return worst;
}

// Each damping law alone, strong enough that the modes lose a visible part of their amplitude
// over 4 s (mode 1: e^{−c₁·2} of 0.37 … 0.86; mode 2 decays much faster with β and ζ).
// Tolerance 1e-6 relative: the integration error at rtol 1e-10 (~1e-9) and the second-order
// terms (3.6e-8, above) are far below it; a wrong law (e.g. c = β ω instead of β ω², or ζ ω instead
// of 2 ζ ω) misses by more than 1e-2.
TEST(FlexibleDamping, RayleighMassProportionalDecaysAsTheClosedForm) {
  EXPECT_LT(WorstDecayError({.alpha = 0.5}), 1e-6);
}

TEST(FlexibleDamping, RayleighStiffnessProportionalDecaysAsTheClosedForm) {
  EXPECT_LT(WorstDecayError({.beta = 2e-3}), 1e-6);
}

TEST(FlexibleDamping, ModalDampingRatioDecaysAsTheClosedForm) {
  EXPECT_LT(WorstDecayError({.zeta = 0.02}), 1e-6);
}

TEST(FlexibleDamping, UndampedModesKeepTheirAmplitude) { EXPECT_LT(WorstDecayError({}), 1e-6); }

}  // namespace
}  // namespace saltus::engine

// The spin-up of a cantilever on a driven hub (Kane, Ryan & Banerjee, J. Guidance 10 (1987)
// 139–151): with geometric stiffening the tip deflection stays bounded and follows the
// quasi-static response of the linearized rotating beam; without it (the conventional linear
// floating-frame model) the beam softens under rotation and the deflection diverges once the
// hub rate exceeds the first bending frequency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "engine/flexible_beam.h"
#include "engine/planar_model.h"
#include "events/simulation.h"
#include "flexible_test_models.h"

namespace saltus::engine {
namespace {

// Kane et al. 1987, Sec. V: L = 10 m, A = 4e-4 m², I = 2e-7 m⁴, ρ = 3000 kg/m³, E = 7e10 Pa;
// hub angle prescribed by Ω(t) = (Ω_s/T_s)(t − (T_s/2π) sin(2πt/T_s)) for t < T_s, then Ω_s,
// with T_s = 15 s and Ω_s = 6 rad/s (their divergent case for the conventional model; the
// first bending frequency is 3.516 √(EI/(ρA L⁴)) = 3.80 rad/s).
constexpr double kLength = 10.0, kSpinRate = 6.0, kSpinTime = 15.0;

struct SpinUp {
  std::shared_ptr<PlanarMultibodySystem> system;
  const FlexibleBeam* beam = nullptr;
};

SpinUp MakeSpinUp(const BeamProperties& p) {
  PlanarModelBuilder builder;
  const int b = builder.AddBody(testing::FlexibleBody("beam", p));
  PlanarJoint hub;
  hub.name = "hub";
  hub.type = PlanarJointType::kRevolute;
  hub.body_a = kGround;
  hub.body_b = b;
  const int j = builder.AddJoint(hub);
  PlanarDriver drive;
  drive.name = "drive";
  drive.joint = j;
  drive.kind = DriverKind::kAngle;
  drive.profile.kind = TimeProfile::Kind::kSpinUp;
  drive.profile.rate = kSpinRate;
  drive.profile.duration = kSpinTime;
  builder.AddDriver(drive);
  SpinUp s;
  s.system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  s.beam = s.system->model().beam(b);
  return s;
}

SpinUp MakeSpinUp(bool stiffening, int elements, int modes) {
  BeamProperties p = testing::KaneBeam(elements, modes, BeamReference::kClamped, kLength);
  p.geometric_stiffening = stiffening;
  return MakeSpinUp(p);
}

// Transverse tip deflection in the beam frame, w(L) = s_w(L) η.
double TipDeflection(const SpinUp& s, const Eigen::VectorXd& q) {
  return s.beam->PointAt(kLength).sw.dot(q.tail(s.beam->num_modes()));
}

// Quasi-static tip deflection of the linearized in-plane equations of a beam on a hub turning
// at ω(t) with ω̇(t) (derived from the continuum, independently of the model's kinematics):
//   ρA (ẅ + ω̇ x − ω² w) − (N w')' + EI w'''' = 0,   N(x) = ρA ω² (L² − x²)/2,
// projected on the modes (M = I): (K − ω² I + ω² K_G) η = −ω̇ ∫ ρA x s_wᵀ dx,
// K_G = ∫ ρA (L² − x²)/2 ψᵀψ dx; integrals by composite Simpson on 2000 intervals.
double QuasiStaticTip(const FlexibleBeam& beam, double omega, double omega_dot) {
  const int m = beam.num_modes(), n = 2000;
  const double rho_a = 3000.0 * 4e-4, h = kLength / n;
  Eigen::MatrixXd kg = Eigen::MatrixXd::Zero(m, m);
  Eigen::VectorXd load = Eigen::VectorXd::Zero(m);
  for (int i = 0; i <= n; ++i) {
    const double x = i * h, w = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    const BeamPoint p = beam.PointAt(x);
    kg += w * h / 3.0 * rho_a * 0.5 * (kLength * kLength - x * x) * p.slope.transpose() * p.slope;
    load += w * h / 3.0 * rho_a * x * p.sw.transpose();
  }
  const Eigen::MatrixXd k =
      beam.ModalStiffness() + omega * omega * (kg - Eigen::MatrixXd::Identity(m, m));
  const Eigen::VectorXd eta = k.ldlt().solve(-omega_dot * load);
  return beam.PointAt(kLength).sw.dot(eta);
}

events::SimulationOptions Options() {
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-6;
  options.integrator_options.atol = 1e-8;
  return options;
}

TEST(FlexibleSpinUp, WithGeometricStiffeningTheTipDeflectionStaysBoundedAndQuasiStatic) {
  const SpinUp s = MakeSpinUp(true, 8, 4);
  events::Simulation sim(s.system, Options());
  sim.SetState(0.0, s.system->model().InitialPositions(), s.system->model().InitialVelocities());
  double peak = 0.0, worst = 0.0;
  for (int k = 1; k <= 40; ++k) {
    const double t = 0.5 * k;
    ASSERT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished) << "t = " << t;
    const double w = TipDeflection(s, sim.q());
    peak = std::max(peak, std::abs(w));
    if (t <= kSpinTime) {
      const double w_qs = QuasiStaticTip(*s.beam, sim.v()(2),
                                         s.system->model().drivers()[0].profile.Evaluate(t)(2));
      worst = std::max(worst, std::abs(w - w_qs));
      if (k % 6 == 0)
        std::cout << "t = " << t << ": tip " << w << " m, quasi-static " << w_qs << "\n";
    }
  }
  std::cout << "spin-up with stiffening: peak |tip deflection| " << peak
            << " m, largest difference from the quasi-static response " << worst << " m\n";
  // Bounded: well below the beam length (the quasi-static peak is ~0.4 m).
  EXPECT_LT(peak, 1.0);
  // The load changes on the time scale T_s/2π = 2.4 s, slow against the first period (1.65 s
  // at rest, shorter when stiffened): the dynamic part is a few per cent of the peak (the
  // neglected ẅ term is ~(ω_load/ω₁)² ≈ 1 %, plus the free oscillation the onset leaves).
  EXPECT_LT(worst, 0.05 * peak);
  // After the spin-up the beam turns at Ω_s: the deflection is the small free oscillation left.
  EXPECT_LT(std::abs(TipDeflection(s, sim.q())), 0.1 * peak);
}

TEST(FlexibleSpinUp, TipFollowsTheDigitizedPublishedCurve) {
  // The published curve of this spin-up: Simo & Vu-Quoc, Comput. Methods Appl. Mech. Eng. 66
  // (1988) 125-161, Example 5.1 (Kane et al.'s beam and driving law, their geometrically exact
  // beam), the tip's deviation from the rigid beam's tip across the beam, u₂(t) = w(L, t) in the
  // hub frame. Digitized from their figure in the open repository hortulanusT/dynLattice
  // (tests/transient/ref_data/test1_ref_u2.csv, which tests a Cosserat rod against it); the
  // points there at these times, in m:
  const std::pair<double, double> kPublished[] = {
      {1.5, -6.75484e-2},  {3.25, -2.59629e-1}, {4.5, -4.22479e-1}, {6.0, -5.46183e-1},
      {6.75, -5.72281e-1}, {7.5, -5.58188e-1},  {9.0, -4.55885e-1}, {10.5, -2.96166e-1},
      {12.0, -1.39579e-1}, {13.5, -3.36211e-2}};
  // Tolerance: the digitized curve against the converged references. The rigid-segment chain
  // (StiffenedBeamConvergesToTheRigidSegmentChain, exact kinematics, Richardson-extrapolated)
  // differs from these points as this beam does, by +6.9e-3, +2.6e-3, −0.8e-3, −4.3e-3 and
  // −1.13e-2 m at t = 3, 6, 7.5, 9 and 12 s (the beam: +6.9e-3, +1.2e-3, −2.7e-3, −5.4e-3,
  // −1.09e-2): the published curve leads both by 0.07–0.13 s on its slopes (a time offset of the
  // digitized axis, or of Simo & Vu-Quoc's shear-deformable model), while its peak, −0.5723 m at
  // 6.75 s, is the chain's −0.5737 m within 1.5e-3. Bound 1.5e-2 m (2.6 % of the peak), above the
  // chain's largest difference.
  const SpinUp s = MakeSpinUp(true, 8, 4);
  events::Simulation sim(s.system, Options());
  sim.SetState(0.0, s.system->model().InitialPositions(), s.system->model().InitialVelocities());
  double worst = 0.0;
  for (const auto& [t, published] : kPublished) {
    ASSERT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished) << "t = " << t;
    const double w = TipDeflection(s, sim.q());
    std::cout << "t = " << t << " s: tip " << w << " m, published " << published << " m ("
              << w - published << ")\n";
    worst = std::max(worst, std::abs(w - published));
    EXPECT_NEAR(w, published, 1.5e-2) << "t = " << t;
  }
  std::cout << "largest difference from the published curve: " << worst << " m\n";
}

TEST(FlexibleSpinUp, WithoutGeometricStiffeningTheLinearModelDiverges) {
  // The conventional linear model: in-plane stiffness K − ω² M, negative for ω > ω₁ = 3.8 rad/s
  // (reached at t ≈ 8.5 s), after which the first mode grows like exp(√(ω² − ω₁²) t).
  const SpinUp s = MakeSpinUp(false, 8, 4);
  events::Simulation sim(s.system, Options());
  sim.SetState(0.0, s.system->model().InitialPositions(), s.system->model().InitialVelocities());
  double t_diverged = -1.0;
  for (int k = 1; k <= 40 && t_diverged < 0; ++k) {
    const double t = 0.5 * k;
    const events::RunResult run = sim.AdvanceTo(t);
    if (run.status != events::RunStatus::kFinished ||
        std::abs(TipDeflection(s, sim.q())) > kLength) {
      t_diverged = sim.t();
    }
  }
  std::cout << "spin-up without stiffening: |tip deflection| > L at t = " << t_diverged << " s\n";
  // Diverged (deflection beyond the beam's length), and only after ω passed ω₁.
  EXPECT_GT(t_diverged, 9.0);
  EXPECT_LT(t_diverged, 20.0);
}

// The spin-up with both reductions of 4 coordinates: the 4 lowest clamped (free-interface) modes,
// and Craig–Bampton with the tip node as boundary (the static shapes of its u, w, φ and one
// fixed-interface mode). Both follow the quasi-static response; they differ from each other by
// what each basis misses of the other's shapes.
TEST(FlexibleSpinUp, CraigBamptonAndFreeInterfaceReductionsAgree) {
  BeamProperties p = testing::KaneBeam(8, 4, BeamReference::kClamped, kLength);
  const SpinUp free_interface = MakeSpinUp(p);
  p.reduction = BeamReduction::kCraigBampton;
  p.boundary_nodes = {8};
  const SpinUp craig_bampton = MakeSpinUp(p);
  std::cout << "omega_1..4: free-interface " << free_interface.beam->frequencies().transpose()
            << "; Craig-Bampton " << craig_bampton.beam->frequencies().transpose() << "\n";
  events::Simulation a(free_interface.system, Options()), b(craig_bampton.system, Options());
  for (const auto& [sim, s] : {std::pair{&a, &free_interface}, std::pair{&b, &craig_bampton}}) {
    sim->SetState(0.0, s->system->model().InitialPositions(),
                  s->system->model().InitialVelocities());
  }
  double peak = 0.0, difference = 0.0;
  for (int k = 1; k <= 30; ++k) {  // to T_s = 15 s
    const double t = 0.5 * k;
    ASSERT_EQ(a.AdvanceTo(t).status, events::RunStatus::kFinished) << "t = " << t;
    ASSERT_EQ(b.AdvanceTo(t).status, events::RunStatus::kFinished) << "t = " << t;
    const double wa = TipDeflection(free_interface, a.q()),
                 wb = TipDeflection(craig_bampton, b.q());
    if (k % 6 == 0) std::cout << "t = " << t << ": tip " << wa << " / " << wb << " m\n";
    peak = std::max(peak, std::abs(wa));
    difference = std::max(difference, std::abs(wa - wb));
  }
  std::cout << "spin-up, free-interface vs Craig-Bampton: largest difference " << difference
            << " m (peak " << peak << " m)\n";
  // Measured 1.4 mm (0.25 % of the 0.573 m peak; both follow the quasi-static response within
  // 5 %, the test above): the bound is 1 % of the peak.
  EXPECT_LT(difference, 0.01 * peak);
}

// An independent model of the same spin-up that converges to the geometrically exact
// (inextensible) beam: N rigid segments of length ℓ = L/N (mass ρAℓ, inertia ρAℓ³/12) joined by
// revolute joints with rotational springs k = EI/ℓ, the root one k = 2EI/ℓ, on a hub body driven
// by the same Ω(t). With the springs at x_j = jℓ and these stiffnesses the chain's bending
// compliance ∫ (L − x)² dx / EI is the trapezoidal rule (the root spring carries half a segment),
// so the tip deflection converges with order 2 in ℓ (a static tip load gives F L³/(3EI) (1 +
// 1/(2N²))). The large rotations of the segments carry the centrifugal stiffening exactly, with no
// linearization. Returns the tip deflection in the hub frame at the times ts.
std::vector<double> ChainTip(int n, const std::vector<double>& ts) {
  const double rho_a = 3000.0 * 4e-4, ei = 7e10 * 2e-7, l = kLength / n;
  PlanarModelBuilder builder;
  PlanarBody hub;
  hub.name = "hub";
  const int h = builder.AddBody(hub);
  PlanarJoint drive_joint;
  drive_joint.name = "hub";
  drive_joint.body_a = kGround;
  drive_joint.body_b = h;
  PlanarDriver drive;
  drive.name = "drive";
  drive.joint = builder.AddJoint(drive_joint);
  drive.profile.kind = TimeProfile::Kind::kSpinUp;
  drive.profile.rate = kSpinRate;
  drive.profile.duration = kSpinTime;
  builder.AddDriver(drive);
  for (int i = 0; i < n; ++i) {
    PlanarBody segment;
    segment.name = "s" + std::to_string(i);
    segment.mass = rho_a * l;
    segment.inertia = rho_a * l * l * l / 12.0;
    segment.q0 = Eigen::Vector3d((i + 0.5) * l, 0.0, 0.0);
    const int b = builder.AddBody(segment);
    PlanarJoint pin;
    pin.name = "j" + std::to_string(i);
    pin.body_a = b - 1;  // the hub for the first segment
    pin.body_b = b;
    pin.point_a = Eigen::Vector2d(i == 0 ? 0.0 : 0.5 * l, 0.0);
    pin.point_b = Eigen::Vector2d(-0.5 * l, 0.0);
    PlanarTorsionalSpring spring;
    spring.name = "k" + std::to_string(i);
    spring.joint = builder.AddJoint(pin);
    spring.stiffness = (i == 0 ? 2.0 : 1.0) * ei / l;
    builder.AddTorsionalSpring(spring);
  }
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-9;
  options.integrator_options.atol = 1e-11;
  events::Simulation sim(system, options);
  sim.SetState(0.0, system->model().InitialPositions(), system->model().InitialVelocities());
  std::vector<double> tips;
  for (const double t : ts) {
    EXPECT_EQ(sim.AdvanceTo(t).status, events::RunStatus::kFinished) << "N = " << n;
    const Eigen::VectorXd& q = sim.q();
    const double th = q(2), a = q(3 * n + 2);
    const Eigen::Vector2d tip =
        q.segment<2>(3 * n) + 0.5 * l * Eigen::Vector2d(std::cos(a), std::sin(a));
    tips.push_back(-std::sin(th) * tip.x() + std::cos(th) * tip.y());
  }
  return tips;
}

// The floating-frame beam with geometric stiffening against the rigid-segment chain, both
// converged: the chain at N = 5, 10, 20 shows order 2 and its Richardson value (error estimate
// below 1e-5 m: the (10, 20) and (20, 40) extrapolations agree within 7e-6 m at t = 3, 6, 7.5 s,
// docs/flexible-bodies.md) is the reference. The beam at 8 elements / 4 modes and 16 / 6 agrees
// with itself within 1e-4 m (converged in elements and modes) and with the chain up to the terms
// the floating-frame model drops: its strain and stiffening are second order in the slopes, the
// chain's are exact, so the difference is of relative order (w/L)² (measured 0.9 (w/L)² to
// 1.1 (w/L)² at t = 6 and 7.5 s); bound 1.5 (w/L)² |w|. Run to T_s/2 (the peak lag is at 6.75 s)
// to keep the test short (6 s in Release).
TEST(FlexibleSpinUp, StiffenedBeamConvergesToTheRigidSegmentChain) {
  const std::vector<double> ts = {3.0, 6.0, 7.5};
  const std::vector<double> w5 = ChainTip(5, ts), w10 = ChainTip(10, ts), w20 = ChainTip(20, ts);
  for (int k = 0; k < 3; ++k) {
    const double order = std::log2((w5[k] - w10[k]) / (w10[k] - w20[k]));
    const double reference = w20[k] + (w20[k] - w10[k]) / 3.0;
    std::cout << "t = " << ts[k] << ": chain N = 5, 10, 20: " << w5[k] << ", " << w10[k] << ", "
              << w20[k] << " m, order " << order << ", extrapolated " << reference << " m\n";
    EXPECT_NEAR(order, 2.0, 0.1) << "t = " << ts[k];
    double coarse = 0.0;
    for (const auto& [elements, modes] : {std::pair{8, 4}, std::pair{16, 6}}) {
      const SpinUp s = MakeSpinUp(true, elements, modes);
      events::Simulation sim(s.system, Options());
      sim.SetState(0.0, s.system->model().InitialPositions(),
                   s.system->model().InitialVelocities());
      ASSERT_EQ(sim.AdvanceTo(ts[k]).status, events::RunStatus::kFinished);
      const double error = std::abs(TipDeflection(s, sim.q()) - reference);
      std::cout << "  beam " << elements << " elements, " << modes
                << " modes: " << TipDeflection(s, sim.q()) << " m (" << error
                << " from the chain)\n";
      const double slope = reference / kLength;
      EXPECT_LT(error, 1.5 * slope * slope * std::abs(reference))
          << elements << " elements, t = " << ts[k];
      if (elements == 8)
        coarse = TipDeflection(s, sim.q());
      else
        EXPECT_NEAR(TipDeflection(s, sim.q()), coarse, 1e-4) << "t = " << ts[k];
    }
  }
}

}  // namespace
}  // namespace saltus::engine

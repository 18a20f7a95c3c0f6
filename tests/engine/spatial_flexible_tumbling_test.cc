// Issue 22 §3: a free spatial flexible body (engine/flexible_beam_spatial.h) tumbling without
// gravity or damping conserves its total energy T + V and its linear and angular momenta.
// The body runs here as a one-body MechanicalSystem assembled from the beam's blocks (the
// SpatialModel does not take flexible bodies yet); its frame coordinates (r, Q) use the rigid
// spatial system's position update, increments and dexp⁻¹, so DOPRI5 keeps its order on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "engine/flexible_beam_spatial.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "flexible_test_models.h"

namespace saltus::engine {
namespace {

class FreeSpatialBeamSystem : public MechanicalSystem {
 public:
  explicit FreeSpatialBeamSystem(const SpatialFlexibleBeam& beam)
      : beam_(beam), m_(beam.num_modes()), frame_(OneRigidBody()) {}

  int nq() const override { return 7 + m_; }
  int nv() const override { return 6 + m_; }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override {
    M->resize(nv(), nv());
    beam_.MassMatrix(Rotation(q), q.tail(m_), *M);
  }
  void Forces(double, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override {
    F->setZero(nv());
    beam_.AddForces(Rotation(q), q.tail(m_), v.segment<3>(3), v.tail(m_), Eigen::Vector3d::Zero(),
                    *F);
  }
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override {
    Eigen::VectorXd frame;
    frame_.IntegratePosition(q.head<7>(), v.head<6>(), h, &frame);
    const Eigen::VectorXd eta = q.tail(m_) + h * v.tail(m_);
    q_next->resize(nq());
    *q_next << frame, eta;
  }
  bool PositionDifference(const Eigen::VectorXd& q, const Eigen::VectorXd& q_base,
                          Eigen::VectorXd* theta) const override {
    Eigen::VectorXd frame;
    if (!frame_.PositionDifference(q.head<7>(), q_base.head<7>(), &frame)) return false;
    theta->resize(nv());
    *theta << frame, q.tail(m_) - q_base.tail(m_);
    return true;
  }
  void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
               Eigen::VectorXd* theta_dot) const override {
    Eigen::VectorXd frame;
    frame_.DexpInv(theta.head<6>(), v.head<6>(), &frame);
    theta_dot->resize(nv());
    *theta_dot << frame, v.tail(m_);
  }
  double PotentialEnergy(double, const Eigen::VectorXd& q) const override {
    return beam_.PotentialEnergy(q.head<3>(), Rotation(q), q.tail(m_), Eigen::Vector3d::Zero());
  }

  // Linear momentum Σ w ṗ and angular momentum about the world origin Σ w p × ṗ + R J_sec ω.
  void Momenta(const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::Vector3d* linear,
               Eigen::Vector3d* angular) const {
    const Eigen::Matrix3d R = Rotation(q);
    const Eigen::Vector3d omega = v.segment<3>(3);
    linear->setZero();
    *angular = R * beam_.section_inertia().cwiseProduct(omega);
    for (std::size_t g = 0; g < beam_.quadrature_points().size(); ++g) {
      const SpatialBeamMotion k =
          beam_.Motion(beam_.quadrature_points()[g], q.tail(m_), v.tail(m_));
      const Eigen::Vector3d p = q.head<3>() + R * k.u;
      const Eigen::Vector3d p_dot = v.head<3>() + R * (omega.cross(k.u) + k.u_dot);
      *linear += beam_.quadrature_weights()[g] * p_dot;
      *angular += beam_.quadrature_weights()[g] * p.cross(p_dot);
    }
  }

 private:
  static std::shared_ptr<const SpatialModel> OneRigidBody() {
    SpatialModelBuilder builder;
    SpatialBody body;
    body.name = "frame";
    builder.AddBody(body);
    return builder.Build();
  }
  static Eigen::Matrix3d Rotation(const Eigen::VectorXd& q) {
    return QuaternionToRotation(q.segment<4>(3));
  }

  const SpatialFlexibleBeam& beam_;
  int m_;
  SpatialMultibodySystem frame_;  // the rigid body whose frame update (r, Q) is reused
};

TEST(SpatialFlexible, FreeBodyTumblingConservesEnergyAndMomenta) {
  // The soft free–free beam of the planar tumbling test (L = 2 m, E = 7e7 Pa) with
  // I_xz = 2.25 I_xy: 6 modes, 3 per bending plane (19, 28, 53, 80, 104, 156 rad/s). It spins at
  // |ω| = 2.4 rad/s about an axis away from its principal axes, with every mode moving and
  // deflections of a few % of L (the foreshortening terms matter), for 8 s (3 turns).
  BeamProperties p = testing::KaneBeam(4, 6, BeamReference::kFree, 2.0);
  p.youngs_modulus = 7e7;
  const SpatialFlexibleBeam beam(p, 4.5e-7);
  ASSERT_EQ(beam.num_modes(), 6);
  auto system = std::make_shared<FreeSpatialBeamSystem>(beam);
  Eigen::VectorXd q(13), v(12);
  q << 0.1, -0.2, 0.3, Eigen::Vector4d(0.9, 0.1, -0.3, 0.2).normalized(), 0.05, -0.04, 0.03, -0.02,
      0.02, 0.01;
  v << 0.2, -0.1, 0.3, 0.6, -1.0, 2.0, -0.3, 0.4, 0.2, -0.3, 0.1, 0.2;
  const auto energy = [&](const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    return system->KineticEnergy(qq, vv) + system->PotentialEnergy(0.0, qq);
  };
  const double e0 = energy(q, v);
  Eigen::Vector3d p0, l0;
  system->Momenta(q, v, &p0, &l0);
  events::SimulationOptions options;
  options.integrator = "dopri5";
  const double rtol = 1e-8;
  options.integrator_options.rtol = rtol;
  options.integrator_options.atol = 1e-3 * rtol;
  events::Simulation sim(system, options);
  sim.SetState(0.0, q, v);
  double drift_e = 0.0, drift_p = 0.0, drift_l = 0.0, largest_eta = 0.0;
  for (int k = 1; k <= 16; ++k) {
    ASSERT_EQ(sim.AdvanceTo(0.5 * k).status, events::RunStatus::kFinished);
    Eigen::Vector3d pk, lk;
    system->Momenta(sim.q(), sim.v(), &pk, &lk);
    drift_e = std::max(drift_e, std::abs(energy(sim.q(), sim.v()) - e0) / e0);
    drift_p = std::max(drift_p, (pk - p0).norm() / p0.norm());
    drift_l = std::max(drift_l, (lk - l0).norm() / l0.norm());
    largest_eta = std::max(largest_eta, sim.q().tail(6).cwiseAbs().maxCoeff());
  }
  const long steps = sim.stats().integrator.accepted_steps;
  // Bound: each accepted step commits a local error below rtol relative to the state (DOPRI5's
  // error estimate, Hairer, Nørsett & Wanner I, Sec. II.4); T + V and the momenta are quadratic
  // (bilinear) in the state, so their relative error per step is at most ~2 rtol and over N steps
  // at most 2 N rtol if every step's error added up with the same sign.
  const double bound = 2.0 * static_cast<double>(steps) * rtol;
  std::cout << "spatial free flexible body: E0 " << e0 << " J, |L0| " << l0.norm()
            << " kg m^2/s, relative drifts: energy " << drift_e << ", linear momentum " << drift_p
            << ", angular momentum " << drift_l << " over 8 s; " << steps << " steps (bound "
            << bound << "); largest |eta| " << largest_eta << "\n";
  EXPECT_LT(drift_e, bound);
  EXPECT_LT(drift_p, bound);
  EXPECT_LT(drift_l, bound);
  // The motion is a tumbling flexible body, not a rigid spin: the modes stay excited.
  EXPECT_GT(largest_eta, 0.01);
}

}  // namespace
}  // namespace saltus::engine

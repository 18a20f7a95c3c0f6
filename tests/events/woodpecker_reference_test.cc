// The woodpecker toy in the linearized model of Leine, Glocker & van Campen (Nonlinear Dynamics
// 31 (2003) 211–231), written as Siconos writes it (LagrangianLinearTIDS with constant M and K,
// LagrangianLinearTIR contacts), run by the event loop and compared with Siconos' published
// reference trajectory (Moreau–Jean, θ = 1/2, h = 2e-5 s;
// tests/events/data/siconos_woodpecker.csv).
//
// Coordinates q = (y, φ_M, φ_S): the sleeve's height and the sleeve's and the bird's angles.
//   M = [m_M + m_S, m_S l_M, m_S l_G; m_S l_M, J_M + m_S l_M², m_S l_M l_G;
//        m_S l_G, m_S l_M l_G, J_S + m_S l_G²],
//   F = −g (m_M + m_S, m_S l_M, m_S l_G) − K q,  K = c_φ [0 0 0; 0 1 −1; 0 −1 1].
// Contacts (gap g_N and tangential velocity ġ_T, linear in q and v):
//   beak    g_N = l_M + l_G − l_S − r_O − h_S φ_S,  ġ_T = ẏ + l_M φ̇_M + (l_G − l_S) φ̇_S,  e = 0.5
//   corner  g_N = r_M − r_O + h_M φ_M,              ġ_T = ẏ + r_M φ̇_M,                      e = 0
//   corner  g_N = r_M − r_O − h_M φ_M,              ġ_T = ẏ + r_M φ̇_M,                      e = 0
// all with μ = 0.3 (parameters: ../shared/FRICTION.md, "Woodpecker toy").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/lagrangian_system.h"
#include "events/simulation.h"
#include "tests/tools/numeric_csv.h"

namespace saltus::events {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using engine::ConstraintKind;
using engine::ConstraintLevel;
using engine::ConstraintRowInfo;

constexpr double r_O = 0.0025, r_M = 0.0031, h_M = 0.0058, l_M = 0.010, l_G = 0.015, h_S = 0.02,
                 l_S = 0.0201;
constexpr double m_M = 0.0003, m_S = 0.0045, J_M = 5.0e-9, J_S = 7.0e-7, c_phi = 0.0056, g = 9.81,
                 mu = 0.3;

std::shared_ptr<engine::MechanicalSystem> LinearWoodpecker() {
  engine::LagrangianCallbacks cb;
  cb.n = 3;
  cb.constant_mass = true;
  cb.mass = [](const VectorXd&, MatrixXd* M) {
    M->resize(3, 3);
    *M << m_S + m_M, m_S * l_M, m_S * l_G,                  //
        m_S * l_M, J_M + m_S * l_M * l_M, m_S * l_M * l_G,  //
        m_S * l_G, m_S * l_M * l_G, J_S + m_S * l_G * l_G;
  };
  cb.forces = [](double, const VectorXd& q, const VectorXd&, VectorXd* F) {
    const double spring = c_phi * (q[1] - q[2]);
    *F = VectorXd(3);
    *F << -(m_M + m_S) * g, -m_S * l_M * g - spring, -m_S * l_G * g + spring;
  };
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);

  // Rows 0–2: the normal gaps (beak, corners); rows 3–5: their tangential velocities.
  MatrixXd G(6, 3);
  G << 0, 0, -h_S,        //
      0, h_M, 0,          //
      0, -h_M, 0,         //
      1, l_M, l_G - l_S,  //
      1, r_M, 0,          //
      1, r_M, 0;
  VectorXd b(6);
  b << l_M + l_G - l_S - r_O, r_M - r_O, r_M - r_O, 0, 0, 0;
  engine::ConstraintCallbacks cc;
  const char* names[] = {"beak", "corner_up", "corner_down"};
  for (int k = 0; k < 3; ++k) {
    ConstraintRowInfo n{ConstraintKind::kUnilateral, names[k]};
    n.friction = mu;
    n.restitution = k == 0 ? 0.5 : 0.0;
    cc.rows.push_back(n);
  }
  for (int k = 0; k < 3; ++k) {
    ConstraintRowInfo t{ConstraintKind::kTangential, std::string(names[k]) + ".t"};
    t.level = ConstraintLevel::kVelocity;
    t.normal_row = k;
    cc.rows.push_back(t);
  }
  cc.values = [G, b](double, const VectorXd& q, VectorXd* gq) {
    *gq = G * q + b;
    gq->tail(3).setZero();  // velocity-level rows (engine/constraint_block.h)
  };
  cc.jacobian = [G](double, const VectorXd&, MatrixXd* Gq) { *Gq = G; };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 3));
  return sys;
}

struct Sample {
  double t;
  VectorXd q;
};

class Recorder : public Observer {
 public:
  void OnOutput(double t, const VectorXd& q, const VectorXd&) override {
    samples.push_back({t, q});
  }
  void OnEvent(const Event& e, const VectorXd&, const VectorXd& v_minus,
               const VectorXd& v_plus) override {
    if (e.kind != EventKind::kImpact || std::find(e.rows.begin(), e.rows.end(), 0) == e.rows.end())
      return;
    beak_impacts.push_back(e.t);
    omega_S_minus.push_back(v_minus[2]);
    omega_S_plus.push_back(v_plus[2]);
  }
  std::vector<Sample> samples;
  std::vector<double> beak_impacts, omega_S_minus, omega_S_plus;
};

// The reference rows: t, y, ẏ, φ_M, φ̇_M, φ_S, φ̇_S.
std::vector<std::vector<double>> ReadReference() {
  const char* root = std::getenv("SALTUS_SOURCE_DIR");
  return tools::test_support::ReadNumericCsv(std::string(root ? root : ".") +
                                             "/tests/events/data/siconos_woodpecker.csv")
      .rows;
}

// The event loop (DOPRI5, rtol 1e-9) against Siconos' Moreau–Jean reference over 0.3 s: two
// beak impacts, three sticking phases of the sleeve, and the descent. The reference is first
// order in h = 2e-5 s and starts from the published φ_M = −0.1036, whose corner penetrates by
// 8.8e-7 m; the event loop starts at the corner's contact angle −(r_M − r_O)/h_M = −0.103448.
// Tolerances are twice the agreement measured (2.0e-4 m in y over a 0.038 m descent, 5.1e-3 rad
// in φ_S, 8.4e-3 rad in φ_M where the sleeve flips within milliseconds).
TEST(WoodpeckerReferenceTest, LinearizedModelFollowsTheSiconosReference) {
  const auto ref = ReadReference();
  ASSERT_EQ(ref.size(), 300u);
  SimulationOptions o;
  o.integrator_options.rtol = 1e-9;
  o.integrator_options.atol = 1e-11;
  o.output_step = 1e-3;
  o.painleve = PainleveResolution::kImpact;
  Simulation sim(LinearWoodpecker(), o);
  Recorder rec;
  sim.AddObserver(&rec);
  sim.SetState(0, VectorXd(Eigen::Vector3d(ref[0][1], -(r_M - r_O) / h_M, ref[0][5])),
               VectorXd(Eigen::Vector3d(ref[0][2], ref[0][4], ref[0][6])));
  const RunResult res = sim.AdvanceTo(0.299);
  ASSERT_EQ(res.status, RunStatus::kFinished) << res.message;

  // Beak impacts: the full reference (Woodpecker.ref) jumps in φ̇_S within the steps
  // [0.08102, 0.08104] s (16.937 → −8.469 rad/s) and [0.22708, 0.22710] s (16.926 → −8.463).
  // The event loop is 4.1e-5 s and 2.5e-4 s earlier (the reference's O(h) error builds up).
  ASSERT_EQ(rec.beak_impacts.size(), 2u);
  EXPECT_NEAR(rec.beak_impacts[0], 0.08103, 1e-4);
  EXPECT_NEAR(rec.beak_impacts[1], 0.22709, 5e-4);
  EXPECT_NEAR(rec.omega_S_minus[0], 16.937, 0.02 * 16.937);
  // Newton's law on the beak's normal velocity −h_S φ̇_S (e = 0.5): exact up to round-off.
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_NEAR(rec.omega_S_plus[k], -0.5 * rec.omega_S_minus[k], 1e-9 * rec.omega_S_minus[k]);
  }

  double worst[3] = {0, 0, 0};
  int compared = 0;
  for (const Sample& s : rec.samples) {
    const auto k = static_cast<std::size_t>(std::lround(s.t * 1e3));
    if (k >= ref.size() || std::abs(ref[k][0] - s.t) > 1e-9) continue;
    ++compared;
    worst[0] = std::max(worst[0], std::abs(s.q[0] - ref[k][1]));
    worst[1] = std::max(worst[1], std::abs(s.q[1] - ref[k][3]));
    worst[2] = std::max(worst[2], std::abs(s.q[2] - ref[k][5]));
  }
  EXPECT_GE(compared, 299);
  EXPECT_LE(worst[0], 4e-4) << "y";
  EXPECT_LE(worst[1], 1.7e-2) << "phi_M";
  EXPECT_LE(worst[2], 1e-2) << "phi_S";
  // The descent over 0.299 s: −0.0382 m in the reference.
  EXPECT_NEAR(sim.q()[0], ref.back()[1], 4e-4);
}

}  // namespace
}  // namespace saltus::events

// Coulomb friction in 3D at user level (issue 18 §4-§5): the scenes of examples/friction3d/ are
// loaded as `saltus run` loads them and checked against their closed forms — the rolling sphere's
// end of slip, the side-spun sphere whose slip direction is not its velocity's, and a box flat on
// four corners on an incline (redundant contacts: an indeterminate force split) that sticks or
// slides as a whole.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <filesystem>
#include <string>

#include "friction_scene_run.h"

namespace saltus::tools {
namespace {

using events::ContactMode;
using events::EventKind;

const std::filesystem::path kExamples = std::filesystem::path(SALTUS_EXAMPLES_DIR) / "friction3d";
constexpr double kG = 9.81;

struct Friction3dRun : SceneRun {
  explicit Friction3dRun(const std::string& file, const std::function<void(Scene&)>& edit = {})
      : SceneRun(kExamples, file, edit) {}
  // Velocity of the body-frame origin (world) and angular velocity (world) of body 0.
  Eigen::Vector3d Velocity() const { return sim->v().head<3>(); }
  Eigen::Vector3d AngularVelocityWorld() const {
    const Eigen::VectorXd& q = sim->q();
    const Eigen::Quaterniond r(q[3], q[4], q[5], q[6]);
    return r.normalized() * Eigen::Vector3d(sim->v().segment<3>(3));
  }
};

// A sphere on a plane: the slip ṡ = −(7/2) μ g ŝ keeps its direction, so the slide ends at
// t* = 2|s₀|/(7 μ g) with v = v₀ − (2/7) s₀ (the scenes' headers). DOPRI5 integrates the linear
// decay exactly and the stop is located on d₀·ġ_T, linear in t, to the root tolerance
// 1e-12·max(1, t): 1e-11 s and 1e-9 m/s (velocities after the stick projection) hold.
void ExpectSlideEnds(const std::string& file, const Eigen::Vector3d& v0, const Eigen::Vector3d& s0,
                     double mu) {
  Friction3dRun run(file);
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << file;
  const auto sticks = run.rec.Of(EventKind::kStick);
  ASSERT_EQ(sticks.size(), 1u) << file;
  EXPECT_NEAR(sticks[0]->t, 2.0 * s0.norm() / (7.0 * mu * kG), 1e-11) << file;
  EXPECT_EQ(run.rec.events.size(), 2u) << file;  // the closing at t = 0 and the stick
  const Eigen::Vector3d v = v0 - 2.0 / 7.0 * s0;
  EXPECT_LE((run.Velocity() - v).norm(), 1e-9) << file;
  // Rolling: the contact point at rest, v = ω × r e_z.
  const Eigen::Vector3d w = run.AngularVelocityWorld();
  EXPECT_LE((run.Velocity() + w.cross(Eigen::Vector3d(0, 0, -0.1))).norm(), 1e-9) << file;
}

TEST(Friction3dScenes, RollingSphereEndsItsSlipAtTheClosedForm) {
  ExpectSlideEnds("rolling_sphere.yaml", {1, 0, 0}, {1, 0, 0}, 0.2);
}

// Side spin: the slip (1, 0.5, 0) is not along v₀ = (1, 0, 0); the spin about the vertical
// (3 rad/s) meets no torque.
TEST(Friction3dScenes, SideSpunSphereSlidesAlongItsSlipNotItsVelocity) {
  ExpectSlideEnds("sphere_sidespin.yaml", {1, 0, 0}, {1, 0.5, 0}, 0.2);
  Friction3dRun run("sphere_sidespin.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  EXPECT_NEAR(run.AngularVelocityWorld()[2], 3.0, 1e-9);
}

// The box flat on its four corners on the incline (α = 0.3 rad, m = 2 kg): μ = 0.4 and μ = 0.32,
// both above tan α = 0.3093. With μ = 0.32 the minimum-norm split of the index-1 solve puts
// |λ_T|/λ_N = 0.366 > μ on the uphill corners (the normal load shifts downhill, the tangential
// load spreads evenly); the box must stick all the same, with every corner inside its cone
// (events/force_split.h), and the resultants m g sin α up the slope and m g cos α normal.
TEST(Friction3dScenes, BoxOnFourCornersSticksAsAWholeWithForcesInsideEveryCone) {
  const double m = 2.0, alpha = 0.3;
  for (double mu : {0.4, 0.32}) {
    Friction3dRun run("box_incline_stick.yaml", [&](Scene& s) {
      for (auto& p : s.spatial.contact_pairs) p.friction = mu;
    });
    const Eigen::VectorXd q0 = run.sim->q();
    ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished) << mu;
    EXPECT_EQ(run.rec.events.size(), 1u) << mu;  // the closing at t = 0 only
    EXPECT_LE((run.sim->q() - q0).norm(), 1e-12) << mu;
    Eigen::Vector3d resultant = Eigen::Vector3d::Zero();
    for (const auto& f : run.sim->ContactForces()) {
      EXPECT_EQ(f.mode, ContactMode::kStick);
      EXPECT_GE(f.normal, 0.0);
      // The faceted inner cone (16 facets) lies inside the exact one.
      EXPECT_LE(f.tangential.norm(), mu * f.normal * (1 + 1e-12)) << mu;
      resultant += Eigen::Vector3d(f.tangential[0], f.tangential[1], f.normal);
    }
    // Tangent bases of a plane contact are fixed but not known here: compare magnitudes.
    EXPECT_NEAR(resultant.head<2>().norm(), m * kG * std::sin(alpha), 1e-9) << mu;
    EXPECT_NEAR(resultant[2], m * kG * std::cos(alpha), 1e-9) << mu;
  }
}

// μ = 0.2 < tan α: the box slides down as a whole, x(t) = −½ g (sin α − μ cos α) t², no rotation.
// DOPRI5 integrates the parabola exactly: 1e-9 m.
TEST(Friction3dScenes, BoxOnFourCornersSlidesAsAWhole) {
  const double mu = 0.2, alpha = 0.3;
  Friction3dRun run("box_incline_slide.yaml");
  ASSERT_EQ(run.Advance(run.scene.t_end).status, events::RunStatus::kFinished);
  EXPECT_EQ(run.rec.events.size(), 1u);
  const double a = kG * (std::sin(alpha) - mu * std::cos(alpha));
  EXPECT_NEAR(run.sim->q()[0], -0.5 * a, 1e-9);
  EXPECT_NEAR(run.sim->q()[1], 0.0, 1e-9);
  EXPECT_NEAR(run.sim->q()[2], 0.1, 1e-9);
  EXPECT_LE(run.sim->v().segment<3>(3).norm(), 1e-9);  // no rotation
  for (const auto& f : run.sim->ContactForces()) EXPECT_EQ(f.mode, ContactMode::kSlip);
}

}  // namespace
}  // namespace saltus::tools

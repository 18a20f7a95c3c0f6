// Simulation::ContactForces of the facade (saltus/saltus.h) on the planar friction examples
// against their closed forms (examples/friction/*.yaml headers):
//   sliding_block   both corners slide with λ_T = −μ λ_N d (d = ±1 in the basis of the tangential
//                   row), Σ λ_N = m g and a friction force −μ m g x̂ on the block moving along +x,
//                   until t* = v₀/(μ g); then both stick with Σ λ_T = 0;
//   incline_stick   both corners stick with Σ λ_T = m g sin α (up the slope), Σ λ_N = m g cos α;
// and the world vectors (point on the ground line, normal force along +y, tangential along x).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "saltus/saltus.h"

namespace saltus {
namespace {

using Eigen::Vector3d;

constexpr double kG = 9.81;

Model Example(const std::string& file) {
  return Model::FromSceneFile(std::string(SALTUS_EXAMPLES_DIR) + "/friction/" + file);
}

struct Sums {
  double normal = 0, tangential = 0;
  Vector3d normal_force = Vector3d::Zero(), tangential_force = Vector3d::Zero();
};
Sums Sum(const std::vector<ContactForce>& forces) {
  Sums s;
  for (const ContactForce& c : forces) {
    s.normal += c.normal;
    s.tangential += c.tangential[0];
    s.normal_force += c.normal_force;
    s.tangential_force += c.tangential_force;
  }
  return s;
}

// The λ are those of the index-1 solve (round-off of forces ~10 N: 1e-9); the closed forms are
// exact for the block (constant deceleration, DOPRI5 exact on a quadratic).
constexpr double kForceTol = 1e-9;

TEST(ContactForcesTest, SlidingBlockSlidesAtMuMgThenSticksWithNoFriction) {
  const Model model = Example("sliding_block.yaml");
  Simulation sim(model);
  const double m = 1.0, mu = 0.3, v0 = 2.0, t_stop = v0 / (mu * kG);
  ASSERT_TRUE(sim.AdvanceTo(0.5 * t_stop).ok());
  std::vector<ContactForce> forces = sim.ContactForces();
  ASSERT_EQ(forces.size(), 2u);
  EXPECT_EQ(forces[0].name, "left_corner");
  EXPECT_EQ(forces[1].name, "right_corner");
  for (const ContactForce& c : forces) {
    EXPECT_EQ(c.mode, ContactMode::kSlip);
    EXPECT_EQ(c.num_tangent_rows, 1);
    const double d = c.slip_direction[0];
    EXPECT_EQ(std::abs(d), 1.0);  // the phase's sign, exact
    EXPECT_EQ(c.mode_name, d > 0 ? "slip+" : "slip-");
    EXPECT_NEAR(c.tangential[0], -mu * c.normal * d, kForceTol);
    EXPECT_NEAR(c.point[1], 0.0, 1e-9);  // on the ground line (projection tolerance)
    EXPECT_NEAR(c.tangential_force[0], -mu * c.normal, kForceTol);  // against the motion
  }
  Sums s = Sum(forces);
  EXPECT_NEAR(s.normal, m * kG, kForceTol);
  EXPECT_NEAR(std::abs(s.tangential), mu * m * kG, kForceTol);
  EXPECT_LT((s.normal_force - Vector3d(0, m * kG, 0)).norm(), kForceTol);
  EXPECT_LT((s.tangential_force - Vector3d(-mu * m * kG, 0, 0)).norm(), kForceTol);

  ASSERT_TRUE(sim.AdvanceTo(model.default_t_end()).ok());
  forces = sim.ContactForces();
  ASSERT_EQ(forces.size(), 2u);
  for (const ContactForce& c : forces) {
    EXPECT_EQ(c.mode, ContactMode::kStick);
    EXPECT_EQ(c.mode_name, "stick");
    EXPECT_EQ(c.slip_direction[0], 0.0);
  }
  s = Sum(forces);
  EXPECT_NEAR(s.normal, m * kG, kForceTol);
  EXPECT_NEAR(s.tangential, 0.0, kForceTol);
  EXPECT_LT(s.tangential_force.norm(), kForceTol);
}

TEST(ContactForcesTest, InclineHoldsTheSlopeComponentOfGravityWhileSticking) {
  const Model model = Example("incline_stick.yaml");
  Simulation sim(model);
  const double m = 1.0, alpha = 0.3;
  ASSERT_TRUE(sim.AdvanceTo(0.5).ok());
  const std::vector<ContactForce> forces = sim.ContactForces();
  ASSERT_EQ(forces.size(), 2u);
  for (const ContactForce& c : forces) EXPECT_EQ(c.mode, ContactMode::kStick);
  const Sums s = Sum(forces);
  EXPECT_NEAR(s.normal, m * kG * std::cos(alpha), kForceTol);
  EXPECT_NEAR(s.tangential_force[0], m * kG * std::sin(alpha), kForceTol);
  EXPECT_NEAR(std::abs(s.tangential), m * kG * std::sin(alpha), kForceTol);
}

TEST(ContactForcesTest, OpenContactsAreNotListed) {
  // The bouncing ball in flight: no closed contact.
  const Model model =
      Model::FromSceneFile(std::string(SALTUS_EXAMPLES_DIR) + "/bouncing_ball.yaml");
  Simulation sim(model);
  ASSERT_TRUE(sim.AdvanceTo(0.01).ok());
  EXPECT_TRUE(sim.ContactForces().empty());
}

}  // namespace
}  // namespace saltus

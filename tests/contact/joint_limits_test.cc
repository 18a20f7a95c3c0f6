// contact::JointLimits: the rows of a revolute and a prismatic limit against central
// differences along the motion (g → G v → γ), their values at known configurations, and bad
// limits rejected with the limit's name.
#include "contact/joint_limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "engine/spatial_model.h"

namespace saltus::contact {
namespace {

using Eigen::Vector3d;

// A ground-hinged arm (revolute about an oblique axis) carrying a slider (prismatic along an
// oblique axis of the arm), both with offset joint points.
std::shared_ptr<const engine::SpatialModel> ArmWithSlider() {
  engine::SpatialModelBuilder builder;
  engine::SpatialBody arm, slider;
  arm.name = "arm";
  arm.inertia = Vector3d(0.1, 0.2, 0.3).asDiagonal();
  slider.name = "slider";
  slider.position = {0.4, 0.1, -0.2};
  builder.AddBody(arm);
  builder.AddBody(slider);
  engine::SpatialJoint hinge;
  hinge.name = "hinge";
  hinge.type = engine::SpatialJointType::kRevolute;
  hinge.body_b = 0;
  hinge.point_a = {0.1, 0, 0.2};
  hinge.point_b = {0.1, 0, 0.2};
  hinge.axis_a = hinge.axis_b = Vector3d(0.2, 0.3, 1).normalized();
  builder.AddJoint(hinge);
  engine::SpatialJoint slide;
  slide.name = "slide";
  slide.type = engine::SpatialJointType::kPrismatic;
  slide.body_a = 0;
  slide.body_b = 1;
  slide.point_a = {0.3, 0.1, 0};
  slide.point_b = {-0.1, 0, 0.2};
  slide.axis_a = slide.axis_b = Vector3d(1, 0.2, -0.1).normalized();
  builder.AddJoint(slide);
  return builder.Build();
}

// Positions of two bodies in general position (unit quaternions) and velocities.
void RandomState(int seed, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<double> u(-1, 1);
  q->resize(14);
  v->resize(12);
  for (int b = 0; b < 2; ++b) {
    Eigen::Vector4d quat(u(rng), u(rng), u(rng), u(rng));
    quat.normalize();
    q->segment<3>(7 * b) = Vector3d(u(rng), u(rng), u(rng));
    q->segment<4>(7 * b + 3) = quat;
  }
  for (int i = 0; i < 12; ++i) (*v)[i] = 2 * u(rng);
}

TEST(JointLimitsTest, JacobianAndGammaMatchCentralDifferencesAlongTheMotion) {
  const auto model = ArmWithSlider();
  const engine::SpatialMultibodySystem system(model);
  const JointLimits limits(model,
                           {{"hinge_stop", 0, -2.0, 1.5, 0.3}, {"slide_stop", 1, -0.5, 0.4}});
  ASSERT_EQ(limits.num_rows(), 4);
  EXPECT_EQ(limits.row_info(1).name, "hinge_stop.upper");
  EXPECT_EQ(limits.row_info(0).kind, engine::ConstraintKind::kUnilateral);
  EXPECT_EQ(limits.row_info(0).restitution, 0.3);
  const std::vector<int> rows = {0, 1, 2, 3};
  for (int seed = 1; seed <= 5; ++seed) {
    Eigen::VectorXd q, v;
    RandomState(seed, &q, &v);
    // With v constant (body-frame ω), q(h) = q ⊕ h v is exact, so g(q(h)) has g' = G v and
    // g'' = γ; central differences of step h = 1e-4 are accurate to O(h²) ≈ 1e-8 times the
    // third and fourth derivatives (O(1) here) plus round-off 1e-16/h² = 1e-8 for γ.
    const double h = 1e-4;
    Eigen::VectorXd q_plus, q_minus;
    system.IntegratePosition(q, v, h, &q_plus);
    system.IntegratePosition(q, v, -h, &q_minus);
    Eigen::VectorXd g(4), g_plus(4), g_minus(4), gamma(4);
    limits.Values(0, q, rows, g);
    limits.Values(0, q_plus, rows, g_plus);
    limits.Values(0, q_minus, rows, g_minus);
    Eigen::MatrixXd G(4, 12);
    limits.Jacobian(0, q, rows, G);
    limits.Gamma(0, q, v, rows, gamma);
    const Eigen::VectorXd rate = (g_plus - g_minus) / (2 * h);
    const Eigen::VectorXd accel = (g_plus - 2 * g + g_minus) / (h * h);
    for (int k = 0; k < 4; ++k) {
      EXPECT_NEAR((G * v)[k], rate[k], 1e-6) << "seed " << seed << " row " << k;
      EXPECT_NEAR(gamma[k], accel[k], 1e-5) << "seed " << seed << " row " << k;
    }
    // Lower and upper rows are mirror images.
    EXPECT_NEAR(g[0] + g[1], 3.5, 1e-14);
    EXPECT_NEAR(g[2] + g[3], 0.9, 1e-14);
  }
}

// At the assembled initial configuration the hinge angle is 0 and the slide's displacement is
// the offset of the joint points along the axis.
TEST(JointLimitsTest, ValuesAtTheInitialConfiguration) {
  const auto model = ArmWithSlider();
  const JointLimits limits(model, {{"h", 0, -1.0, 2.0}, {"s", 1, -0.5, 0.4}});
  const Eigen::VectorXd q = model->InitialPositions();
  Eigen::VectorXd g(4);
  limits.Values(0, q, std::vector<int>{0, 1, 2, 3}, g);
  EXPECT_NEAR(g[0], 1.0, 1e-14);  // θ = 0: θ − (−1)
  EXPECT_NEAR(g[1], 2.0, 1e-14);
  const Vector3d axis = Vector3d(1, 0.2, -0.1).normalized();
  const double s =
      axis.dot(Vector3d(0.4, 0.1, -0.2) + Vector3d(-0.1, 0, 0.2) - Vector3d(0.3, 0.1, 0));
  EXPECT_NEAR(g[2], s + 0.5, 1e-14);
  EXPECT_NEAR(g[3], 0.4 - s, 1e-14);
}

TEST(JointLimitsTest, BadLimitsNameTheLimit) {
  const auto model = ArmWithSlider();
  const auto rejects = [&](JointLimit l, const std::string& what) {
    try {
      JointLimits(model, {l});
      ADD_FAILURE() << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("joint limit '" + l.name + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  rejects({"a", 0, 1.0, 0.5}, "lower < upper");
  rejects({"b", 0, -4.0, 0.5}, "[-pi, pi]");
  rejects({"c", 5, -1.0, 0.5}, "not a joint");
  rejects({"d", 0, -1.0, 0.5, 1.5}, "restitution");
}

}  // namespace
}  // namespace saltus::contact

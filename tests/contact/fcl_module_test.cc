// The plain-data interface of the FCL module (contact/fcl_module.h) and its C++ wrapper
// (contact/fcl_backend.h): poses cross as R column by column then p (a box turned by 90° about z
// presents its y half-size along x); distances of primitives against their closed forms; the
// box tree's pairs as (min, max) ids; every failure comes back as a message, never as an
// exception out of the module, and the wrapper throws it as std::runtime_error.
#include "contact/fcl_module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "contact/fcl_backend.h"

namespace saltus::contact {
namespace {

std::array<double, 12> Pose(const Eigen::Isometry3d& X) {
  std::array<double, 12> p;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) p[static_cast<std::size_t>(3 * c + r)] = X.linear()(r, c);
  for (int r = 0; r < 3; ++r) p[static_cast<std::size_t>(9 + r)] = X.translation()(r);
  return p;
}

TEST(FclModule, PosesCrossColumnByColumn) {
  const SaltusFclApi& api = *saltus_fcl_api();
  ASSERT_EQ(api.abi_version, SALTUS_FCL_ABI_VERSION);
  char error[256] = {};
  const double box_side[] = {0.2, 1.0, 3.0};  // half-sizes 0.1, 0.5, 1.5
  const double radius[] = {0.25};
  SaltusFclGeometry* box = api.new_shape(SALTUS_FCL_BOX, box_side, error, sizeof error);
  SaltusFclGeometry* ball = api.new_shape(SALTUS_FCL_SPHERE, radius, error, sizeof error);
  ASSERT_NE(box, nullptr) << error;
  ASSERT_NE(ball, nullptr) << error;
  // The box turned by +90° about z: its y extent (half 0.5) now lies along x. A sphere centred at
  // x = 2 is at distance 2 − 0.5 − 0.25 = 1.25 (with the transpose, 2 − 0.1 − 0.25 = 1.65).
  Eigen::Isometry3d X_box = Eigen::Isometry3d::Identity();
  X_box.linear() = Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitZ()).matrix();
  X_box.translation() = Eigen::Vector3d(0, 0, 0.3);
  Eigen::Isometry3d X_ball = Eigen::Isometry3d::Identity();
  X_ball.translation() = Eigen::Vector3d(2, 0, 0.3);
  const auto pose_box = Pose(X_box), pose_ball = Pose(X_ball);
  SaltusFclDistance d{};
  ASSERT_EQ(api.distance(box, pose_box.data(), ball, pose_ball.data(), 1e-9, 0, 0, &d, error,
                         sizeof error),
            0)
      << error;
  EXPECT_NEAR(d.distance, 1.25, 1e-9);  // GJK's tolerance
  EXPECT_NEAR(d.point_a[0], 0.5, 1e-6);
  EXPECT_NEAR(d.point_b[0], 1.75, 1e-6);
  EXPECT_NEAR(d.point_b[2], 0.3, 1e-6);
  // Overlapping at x = 0.6: one contact, depth 0.5 + 0.25 − 0.6 = 0.15, normal along x.
  X_ball.translation().x() = 0.6;
  const auto pose_near = Pose(X_ball);
  SaltusFclContact c{};
  ASSERT_EQ(api.collide(box, pose_box.data(), ball, pose_near.data(), 0, &c, error, sizeof error),
            0)
      << error;
  EXPECT_EQ(c.found, 1);
  EXPECT_NEAR(c.depth, 0.15, 1e-6);
  EXPECT_NEAR(std::abs(c.normal[0]), 1.0, 1e-6);
  api.release_geometry(box);
  api.release_geometry(ball);
}

TEST(FclModule, FailuresComeBackAsMessages) {
  const SaltusFclApi& api = *saltus_fcl_api();
  char error[256] = {};
  const double p[] = {1, 1, 1, 1};
  EXPECT_EQ(api.new_shape(42, p, error, sizeof error), nullptr);
  EXPECT_EQ(std::string(error), "unknown shape kind");
  SaltusFclBoxTree* tree = api.new_box_tree(error, sizeof error);
  ASSERT_NE(tree, nullptr);
  // A handle the tree never gave: std::out_of_range inside the module, a message outside.
  error[0] = '\0';
  EXPECT_NE(api.box_tree_resize(tree, 7, p, error, sizeof error), 0);
  EXPECT_GT(std::string(error).size(), 0u);
  // A buffer of 4 bytes holds 3 characters and the NUL.
  char small[4] = {'x', 'x', 'x', 'x'};
  EXPECT_NE(api.box_tree_set_pose(tree, 7, Pose(Eigen::Isometry3d::Identity()).data(), small,
                                  sizeof small),
            0);
  EXPECT_EQ(small[3], '\0');
  api.release_box_tree(tree);
  // Through the wrapper: std::runtime_error "FCL: ...".
  std::unique_ptr<FclBoxTree> boxes = Fcl().NewBoxTree();
  try {
    boxes->Resize(3, Eigen::Vector3d::Ones());
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("FCL: ", 0), 0u) << e.what();
  }
}

// Three unit boxes with ids 10, 4, 7 at x = 0, 0.8, 5: only the first two overlap, reported as
// (4, 10); after moving the third onto the second, (4, 7) as well.
TEST(FclModule, BoxTreeReportsOverlappingPairsByIds) {
  std::unique_ptr<FclBoxTree> boxes = Fcl().NewBoxTree();
  Eigen::Isometry3d X = Eigen::Isometry3d::Identity();
  const Eigen::Vector3d one = Eigen::Vector3d::Ones();
  EXPECT_EQ(boxes->Add(one, X, 10), 0);
  X.translation().x() = 0.8;
  EXPECT_EQ(boxes->Add(one, X, 4), 1);
  X.translation().x() = 5;
  EXPECT_EQ(boxes->Add(one, X, 7), 2);
  boxes->Refit();
  std::vector<std::pair<int, int>> pairs;
  boxes->OverlappingPairs(&pairs);
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{4, 10}}));
  X.translation().x() = 1.5;
  boxes->SetPose(2, X);
  boxes->Refit();
  pairs.clear();
  boxes->OverlappingPairs(&pairs);
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{4, 7}, {4, 10}}));
}

}  // namespace
}  // namespace saltus::contact

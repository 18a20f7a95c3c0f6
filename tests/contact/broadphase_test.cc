#include "contact/broadphase.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "contact/geometry3d.h"

namespace saltus::contact {
namespace {

using Eigen::Isometry3d;
using Eigen::Quaterniond;
using Eigen::Vector3d;

Isometry3d Pose(const Vector3d& p, const Quaterniond& q = Quaterniond::Identity()) {
  Isometry3d X = Isometry3d::Identity();
  X.linear() = q.normalized().toRotationMatrix();
  X.translation() = p;
  return X;
}

bool Contains(const std::vector<std::pair<int, int>>& pairs, int a, int b) {
  return std::binary_search(pairs.begin(), pairs.end(),
                            std::make_pair(std::min(a, b), std::max(a, b)));
}

// No pair within the margin is missed (checked against the exact signed distance of every pair),
// before and after the bodies move; the candidates are far fewer than all pairs.
TEST(Broadphase, FindsEveryPairWithinTheMargin) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(0.0, 3.0);
  std::normal_distribution<double> nd(0.0, 1.0);
  const double margin = 0.05;
  Broadphase bp(margin);
  const int n = 150;
  const auto random_pose = [&] {
    return Pose(Vector3d(u(rng), u(rng), u(rng)), Quaterniond(nd(rng), nd(rng), nd(rng), nd(rng)));
  };
  for (int i = 0; i < n; ++i) {
    const Shape s = i % 3 == 0   ? Shape::Sphere(0.1)
                    : i % 3 == 1 ? Shape::Box(Vector3d(0.15, 0.05, 0.1),
                                              Pose(Vector3d(0.05, 0, 0)))  // offset in the body
                                 : Shape::Capsule(0.05, 0.2);
    bp.Add(s, i, random_pose());
  }
  bp.Add(Shape::Plane(Vector3d::UnitZ(), 0.0), kStaticBody);
  for (int round = 0; round < 2; ++round) {
    const auto pairs = bp.CandidatePairs();
    int within = 0;
    for (int a = 0; a < bp.num_shapes(); ++a) {
      for (int b = a + 1; b < bp.num_shapes(); ++b) {
        const double gap =
            SignedDistance(bp.shape(a), bp.body_pose(a), bp.shape(b), bp.body_pose(b)).gap;
        if (gap <= margin) {
          ++within;
          EXPECT_TRUE(Contains(pairs, a, b)) << a << "-" << b << " gap " << gap;
        }
      }
    }
    EXPECT_GT(within, 5);  // the test set really has close pairs
    EXPECT_LT(pairs.size(), static_cast<std::size_t>(bp.num_shapes() * bp.num_shapes() / 10));
    for (int i = 0; i < n; ++i) bp.SetBodyPose(i, random_pose());
  }
}

// Two spheres 0.04 apart along x (their boxes' faces are 0.04 apart too): within the margin 0.05
// only thanks to the margin; 0.06 apart they are not candidates.
TEST(Broadphase, MarginGrowsTheBoxes) {
  Broadphase bp(0.05);
  const int a = bp.Add(Shape::Sphere(0.5), 0, Pose(Vector3d::Zero()));
  const int b = bp.Add(Shape::Sphere(0.5), 1, Pose(Vector3d(1.04, 0, 0)));
  EXPECT_TRUE(Contains(bp.CandidatePairs(), a, b));
  bp.SetBodyPose(b, Pose(Vector3d(1.06, 0, 0)));
  EXPECT_FALSE(Contains(bp.CandidatePairs(), a, b));
}

TEST(Broadphase, FiltersAndExclusions) {
  Broadphase bp(0.01);
  const Shape ball = Shape::Sphere(0.5);
  const int a = bp.Add(ball, 0, Pose(Vector3d(0, 0, 0)));
  const int a2 = bp.Add(ball, 0, Pose(Vector3d(0, 0, 0)));  // same body as a
  const int s1 = bp.Add(ball, kStaticBody, Pose(Vector3d(0.5, 0, 0)));
  const int s2 = bp.Add(ball, kStaticBody, Pose(Vector3d(-0.5, 0, 0)));        // two static shapes
  const int b = bp.Add(ball, 1, Pose(Vector3d(0, 0.5, 0)), {2, 0xFFFFFFFFu});  // group 2
  const int c = bp.Add(ball, 2, Pose(Vector3d(0, -0.5, 0)), {1, 1});  // touches group 1 only
  const int d = bp.Add(ball, 3, Pose(Vector3d(0, 0, 0.5)));
  bp.ExcludePair(d, a);
  const auto pairs = bp.CandidatePairs();
  EXPECT_FALSE(Contains(pairs, a, a2));   // same body
  EXPECT_FALSE(Contains(pairs, s1, s2));  // both static
  EXPECT_TRUE(Contains(pairs, a, s1));
  EXPECT_TRUE(Contains(pairs, a, b));
  EXPECT_FALSE(Contains(pairs, b, c));  // c's mask excludes group 2
  EXPECT_TRUE(Contains(pairs, a, c));
  EXPECT_FALSE(Contains(pairs, a, d));  // excluded
  EXPECT_TRUE(Contains(pairs, a2, d));
}

TEST(Broadphase, PlanesUseTheBoundingBall) {
  Broadphase bp(0.1);
  const int ground = bp.Add(Shape::Plane(Vector3d::UnitZ(), 0.0), kStaticBody);
  const int near = bp.Add(Shape::Sphere(0.2), 0, Pose(Vector3d(5, 5, 0.25)));  // gap 0.05
  const int far = bp.Add(Shape::Sphere(0.2), 1, Pose(Vector3d(0, 0, 0.35)));   // gap 0.15
  const auto pairs = bp.CandidatePairs();
  EXPECT_TRUE(Contains(pairs, ground, near));
  EXPECT_FALSE(Contains(pairs, ground, far));
  bp.SetBodyPose(far, Pose(Vector3d(0, 0, 0.29)));
  EXPECT_TRUE(Contains(bp.CandidatePairs(), ground, far));
}

TEST(Broadphase, BadInput) {
  EXPECT_THROW(Broadphase(-1.0), std::invalid_argument);
  Broadphase bp(0.0);
  EXPECT_THROW(bp.Add(Shape::Sphere(1.0), -2), std::invalid_argument);
  EXPECT_THROW(bp.ExcludePair(0, 1), std::invalid_argument);
  EXPECT_THROW(bp.SetBodyPose(3, Isometry3d::Identity()), std::invalid_argument);
}

}  // namespace
}  // namespace saltus::contact

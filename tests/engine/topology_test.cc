#include "engine/topology.h"

#include <gtest/gtest.h>

#include <numbers>
#include <string>

#include "engine/disjoint_sets.h"
#include "tests/engine/planar_test_models.h"
#include "tests/engine/spatial_mechanisms.h"

namespace saltus::engine {
namespace {

using Eigen::Vector3d;

TEST(Topology, DoubleFourBarHasTwoLoopsAndRedundantRows) {
  auto system = testing::DoubleFourBar();
  const auto report = AnalyzeTopology(*system, 0.0, system->model().InitialPositions());
  // 5 bodies + ground, 7 joints, one component: 7 − 6 + 1 = 2 loops.
  EXPECT_EQ(report.num_components, 1);
  EXPECT_TRUE(report.component_grounded[0]);
  EXPECT_EQ(report.num_loops, 2);
  ASSERT_EQ(report.loops.size(), 2u);
  for (const KinematicLoop& loop : report.loops) {
    EXPECT_EQ(loop.joints.size(), 4u);  // each loop of a four-bar has four joints
    EXPECT_EQ(loop.bodies.size(), 4u);  // three bars and the ground
  }
  EXPECT_TRUE(report.unconnected_bodies.empty());
  // 7 revolutes × 5 rows = 35; a planar 1-DOF mechanism built in space: rank 29, 6 redundant.
  EXPECT_EQ(report.num_rows, 35);
  EXPECT_EQ(report.rank, 29);
  EXPECT_EQ(report.redundant_rows, 6);
  EXPECT_EQ(report.degrees_of_freedom, 1);
  const std::string text = report.Summary(system->model());
  EXPECT_NE(text.find("2 independent loops"), std::string::npos) << text;
}

TEST(Topology, BricardIsOneRedundantLoopWithOneDegreeOfFreedom) {
  auto system = testing::Bricard();
  const auto report = AnalyzeTopology(*system, 0.0, system->model().InitialPositions());
  EXPECT_EQ(report.num_loops, 1);
  ASSERT_EQ(report.loops.size(), 1u);
  EXPECT_EQ(report.loops[0].joints.size(), 6u);
  EXPECT_EQ(report.loops[0].bodies.size(), 6u);  // five rods and the ground
  // Grübler: 6·5 − 5·6 = 0, but the orthogonal Bricard linkage moves: rank 29 of 30 rows.
  EXPECT_EQ(report.num_rows, 30);
  EXPECT_EQ(report.rank, 29);
  EXPECT_EQ(report.redundant_rows, 1);
  EXPECT_EQ(report.degrees_of_freedom, 1);
}

TEST(Topology, ComponentsAndFreeBodies) {
  // Two separate chains (one grounded, one floating) and a free body.
  SpatialModelBuilder builder;
  for (const char* name : {"a", "b", "c", "d", "free"}) {
    SpatialBody body;
    body.name = name;
    builder.AddBody(body);
  }
  const Vector3d z = Vector3d::UnitZ();
  builder.AddJoint(testing::Revolute("ga", kGround, 0, Vector3d::Zero(), Vector3d::Zero(), z));
  builder.AddJoint(testing::Revolute("ab", 0, 1, Vector3d::Zero(), Vector3d::Zero(), z));
  builder.AddJoint(testing::Revolute("cd", 2, 3, Vector3d::Zero(), Vector3d::Zero(), z));
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  const auto report = AnalyzeTopology(*system, 0.0, system->model().InitialPositions());
  EXPECT_EQ(report.num_components, 3);  // {a, b}, {c, d}, {free}
  EXPECT_EQ(report.component[0], report.component[1]);
  EXPECT_EQ(report.component[2], report.component[3]);
  EXPECT_NE(report.component[0], report.component[2]);
  EXPECT_TRUE(report.component_grounded[static_cast<std::size_t>(report.component[0])]);
  EXPECT_FALSE(report.component_grounded[static_cast<std::size_t>(report.component[2])]);
  EXPECT_EQ(report.num_loops, 0);
  ASSERT_EQ(report.unconnected_bodies.size(), 1u);
  EXPECT_EQ(report.unconnected_bodies[0], 4);
  EXPECT_EQ(report.degrees_of_freedom, 30 - 15);
  EXPECT_NE(report.Summary(system->model()).find("not connected by any joint: free"),
            std::string::npos);
}

// Planar models: revolute and prismatic joints are edges, an angle driver only a row.
TEST(Topology, PlanarFourBarWithDriverAndFreeBody) {
  // Crank A–B (1 m), coupler B–C (2 m), rocker C–D (1 m), ground pivots A = (0, 0), D = (2, 0),
  // cranks vertical; an angle driver on the crank; a body joined to nothing.
  PlanarModelBuilder builder;
  const auto body = [&](const char* name, double x, double y, double theta) {
    PlanarBody b;
    b.name = name;
    b.q0 << x, y, theta;
    return builder.AddBody(b);
  };
  const int crank = body("crank", 0, 0.5, std::numbers::pi / 2), coupler = body("coupler", 1, 1, 0);
  const int rocker = body("rocker", 2, 0.5, std::numbers::pi / 2);
  body("free", 5, 5, 0);
  const auto pin = [&](const char* name, int a, int b, Eigen::Vector2d pa, Eigen::Vector2d pb) {
    PlanarJoint j;
    j.name = name;
    j.body_a = a;
    j.body_b = b;
    j.point_a = pa;
    j.point_b = pb;
    builder.AddJoint(j);
  };
  pin("A", kGround, crank, {0, 0}, {-0.5, 0});
  pin("B", crank, coupler, {0.5, 0}, {-1, 0});
  pin("C", coupler, rocker, {1, 0}, {0.5, 0});
  pin("D", rocker, kGround, {-0.5, 0}, {2, 0});
  PlanarJoint drive;
  drive.name = "motor";
  drive.type = PlanarJointType::kAngleDriver;
  drive.body_b = crank;
  drive.angle0 = std::numbers::pi / 2;
  builder.AddJoint(drive);
  auto system = std::make_shared<PlanarMultibodySystem>(builder.Build());
  const auto report = AnalyzeTopology(*system, 0.0, system->model().InitialPositions());
  EXPECT_EQ(report.num_components, 2);  // the linkage (grounded) and the free body
  EXPECT_EQ(report.num_loops, 1);       // 4 edges − 5 vertices + 2 components
  ASSERT_EQ(report.loops.size(), 1u);
  EXPECT_EQ(report.loops[0].joints.size(), 4u);  // A B C D, not the driver
  for (const int j : report.loops[0].joints) EXPECT_NE(j, 4) << "the driver is no edge";
  EXPECT_EQ(report.loops[0].bodies.size(), 4u);  // three bars and the ground
  ASSERT_EQ(report.unconnected_bodies.size(), 1u);
  EXPECT_EQ(report.unconnected_bodies[0], 3);
  // 4 × 2 revolute rows + 1 driver row, independent at this regular configuration; the driven
  // linkage has no freedom left, the free body 3.
  EXPECT_EQ(report.num_rows, 9);
  EXPECT_EQ(report.rank, 9);
  EXPECT_EQ(report.redundant_rows, 0);
  EXPECT_EQ(report.degrees_of_freedom, 3);
  const std::string text = report.Summary(system->model());
  EXPECT_NE(text.find("4 bodies, 4 joints, 2 components, 1 independent loop\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bodies not connected by any joint: free"), std::string::npos) << text;
}

TEST(Topology, PlanarRedundantPinsAreReported) {
  // Two identical pins between the ground and one body: a loop of two joints, 4 rows of rank 2.
  testing::PendulumParams p;
  p.joint_copies = 2;
  const PlanarMultibodySystem system(testing::MakePendulum(p));
  const auto report = AnalyzeTopology(system, 0.0, system.model().InitialPositions());
  EXPECT_EQ(report.num_loops, 1);
  EXPECT_EQ(report.num_rows, 4);
  EXPECT_EQ(report.rank, 2);
  EXPECT_EQ(report.redundant_rows, 2);
  EXPECT_EQ(report.degrees_of_freedom, 1);
}

// The components of a graph from its edges, given in an order that builds long chains: every set
// is found, and its root is its smallest member whatever the order (engine/disjoint_sets.h).
TEST(DisjointSets, ComponentsAndTheirSmallestMemberAsRoot) {
  constexpr int kN = 12;
  DisjointSets sets(kN);
  // Components {0, 3, 6, 9}, {1, 4, 7, 10}, {2, 5, 8, 11}, each united from its largest end.
  for (int i = kN - 1; i >= 3; --i) sets.Unite(i, i - 3);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(sets.Find(i), i % 3) << i;
  sets.Unite(11, 7);  // joins the second and third components under 1
  for (int i = 0; i < kN; ++i) EXPECT_EQ(sets.Find(i), i % 3 == 0 ? 0 : 1) << i;
  sets.Unite(4, 4);  // a loop changes nothing
  EXPECT_EQ(sets.Find(4), 1);
}

}  // namespace
}  // namespace saltus::engine

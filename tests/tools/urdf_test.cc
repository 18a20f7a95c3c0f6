// URDF import (tools/urdf.h): a double pendulum and a small arm with a stop, a damper, a merged
// tool link and collision shapes give exactly the trajectories of their YAML equivalents
// (tests/tools/data/urdf/); `saltus run robot.urdf`; the inertial frame rotation and the initial
// joint positions; a rotated tree gives the model liburdfdom gave; errors naming the URDF element
// and its line.
#include "tools/urdf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"
#include "tools/scene.h"

namespace saltus::tools {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(SALTUS_TEST_DATA_DIR) / "urdf";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class UrdfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() /
               ("saltus_urdf_test_" + std::to_string(getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }

  int Run(const std::vector<std::string>& args, std::string* err = nullptr) {
    std::ostringstream out, errs;
    const int code = RunCli(args, out, errs);
    if (err) *err = errs.str() + out.str();
    return code;
  }

  // Runs both scenes and expects byte-identical trajectory.csv and events.csv: the import gives
  // the same model items, so the same numbers.
  void ExpectIdenticalRuns(const std::string& urdf_scene, const std::string& yaml_scene) {
    std::string err;
    ASSERT_EQ(Run({"run", (kData / urdf_scene).string(), "--out", (scratch_ / "a").string()}, &err),
              0)
        << err;
    ASSERT_EQ(Run({"run", (kData / yaml_scene).string(), "--out", (scratch_ / "b").string()}, &err),
              0)
        << err;
    for (const char* file : {"trajectory.csv", "events.csv"}) {
      const std::string a = ReadFile(scratch_ / "a" / file), b = ReadFile(scratch_ / "b" / file);
      EXPECT_FALSE(a.empty()) << file;
      EXPECT_TRUE(a == b) << file << " differs";
    }
  }

  fs::path scratch_;
};

TEST_F(UrdfTest, DoublePendulumMatchesItsYamlScene) {
  ExpectIdenticalRuns("double_pendulum_urdf.yaml", "double_pendulum_yaml.yaml");
  // 1 s at output_step 0.01: 101 rows; the pendulum swings down from horizontal.
  const std::string trajectory = ReadFile(scratch_ / "a" / "trajectory.csv");
  EXPECT_EQ(std::count(trajectory.begin(), trajectory.end(), '\n'), 102);
}

// The forearm falls onto its upper stop (1.2 rad): impacts on the row "elbow.upper" in both.
TEST_F(UrdfTest, SmallArmWithStopDamperAndToolMatchesItsYamlScene) {
  ExpectIdenticalRuns("small_arm_urdf.yaml", "small_arm_yaml.yaml");
  const std::string events = ReadFile(scratch_ / "a" / "events.csv");
  EXPECT_NE(events.find("impact,elbow.upper"), std::string::npos) << events;
}

TEST_F(UrdfTest, ReadsLinksJointsLimitsAndShapes) {
  const UrdfRobot arm = ReadUrdf((kData / "small_arm.urdf").string());
  EXPECT_EQ(arm.name, "small_arm");
  ASSERT_EQ(arm.bodies.size(), 2u);  // base_link is the ground, tool0 merged into forearm
  ASSERT_EQ(arm.joints.size(), 2u);
  EXPECT_EQ(arm.joints[1].body_a, 0);
  ASSERT_EQ(arm.limits.size(), 1u);
  EXPECT_EQ(arm.limits[0].lower, -0.5);
  EXPECT_EQ(arm.limits[0].upper, 1.2);
  ASSERT_EQ(arm.dampers.size(), 1u);
  EXPECT_EQ(arm.dampers[0].damping, 0.05);
  ASSERT_EQ(arm.shapes.size(), 3u);
  EXPECT_EQ(arm.shape_bodies, std::vector<int>({engine::kGround, 0, 1}));
  EXPECT_EQ(arm.shapes[2].name(), "tool0");
  EXPECT_TRUE(arm.shapes[2].pose().translation().isApprox(Eigen::Vector3d(0.4, 0, 0)));
  // Shapes of joined links: base–upper arm (shoulder), upper arm–tool (elbow).
  EXPECT_EQ(arm.adjacent_shapes, (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}}));
}

// Initial joint positions by forward kinematics: the shoulder turned by 0.3 rad about z and the
// elbow by 0.4 rad about y put the forearm's frame at the elbow, rotated by Rz(0.3) Ry(0.4).
TEST_F(UrdfTest, JointPositionsPlaceTheLinks) {
  const UrdfRobot arm =
      ReadUrdf((kData / "small_arm.urdf").string(), {{"shoulder", 0.3}, {"elbow", 0.4}});
  const Eigen::Vector4d Q = arm.bodies[1].quaternion;
  const Eigen::Matrix3d R = Eigen::Quaterniond(Q[0], Q[1], Q[2], Q[3]).toRotationMatrix();
  const Eigen::Matrix3d expected = (Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()) *
                                    Eigen::AngleAxisd(0.4, Eigen::Vector3d::UnitY()))
                                       .toRotationMatrix();
  EXPECT_LT((R - expected).norm(), 1e-15);  // round-off of two rotations
  EXPECT_LT((arm.bodies[1].position - Eigen::Vector3d(0, 0, 0.6)).norm(), 1e-15);
  EXPECT_THROW(ReadUrdf((kData / "small_arm.urdf").string(), {{"knee", 1.0}}), SceneError);
}

// An inertial frame rotated by rpy = (0, π/2, 0): the inertia about the link axes is R I Rᵀ,
// i.e. Ixx and Izz swap.
TEST_F(UrdfTest, InertialOriginRotatesTheInertia) {
  std::ofstream(scratch_ / "rot.urdf") << R"(<robot name="r"><link name="base"/>
    <link name="bar"><inertial><origin xyz="0.1 0 0" rpy="0 1.5707963267948966 0"/>
      <mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="3"/></inertial></link>
    <joint name="j" type="continuous"><parent link="base"/><child link="bar"/>
      <axis xyz="0 0 1"/></joint></robot>)";
  const UrdfRobot r = ReadUrdf((scratch_ / "rot.urdf").string());
  ASSERT_EQ(r.bodies.size(), 1u);
  const Eigen::Matrix3d I = r.bodies[0].inertia;
  EXPECT_NEAR(I(0, 0), 3, 1e-15);
  EXPECT_NEAR(I(1, 1), 2, 1e-15);
  EXPECT_NEAR(I(2, 2), 1, 1e-15);
  EXPECT_NEAR(I(0, 2), 0, 1e-15);
  EXPECT_EQ(r.bodies[0].com, Eigen::Vector3d(0.1, 0, 0));
}

TEST_F(UrdfTest, RunsARobotFileDirectly) {
  std::string err;
  ASSERT_EQ(
      Run({"run", (kData / "small_arm.urdf").string(), "--out", (scratch_ / "r").string()}, &err),
      0)
      << err;
  const std::string summary = ReadFile(scratch_ / "r" / "summary.json");
  EXPECT_NE(summary.find("\"scene\": \"small_arm\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"t_end\": 1"), std::string::npos) << summary;
}

TEST_F(UrdfTest, ErrorsNameTheUrdfElement) {
  const auto expect_error = [&](const std::string& text, const std::string& message) {
    const fs::path file = scratch_ / "bad.urdf";
    std::ofstream(file) << text;
    std::string err;
    EXPECT_EQ(Run({"run", file.string(), "--out", (scratch_ / "out").string()}, &err),
              kExitBadInput)
        << message;
    EXPECT_NE(err.find(file.string()), std::string::npos) << err;
    EXPECT_NE(err.find(message), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(scratch_ / "out"));
  };
  const std::string link =
      R"(<link name="bar"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>)";
  expect_error("<robot name=\"x\"><link name=\"a\">", "malformed URDF");
  expect_error("<robot name=\"x\"><link name=\"base\"/>" + link +
                   "<joint name=\"free\" type=\"floating\"><parent link=\"base\"/>"
                   "<child link=\"bar\"/></joint></robot>",
               "joint 'free': type floating is not supported");
  expect_error(
      "<robot name=\"x\"><link name=\"base\"/><link name=\"bar\"/>"
      "<joint name=\"hinge\" type=\"continuous\"><parent link=\"base\"/>"
      "<child link=\"bar\"/></joint></robot>",
      "joint 'hinge': its child link 'bar' needs an <inertial>");
  expect_error("<robot name=\"x\"><link name=\"base\"/>" + link +
                   "<joint name=\"hinge\" type=\"revolute\"><parent link=\"base\"/>"
                   "<child link=\"bar\"/><limit lower=\"1\" upper=\"-1\" effort=\"1\" "
                   "velocity=\"1\"/></joint></robot>",
               "joint 'hinge': <limit>: lower must be < upper");
  expect_error(
      "<robot name=\"x\"><link name=\"base\"><collision><geometry><mesh "
      "filename=\"package://x/meshes/none.obj\"/></geometry></collision></link></robot>",
      "link 'base': <collision> 1: mesh 'package://x/meshes/none.obj' not found");
}

// rotated_tree.urdf (rpy on every origin, children out of name order, a merged tool link, stops,
// a damper, contacts with the base) with joint positions, over 1 ms: the positions and
// quaternions of its three bodies are those printed by Saltus at main d8c48d6, which read URDF
// with liburdfdom (the full runs to 1 s, trajectory.csv and events.csv with its 4 events, were
// byte-identical too). Bodies come in the depth-first order of joint names (a_hinge's arm,
// z_slide's slider, then b_pin's pendulum), as liburdfdom orders a link's child joints.
TEST_F(UrdfTest, RotatedTreeGivesTheModelLiburdfdomGave) {
  const fs::path scene = scratch_ / "tree.yaml";
  fs::copy_file(kData / "rotated_tree.urdf", scratch_ / "rotated_tree.urdf");
  std::ofstream(scene) << "scene: tree\ndimension: 3\ninclude: {file: rotated_tree.urdf, "
                          "joint_positions: {a_hinge: 0.3, z_slide: 0.1, b_pin: -0.7}}\n"
                          "simulation: {t_end: 0.001}\n";
  std::string err;
  ASSERT_EQ(Run({"run", scene.string(), "--out", (scratch_ / "o").string()}, &err), 0) << err;
  std::istringstream rows(ReadFile(scratch_ / "o" / "trajectory.csv"));
  std::string header, row, last;
  std::getline(rows, header);
  EXPECT_EQ(header.substr(0, 36), "t,arm.x,arm.y,arm.z,arm.qw,arm.qx,ar");
  while (std::getline(rows, row)) last = row;
  // t and the 3 × 7 positions and quaternions.
  std::size_t end = 0;
  for (int field = 0; field < 22; ++field) end = last.find(',', end) + 1;
  EXPECT_EQ(last.substr(0, end - 1),
            "0.001,-0.5,0.20000000000000001,0.59999999999999998,0.8616499205958843,"
            "-0.14321355804652203,0.11683367432714606,0.47265122836186529,0.81896890114587961,"
            "-0.0059024509252702875,0.59800194100242077,0.98185617286608096,"
            "0.064071347706071174,0.091157549342990724,-0.1534393020242226,0.78709988528428398,"
            "0.024855948672522561,0.4029678755620576,0.98334744325635581,-0.03427079855048195,"
            "0.10602051106179565,-0.14357217502739195")
      << last;
}

// Malformed XML and URDF: the message names the file, the line of the element and the element.
TEST_F(UrdfTest, ErrorsNameTheLine) {
  const auto expect_error = [&](const std::string& text, const std::string& message) {
    const fs::path file = scratch_ / "bad.urdf";
    std::ofstream(file) << text;
    try {
      ReadUrdf(file.string());
      ADD_FAILURE() << "no error for " << text;
    } catch (const SceneError& e) {
      EXPECT_NE(std::string(e.what()).find(file.string() + ":" + message), std::string::npos)
          << e.what();
    }
  };
  const std::string bar =
      "<link name=\"bar\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" "
      "iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n";
  const std::string hinge =
      "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/><child "
      "link=\"bar\"/></joint>\n";
  expect_error("<robot name=\"x\">\n<link name=\"a\">\n</robot>",
               "3: malformed URDF: end tag </robot> does not match <link> (line 2)");
  expect_error("<robot name=\"x\">\n<link name=\"a\" name=\"b\"/></robot>",
               "2: malformed URDF: attribute 'name' repeated in <link>");
  expect_error("<robot name=\"x\">\n\n<link name=\"a&foo;\"/></robot>",
               "3: malformed URDF: unknown entity '&foo;'");
  expect_error("<robot name=\"x\"/>\n<robot name=\"y\"/>",
               "2: malformed URDF: a second element after the root element <robot>");
  expect_error(
      "<robot name=\"x\"><link name=\"base\"/>\n<link name=\"bar\">\n<inertial>"
      "<mass value=\"1x\"/></inertial></link></robot>",
      "3: link 'bar': <inertial>: <mass>: value: '1x' is not a finite number");
  expect_error("<robot name=\"x\"><link name=\"base\"/>\n" + bar + hinge +
                   "<joint name=\"k\" type=\"fixed\"><parent link=\"base\"/><child "
                   "link=\"bar\"/></joint></robot>",
               "4: joint 'k': link 'bar' is already the child of joint 'j'");
  expect_error("<robot name=\"x\"><link name=\"base\"/>\n" + bar + "<link name=\"c\"/></robot>",
               "2: two root links, 'base' and 'bar'");
  // bar and c joined in a loop: one root (base), but neither is reachable from it.
  expect_error("<robot name=\"x\"><link name=\"base\"/>\n" + bar +
                   "<link name=\"c\"/>\n<joint name=\"p\" type=\"fixed\"><parent link=\"bar\"/>"
                   "<child link=\"c\"/></joint>\n<joint name=\"q\" type=\"fixed\"><parent "
                   "link=\"c\"/><child link=\"bar\"/></joint></robot>",
               "2: link 'bar' is not connected to the root link 'base' (its joints form a loop)");
  expect_error("<robot name=\"x\"><link name=\"base\"/>\n" + bar +
                   "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child "
                   "link=\"bar\"/></joint></robot>",
               "3: joint 'j': a revolute joint needs a <limit>");
  expect_error(
      "<robot name=\"x\"><link name=\"base\">\n<collision><geometry>\n<capsule "
      "radius=\"1\" length=\"2\"/></geometry></collision></link></robot>",
      "3: link 'base': <collision> 1: geometry <capsule> is not supported");
  expect_error(
      "<robot name=\"x\"><link name=\"base\">\n<collision><origin xyz=\"1 2\"/>"
      "<geometry><sphere radius=\"1\"/></geometry></collision></link></robot>",
      "2: link 'base': <collision> 1: <origin>: xyz '1 2' has 2 numbers, not 3");
  expect_error("<robot name=\"x\" version=\"2.0\"><link name=\"base\"/></robot>",
               "1: robot 'x': version '2.0' (only 1.0 is read)");
}

// A chain of 50,000 links (each fixed to the previous one, massless, so merged into the root):
// the walk over the tree keeps its pending joints on a heap stack, not the call stack, so a file
// cannot overflow it; the last link's sphere sits at the sum of the 50,000 offsets of 1 mm.
TEST_F(UrdfTest, DeepChainDoesNotExhaustTheStack) {
  constexpr int kLinks = 50'000;
  std::ostringstream text;
  text << "<robot name=\"chain\"><link name=\"l0\"/>\n";
  for (int i = 1; i < kLinks; ++i) {
    text << "<link name=\"l" << i << "\""
         << (i + 1 == kLinks ? "><collision><geometry><sphere "
                               "radius=\"0.1\"/></geometry>"
                               "</collision></link>\n"
                             : "/>\n")
         << "<joint name=\"j" << i << "\" type=\"fixed\"><parent link=\"l" << i - 1
         << "\"/><child link=\"l" << i << "\"/><origin xyz=\"0.001 0 0\"/></joint>\n";
  }
  text << "</robot>\n";
  std::ofstream(scratch_ / "chain.urdf") << text.str();
  const UrdfRobot r = ReadUrdf((scratch_ / "chain.urdf").string());
  EXPECT_TRUE(r.bodies.empty());
  ASSERT_EQ(r.shapes.size(), 1u);
  EXPECT_EQ(r.shape_bodies[0], engine::kGround);
  // 49,999 additions of 0.001: round-off ≤ 49,999 × ulp(50) / 2 ≈ 1.8e-10.
  EXPECT_NEAR(r.shapes[0].pose().translation().x(), 49.999, 1e-9);
}

// A scene that includes the arm at an initial pose and adds a floor; the include's line is the
// place of included items in messages.
TEST_F(UrdfTest, SceneIncludeWithJointPositionsAndAFloor) {
  const fs::path scene = scratch_ / "arm.yaml";
  fs::copy_file(kData / "small_arm.urdf", scratch_ / "small_arm.urdf");
  std::ofstream(scene) << "scene: arm_on_floor\ndimension: 3\n"
                          "include: {file: small_arm.urdf, joint_positions: {elbow: 0.2}}\n"
                          "shapes:\n  - {name: floor, body: ground, type: plane, normal: [0, 0, 1],"
                          " offset: -0.2}\n"
                          "simulation: {t_end: 0.2}\n";
  const Scene s = LoadSceneFile(scene.string());
  ASSERT_EQ(s.spatial.bodies.size(), 2u);
  EXPECT_EQ(s.spatial.limits.size(), 1u);
  EXPECT_EQ(s.spatial.shapes.size(), 4u);
  EXPECT_EQ(s.spatial.body_lines[0], 3);
  std::string err;
  EXPECT_EQ(Run({"run", scene.string(), "--out", (scratch_ / "o").string()}, &err), 0) << err;
  std::ofstream(scene) << "scene: arm\ndimension: 3\ninclude: {file: small_arm.urdf, "
                          "joint_positions: {knee: 1}}\nsimulation: {t_end: 0.2}\n";
  EXPECT_EQ(Run({"run", scene.string(), "--out", (scratch_ / "p").string()}, &err), kExitBadInput);
  EXPECT_NE(err.find("'knee' is not a moving joint"), std::string::npos) << err;
  // Errors that are the include's (no line of the URDF) name the scene's line.
  EXPECT_NE(err.find(scene.string() + ":3: include: "), std::string::npos) << err;
  std::ofstream(scene) << "scene: arm\ndimension: 3\ninclude: {file: no_arm.urdf}\n"
                          "simulation: {t_end: 0.2}\n";
  EXPECT_EQ(Run({"run", scene.string(), "--out", (scratch_ / "q").string()}, &err), kExitBadInput);
  EXPECT_NE(err.find(scene.string() + ":3: include: "), std::string::npos) << err;
  EXPECT_NE(err.find("no_arm.urdf: cannot read the URDF file"), std::string::npos) << err;
}

}  // namespace
}  // namespace saltus::tools

// saltus::PlanarBuilder and saltus::SpatialBuilder (saltus/builder.h): a model built item by item
// in C++ against the same scene read from YAML, run with the same options:
//   planar   examples/friction/friction_oscillator.yaml (prismatic joint, constant-rate driver,
//            spring, two frictional point-line contacts: slip → stick → slip events) and
//            examples/slider_crank_stop.yaml (three revolute joints, a prismatic one, a stop with
//            e = 0.5: impacts);
//   spatial  a hinged arm on a torsional spring whose tip sphere strikes the floor (the global e)
//            and a spinning ball bouncing on the floor through a listed pair with its own e and μ,
//            pushed by a load scaled by a sine (kSpatialScene below).
// Both sides build the same system from the same numbers, so the runs agree to round-off: the
// same event kinds and rows, event times within 1e-12 s and states within 1e-12 (the same
// arithmetic; the margin only absorbs a different order of additions, none is expected). Bad
// items throw InvalidArgument naming the item, and a failed Add leaves the builder usable.
#include "saltus/builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "saltus/saltus.h"

namespace saltus {
namespace {

using Eigen::Vector2d;
using Eigen::Vector3d;

constexpr double kRoundOff = 1e-12;

Model Example(const std::string& file) {
  return Model::FromSceneFile(std::string(SALTUS_EXAMPLES_DIR) + "/" + file);
}

// Runs both models with the scene's options and compares events and the final state.
void ExpectSameRun(const Model& built, const Model& scene, double t_end, int min_events) {
  ASSERT_EQ(built.ConstraintNames(), scene.ConstraintNames());
  ASSERT_EQ(built.nq(), scene.nq());
  EXPECT_LT((built.initial_q() - scene.initial_q()).lpNorm<Eigen::Infinity>(), kRoundOff);
  EXPECT_LT((built.initial_v() - scene.initial_v()).lpNorm<Eigen::Infinity>(), kRoundOff);
  Simulation a(built, scene.default_options());
  Simulation b(scene, scene.default_options());
  RunResult ra, rb;
  const Trajectory ta = a.Run(t_end, &ra);
  const Trajectory tb = b.Run(t_end, &rb);
  ASSERT_TRUE(ra.ok()) << ra.message;
  ASSERT_TRUE(rb.ok()) << rb.message;
  ASSERT_GE(static_cast<int>(tb.events.size()), min_events);
  ASSERT_EQ(ta.events.size(), tb.events.size());
  for (std::size_t k = 0; k < ta.events.size(); ++k) {
    EXPECT_EQ(ta.events[k].kind, tb.events[k].kind) << "event " << k;
    EXPECT_EQ(ta.events[k].rows, tb.events[k].rows) << "event " << k;
    EXPECT_NEAR(ta.events[k].t, tb.events[k].t, kRoundOff) << "event " << k;
  }
  EXPECT_LT((a.q() - b.q()).lpNorm<Eigen::Infinity>(), kRoundOff);
  EXPECT_LT((a.v() - b.v()).lpNorm<Eigen::Infinity>(), kRoundOff);
}

PlanarBody Body(const std::string& name, double mass, double inertia, const Vector3d& q0,
                const Vector3d& v0 = Vector3d::Zero()) {
  PlanarBody b;
  b.name = name;
  b.mass = mass;
  b.inertia = inertia;
  b.q0 = q0;
  b.v0 = v0;
  return b;
}

TEST(PlanarBuilderTest, FrictionOscillatorEqualsTheSceneFile) {
  PlanarBuilder b;
  b.SetGravity({0, -9.81});
  b.AddBody(Body("belt", 10, 1, {0, 0, 0}, {0.2, 0, 0}));
  b.AddBody(Body("block", 1, 0.0041666666666666667, {0, 0.05, 0}));
  b.AddJoint({.name = "guide", .type = "prismatic", .body_b = "belt", .axis_a = {1, 0}});
  TimeProfile drive;
  drive.rate = 0.2;  // constant rate from value0 = 0
  b.AddDriver({.name = "drive", .joint = "guide", .kind = "displacement", .profile = drive});
  b.AddSpring({.name = "spring",
               .body_b = "block",
               .point_a = {-1, 0.05},
               .stiffness = 100,
               .rest_length = 1});
  for (const double side : {-1.0, 1.0}) {
    b.AddContact({.name = side < 0 ? "left_corner" : "right_corner",
                  .type = "point_line",
                  .body_a = "belt",
                  .body_b = "block",
                  .point_b = {0.1 * side, -0.05},
                  .friction = 0.3});
  }
  // 0.5 s: the first slip phase, the stick phase (t₁ = 0.0747 s, t₂ = 0.1827 s) and the cycle.
  ExpectSameRun(b.Build(), Example("friction/friction_oscillator.yaml"), 0.5, 2);
}

TEST(PlanarBuilderTest, SliderCrankWithAStopEqualsTheSceneFile) {
  PlanarBuilder b;
  b.SetGravity({0, -9.81});
  const int crank =
      b.AddBody(Body("crank", 1, 0.0033333333333333333, {0, 0.1, 1.5707963267948966}, {1, 0, -10}));
  b.AddBody(Body("rod", 2, 0.06, {0.282842712474619, 0.1, -0.339836909454122}, {2, 0, 0}));
  b.AddBody(Body("slider", 0.5, 0.001, {0.565685424949238, 0, 0}, {2, 0, 0}));
  // Bodies by index or by name, "ground" for the world.
  b.AddJoint({.name = "crank_pivot", .body_b = crank, .point_b = {-0.1, 0}});
  b.AddJoint({.name = "crank_pin",
              .body_a = "crank",
              .body_b = "rod",
              .point_a = {0.1, 0},
              .point_b = {-0.3, 0}});
  b.AddJoint({.name = "wrist_pin", .body_a = "rod", .body_b = "slider", .point_a = {0.3, 0}});
  b.AddJoint({.name = "slide", .type = "prismatic", .body_b = "slider", .axis_a = {1, 0}});
  b.AddContact({.name = "stop",
                .type = "point_line",
                .body_b = "slider",
                .point_a = {0.75, 0},
                .normal_a = {-1, 0},
                .point_b = {0.05, 0},
                .restitution = 0.5});
  ExpectSameRun(b.Build(), Example("slider_crank_stop.yaml"), 1.0, 1);
}

constexpr const char* kSpatialScene = R"(scene: builder_spatial
dimension: 3
gravity: [0, 0, -9.81]
bodies:
  - {name: arm, mass: 1, inertia: [0.001, 0.06, 0.06], position: [0.4, 0, 0.7]}
  - {name: ball, mass: 0.5, inertia: 0.002, position: [2, 0, 0.5], velocity: [0.5, 0, 0],
     angular_velocity: [0, 10, 0]}
joints:
  - {name: hinge, type: revolute, body_a: ground, body_b: arm, point_a: [0, 0, 0.7],
     point_b: [-0.4, 0, 0], axis_a: [0, 1, 0], axis_b: [0, 1, 0]}
forces:
  - {name: spring, type: torsional_spring, joint: hinge, stiffness: 2, damping: 0.01}
  - {name: push, type: load, body: ball, force: [0, 0.5, 0],
     scale: {profile: sine, amplitude: 1, frequency: 10}}
shapes:
  - {name: floor, body: ground, type: plane, normal: [0, 0, 1]}
  - {name: tip, body: arm, type: sphere, radius: 0.05, position: [0.4, 0, 0]}
  - {name: ball_shape, body: ball, type: sphere, radius: 0.1}
contacts:
  exclude: [[tip, ball_shape]]
  pairs:
    - {shapes: [floor, ball_shape], restitution: 0.6, friction: 0.3}
simulation:
  t_end: 1
  restitution: 0.5
  rtol: 1.0e-9
  atol: 1.0e-11
)";

SpatialBuilder SpatialScene() {
  SpatialBuilder b;
  b.SetGravity({0, 0, -9.81});
  SpatialBody arm;
  arm.name = "arm";
  arm.inertia = Vector3d(0.001, 0.06, 0.06).asDiagonal();
  arm.position = {0.4, 0, 0.7};
  b.AddBody(arm);
  SpatialBody ball;
  ball.name = "ball";
  ball.mass = 0.5;
  ball.inertia = 0.002 * Eigen::Matrix3d::Identity();
  ball.position = {2, 0, 0.5};
  ball.velocity = {0.5, 0, 0};
  ball.angular_velocity = {0, 10, 0};
  b.AddBody(ball);
  b.AddJoint({.name = "hinge",
              .body_b = "arm",
              .point_a = {0, 0, 0.7},
              .point_b = {-0.4, 0, 0},
              .axis_a = Vector3d::UnitY(),
              .axis_b = Vector3d::UnitY()});
  b.AddTorsionalSpring({.name = "spring", .joint = "hinge", .stiffness = 2, .damping = 0.01});
  TimeProfile sine;
  sine.kind = TimeProfile::Kind::kSine;
  sine.amplitude = 1;
  sine.frequency = 10;
  b.AddLoad({.name = "push", .body = "ball", .force = {0, 0.5, 0}, .scale = sine});
  b.AddShape({.name = "floor", .type = "plane", .normal = Vector3d::UnitZ()});
  b.AddShape(
      {.name = "tip", .type = "sphere", .body = "arm", .position = {0.4, 0, 0}, .radius = 0.05});
  b.AddShape({.name = "ball_shape", .type = "sphere", .body = "ball", .radius = 0.1});
  b.ExcludeContact("tip", "ball_shape");
  b.AddContactPair("floor", "ball_shape", 0.6, 0.3);
  return b;
}

TEST(SpatialBuilderTest, ArmAndSpinningBallEqualTheSceneFile) {
  const SpatialBuilder b = SpatialScene();
  std::vector<std::string> pairs = b.ContactPairNames();  // tip-ball_shape is excluded
  std::sort(pairs.begin(), pairs.end());
  EXPECT_EQ(pairs, (std::vector<std::string>{"floor-ball_shape", "floor-tip"}));
  const Model scene = Model::FromSceneText(kSpatialScene, "builder_spatial");
  // The tip strikes the floor (global e = 0.5) and the ball bounces with its pair's e and μ.
  ExpectSameRun(b.Build(), scene, 1.0, 3);
}

TEST(BuilderTest, BadItemsThrowNamingThemAndLeaveTheBuilderUsable) {
  PlanarBuilder p;
  const auto throws = [](auto&& fn, const std::string& what) {
    try {
      fn();
      ADD_FAILURE() << "no exception; expected " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  throws([&] { p.AddBody(Body("a", -1, 1, Vector3d::Zero())); }, "body 'a'");
  p.AddBody(Body("a", 1, 1, {0, 1, 0}));
  throws([&] { p.AddJoint({.name = "j", .body_b = "nope"}); }, "joint 'j': unknown body 'nope'");
  throws([&] { p.AddJoint({.name = "j", .body_b = 3}); }, "joint 'j': body index 3 out of range");
  throws([&] { p.AddJoint({.name = "j", .type = "hinge", .body_b = "a"}); },
         "joint 'j': unknown type 'hinge'");
  throws([&] { p.AddDriver({.name = "d", .joint = "j"}); }, "driver 'd': unknown joint 'j'");
  throws([&] { p.AddContact({.name = "c", .type = "disk", .body_b = "a"}); },
         "contact 'c': unknown type 'disk'");
  p.AddContact({.name = "c", .body_b = "a", .radius_b = 0.1});
  throws([&] { p.AddContact({.name = "c", .body_b = "a", .radius_b = 0.1}); }, "already used");
  TimeProfile empty;
  empty.kind = TimeProfile::Kind::kPolynomial;
  p.AddJoint({.name = "pin", .body_b = "a", .point_a = {0, 1}});
  throws([&] { p.AddDriver({.name = "d", .joint = "pin", .profile = empty}); },
         "driver 'd': a polynomial profile needs coefficients");
  EXPECT_EQ(p.Build().ConstraintNames().size(), 3u);  // pin.x, pin.y, c
  const PlanarBuilder moved = std::move(p);
  EXPECT_EQ(moved.Build().ConstraintNames().size(), 3u);
  EXPECT_THROW(p.Build(), InvalidArgument);  // NOLINT(bugprone-use-after-move): empty, no bodies

  SpatialBuilder s;
  s.AddBody(SpatialBody{.name = "b", .position = {0, 0, 1}});
  throws([&] { s.AddShape({.name = "s", .type = "cone", .body = "b"}); }, "unknown type 'cone'");
  throws([&] { s.AddShape({.name = "s", .type = "sphere", .body = "b"}); }, "needs 'radius'");
  throws(
      [&] {
        s.AddShape({.name = "s",
                    .type = "sphere",
                    .body = "b",
                    .radius = 1,
                    .half_size = Vector3d::Ones()});
      },
      "'half_size' is not a parameter of a sphere");
  throws(
      [&] {
        s.AddShape({.name = "s", .type = "sphere", .quaternion = {2, 0, 0, 0}, .radius = 1});
      },
      "shape 's': quaternion");
  s.AddShape({.name = "ball", .type = "sphere", .body = "b", .radius = 0.1});
  s.AddShape({.name = "floor", .type = "plane"});
  throws([&] { s.AddContactPair("floor", "ball", 1.5); }, "contact pair 'ball-floor': restitution");
  throws([&] { s.AddContactPair("floor", "ball", 0.5, -1.0); }, "friction must be a finite");
  throws([&] { s.AddContactPair("floor", "floor"); }, "cannot touch itself");
  throws([&] { s.SetContactDefault("some"); }, "default must be 'all'");
  s.AddContactPair("floor", "ball", 0.5, 0.2);
  EXPECT_EQ(s.Build().ConstraintNames(),
            (std::vector<std::string>{"floor-ball", "floor-ball.t1", "floor-ball.t2"}));
}

TEST(SpatialBuilder, ResistanceKeysGiveTheRollingAndSpinningRowsOfTheSceneFile) {
  // As the scene keys (docs/friction.md): a pair's own value wins, SetResistance's goes to the
  // pairs with a sphere; rows "<row>.r1", "<row>.r2", "<row>.s" after the tangential rows.
  SpatialBuilder s;
  s.AddBody(SpatialBody{.name = "b", .position = {0, 0, 1}});
  s.AddBody(SpatialBody{.name = "k", .position = {2, 0, 1}});
  s.AddShape({.name = "ball", .type = "sphere", .body = "b", .radius = 0.1});
  s.AddShape(
      {.name = "crate", .type = "box", .body = "k", .half_size = Eigen::Vector3d(0.1, 0.1, 0.1)});
  s.AddShape({.name = "floor", .type = "plane"});
  const auto throws = [](const auto& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no exception, expected: " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  throws([&] { s.AddContactPair("floor", "ball", 0.0, 0.5, -0.01); },
         "contact pair 'ball-floor': rolling_friction must be a finite number >= 0");
  throws([&] { s.AddContactPair("floor", "ball", 0.0, 0.5, 0.01, NAN); },
         "spinning_friction must be a finite number >= 0");
  throws([&] { s.AddContactPair("floor", "crate", 0.0, 0.5, 0.01); },
         "apply to pairs with a sphere on one side");
  throws([&] { s.SetResistance(-1.0, 0.0); }, "rolling_friction must be a finite number >= 0");
  s.SetFriction(0.5);
  s.SetResistance(0.01, 0.0);  // floor-crate gets none: no sphere
  s.AddContactPair("floor", "ball", std::nullopt, std::nullopt, std::nullopt, 0.002);
  const std::vector<std::string> names = s.Build().ConstraintNames();
  for (const char* row : {"floor-ball.r1", "floor-ball.r2", "floor-ball.s"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), row), names.end()) << row;
  }
  EXPECT_EQ(std::count_if(names.begin(), names.end(),
                          [](const std::string& n) { return n.find(".r1") != std::string::npos; }),
            2);  // floor-ball and crate-ball (a sphere on one side); floor-crate none
}

}  // namespace
}  // namespace saltus
